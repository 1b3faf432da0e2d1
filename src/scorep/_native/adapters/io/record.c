/* One recorded I/O call: its region, the event sections around the real call, and the
 * translation of POSIX flags into the core's (Score-P's) I/O flags. */
#include "adapters/io/io_adapter.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

atomic_bool spio_recording;

static const struct {
    const char *name;
    sp_role role;
} functions[SPIO_FN_COUNT] = {
#define SPIO_INFO(e, region, symbol, role, events, count) [SPIO_FN_##e] = {region, role},
    SPIO_FUNCTIONS(SPIO_INFO)
#undef SPIO_INFO
};

/* generation << 32 | region per function: defined once per measurement. Global because
 * the wrappers carry no context; each entry is written whole (atomically). */
static _Atomic uint64_t region_cache[SPIO_FN_COUNT];

static uint32_t region_of(int fn, uint32_t generation)
{
    uint64_t cached = atomic_load_explicit(&region_cache[fn], memory_order_relaxed);
    if ((uint32_t)(cached >> 32) == generation)
        return (uint32_t)cached;
    uint32_t region = sp_region_define_paradigm(functions[fn].name, SP_PARADIGM_IO,
                                                functions[fn].role, SP_REGION_IO);
    atomic_store(&region_cache[fn], (uint64_t)generation << 32 | region);
    return region;
}

bool spio_begin(spio_call *call, int fn)
{
    if (!atomic_load_explicit(&spio_recording, memory_order_relaxed) || sp_thread.busy)
        return false;
    int saved = errno;
    if (atomic_load_explicit(&sp_got_objects_pending, memory_order_relaxed))
        sp_got_patch_new_objects();
    uint64_t time = spio_now();
    sp_location *loc = sp_event_section_begin();
    if (!loc) {
        errno = saved;
        return false;
    }
    /* Whatever recording does (definitions, a trace buffer spill) is not recorded. */
    sp_measurement_quiet_begin();
    call->generation = sp_measurement_generation();
    call->region = region_of(fn, call->generation);
    call->loc = loc;
    call->saved_errno = saved;
    if (call->region != SP_NO_ID)
        sp_enter(loc, call->region, SP_KEY_NAMED | call->region, time);
    return true;
}

void spio_pause(spio_call *call)
{
    sp_measurement_quiet_end();
    sp_event_section_end(call->loc);
    errno = call->saved_errno;
}

bool spio_resume(spio_call *call)
{
    int saved = errno;
    call->saved_errno = saved;
    sp_location *loc = sp_event_section_begin();
    if (!loc)
        return false;
    if (loc != call->loc || sp_measurement_generation() != call->generation) {
        sp_event_section_end(loc);
        return false;
    }
    sp_measurement_quiet_begin();
    return true;
}

void spio_end(spio_call *call)
{
    if (call->region != SP_NO_ID)
        sp_leave(call->loc, SP_KEY_NAMED | call->region, spio_now());
    sp_measurement_quiet_end();
    sp_event_section_end(call->loc);
    errno = call->saved_errno;
}

void spio_abandon(spio_call *call, int saved_errno)
{
    (void)call;
    errno = saved_errno;
}

/* ---- flags --------------------------------------------------------------------------------- */

sp_io_access_mode spio_access_mode(int flags)
{
    switch (flags & O_ACCMODE) {
    case O_WRONLY: return SP_IO_ACCESS_WRITE_ONLY;
    case O_RDWR: return SP_IO_ACCESS_READ_WRITE;
    default: return SP_IO_ACCESS_READ_ONLY;
    }
}

void spio_open_flags(int flags, uint32_t *creation, uint32_t *status)
{
    uint32_t c = 0, s = 0;
    if (flags & O_CREAT)
        c |= SP_IO_CREATION_CREATE;
    if (flags & O_TRUNC)
        c |= SP_IO_CREATION_TRUNCATE;
    if (flags & O_DIRECTORY)
        c |= SP_IO_CREATION_DIRECTORY;
    if (flags & O_EXCL)
        c |= SP_IO_CREATION_EXCLUSIVE;
    if (flags & O_NOCTTY)
        c |= SP_IO_CREATION_NO_CONTROLLING_TERMINAL;
    if (flags & O_NOFOLLOW)
        c |= SP_IO_CREATION_NO_FOLLOW;
#ifdef O_PATH
    if ((flags & O_PATH) == O_PATH)
        c |= SP_IO_CREATION_PATH;
#endif
#ifdef O_TMPFILE
    if ((flags & O_TMPFILE) == O_TMPFILE)
        c |= SP_IO_CREATION_TEMPORARY_FILE;
#endif
#ifdef O_LARGEFILE
    if (flags & O_LARGEFILE)
        c |= SP_IO_CREATION_LARGEFILE;
#endif
    if (flags & O_APPEND)
        s |= SP_IO_STATUS_APPEND;
    if (flags & O_ASYNC)
        s |= SP_IO_STATUS_ASYNC;
    if (flags & O_CLOEXEC)
        s |= SP_IO_STATUS_CLOSE_ON_EXEC;
#ifdef O_DIRECT
    if (flags & O_DIRECT)
        s |= SP_IO_STATUS_AVOID_CACHING;
#endif
    if ((flags & O_SYNC) == O_SYNC)
        s |= SP_IO_STATUS_SYNC;
    else if (flags & O_DSYNC)
        s |= SP_IO_STATUS_DATA_SYNC;
#ifdef O_NOATIME
    if (flags & O_NOATIME)
        s |= SP_IO_STATUS_NO_ACCESS_TIME;
#endif
    if (flags & O_NONBLOCK)
        s |= SP_IO_STATUS_NON_BLOCKING;
    if (creation)
        *creation = c;
    if (status)
        *status = s;
}

bool spio_fd_state(int fd, sp_io_access_mode *mode, uint32_t *status)
{
    /* The real fcntl: this runs inside a wrapper or before anything is patched. */
    int (*real_fcntl)(int, int, ...) = SPIO_REAL(FCNTL, int (*)(int, int, ...));
    int flags = real_fcntl(fd, F_GETFL);
    if (flags == -1)
        return false;
    spio_open_flags(flags, NULL, status);
    int fd_flags = real_fcntl(fd, F_GETFD);
    if (fd_flags != -1 && (fd_flags & FD_CLOEXEC))
        *status |= SP_IO_STATUS_CLOSE_ON_EXEC;
    *mode = spio_access_mode(flags);
    return true;
}

sp_io_access_mode spio_stream_mode(const char *mode)
{
    if (!mode || !mode[0])
        return SP_IO_ACCESS_READ_ONLY;
    if (strchr(mode, '+'))
        return SP_IO_ACCESS_READ_WRITE;
    return mode[0] == 'r' ? SP_IO_ACCESS_READ_ONLY : SP_IO_ACCESS_WRITE_ONLY;
}

sp_io_seek_whence spio_whence(int whence)
{
    switch (whence) {
    case SEEK_CUR: return SP_IO_SEEK_FROM_CURRENT;
    case SEEK_END: return SP_IO_SEEK_FROM_END;
#ifdef SEEK_DATA
    case SEEK_DATA: return SP_IO_SEEK_DATA;
#endif
#ifdef SEEK_HOLE
    case SEEK_HOLE: return SP_IO_SEEK_HOLE;
#endif
    default: return SP_IO_SEEK_FROM_START;
    }
}

/* ---- operations: the begin before the call, the completion after it ------------------------- */

bool spio_operation_begin(spio_operation *op, int fn, sp_io_paradigm paradigm, uint64_t native,
                          sp_io_mode mode, uint64_t bytes, uint64_t matching)
{
    if (!spio_begin(&op->call, fn))
        return false;
    op->paradigm = paradigm;
    op->mode = mode;
    op->matching = matching;
    op->handle = native == UINT64_MAX ? spio_flush_all_handle : sp_io_handle_lookup(paradigm, native);
    if (op->handle != SP_NO_ID)
        sp_io_operation_begin(op->call.loc, spio_now(), paradigm, op->handle, mode, 0, bytes,
                              matching);
    spio_pause(&op->call);
    return true;
}

void spio_operation_end(spio_operation *op, uint64_t bytes)
{
    if (!spio_resume(&op->call))
        return;
    if (op->handle != SP_NO_ID)
        sp_io_operation_complete(op->call.loc, spio_now(), op->paradigm, op->handle, op->mode,
                                 bytes, op->matching);
    spio_end(&op->call);
}

