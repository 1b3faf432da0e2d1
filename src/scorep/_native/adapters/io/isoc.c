/* Wrappers of the ISO C stream functions: FILE streams as handles of paradigm ISO C. A
 * stream's descriptor gets a POSIX handle too (its parent is the stream's handle), as in
 * Score-P: libc opens and closes it internally, where no wrapper sees it. */
#include "adapters/io/io_adapter.h"

#include <errno.h>
#include <stdio.h>
#include <sys/types.h>

#define ISOC SP_IO_PARADIGM_ISOC
#define POSIX SP_IO_PARADIGM_POSIX

static uint64_t key_of(FILE *stream)
{
    return (uint64_t)(uintptr_t)stream;
}

/* The stream's descriptor as a POSIX handle of `file`, unless it is one already (fdopen). */
static void stream_descriptor(spio_call *c, FILE *stream, uint32_t file, sp_io_access_mode mode)
{
    int fd = fileno(stream);
    if (fd < 0 || sp_io_handle_lookup(POSIX, (uint64_t)fd) != SP_NO_ID)
        return;
    uint32_t handle = sp_io_handle_begin(c->loc, POSIX, "", SP_NO_ID, 0);
    sp_io_handle_complete(c->loc, handle, file, (uint64_t)fd);
    if (handle != SP_NO_ID)
        sp_io_create_handle(c->loc, spio_now(), POSIX, handle, mode, 0, 0);
}

static FILE *open_stream(int fn, const char *path, const char *mode)
{
    FILE *(*real)(const char *, const char *) = (FILE * (*)(const char *, const char *)) spio_real[fn];
    spio_call c;
    if (!spio_begin(&c, fn))
        return real(path, mode);
    uint32_t handle = sp_io_handle_begin(c.loc, ISOC, "", SP_NO_ID, 0);
    spio_pause(&c);
    FILE *stream = real(path, mode);
    if (!spio_resume(&c))
        return stream;
    if (stream && handle != SP_NO_ID) {
        sp_io_access_mode access = spio_stream_mode(mode);
        uint32_t file = sp_io_file_define(path);
        /* Made while the stream's handle is being created: it becomes the parent. */
        stream_descriptor(&c, stream, file, access);
        sp_io_handle_complete(c.loc, handle, file, key_of(stream));
        sp_io_create_handle(c.loc, spio_now(), ISOC, handle, access, 0, 0);
    } else {
        sp_io_handle_drop(c.loc, handle);
    }
    spio_end(&c);
    return stream;
}

/* Same-shape I/O wrappers, the family named in posix.c: one per ISO C function, each the
 * same steps (begin the operation, the real call, end it with what moved). */
static FILE *w_fopen(const char *path, const char *mode)
{
    return open_stream(SPIO_FN_FOPEN, path, mode);
}

static FILE *w_fopen64(const char *path, const char *mode)
{
    return open_stream(SPIO_FN_FOPEN64, path, mode);
}

static FILE *w_fdopen(int fd, const char *mode)
{
    FILE *(*real)(int, const char *) = SPIO_REAL(FDOPEN, FILE * (*)(int, const char *));
    spio_call c;
    if (!spio_begin(&c, SPIO_FN_FDOPEN))
        return real(fd, mode);
    uint32_t fd_handle = sp_io_handle_lookup(POSIX, (uint64_t)fd);
    uint32_t handle = sp_io_handle_begin(c.loc, ISOC, "", SP_NO_ID, 0);
    spio_pause(&c);
    FILE *stream = real(fd, mode);
    if (!spio_resume(&c))
        return stream;
    /* As Score-P: a stream over a descriptor the measurement does not know (a pipe, a
     * socket) gets no handle. */
    if (stream && fd_handle != SP_NO_ID && handle != SP_NO_ID) {
        sp_io_handle_complete(c.loc, handle, sp_io_handle_file(fd_handle), key_of(stream));
        sp_io_create_handle(c.loc, spio_now(), ISOC, handle, spio_stream_mode(mode), 0, 0);
    } else {
        sp_io_handle_drop(c.loc, handle);
    }
    spio_end(&c);
    return stream;
}

static int w_fclose(FILE *stream)
{
    int (*real)(FILE *) = SPIO_REAL(FCLOSE, int (*)(FILE *));
    spio_call c;
    if (!spio_begin(&c, SPIO_FN_FCLOSE))
        return real(stream);
    uint32_t handle = sp_io_handle_unbind(ISOC, key_of(stream));
    uint32_t fd_handle = SP_NO_ID;
    if (handle != SP_NO_ID) {
        int fd = fileno(stream);
        if (fd >= 0)
            fd_handle = sp_io_handle_unbind(POSIX, (uint64_t)fd);
    }
    spio_pause(&c);
    int r = real(stream);
    if (!spio_resume(&c))
        return r;
    /* glibc releases the stream and its descriptor whatever fclose returns: both handles
     * end. */
    uint64_t now = spio_now();
    if (fd_handle != SP_NO_ID)
        sp_io_destroy_handle(c.loc, now, POSIX, fd_handle);
    if (handle != SP_NO_ID)
        sp_io_destroy_handle(c.loc, now, ISOC, handle);
    spio_end(&c);
    return r;
}

static size_t w_fread(void *ptr, size_t size, size_t count, FILE *stream)
{
    size_t (*real)(void *, size_t, size_t, FILE *) =
        SPIO_REAL(FREAD, size_t(*)(void *, size_t, size_t, FILE *));
    spio_operation op;
    if (!spio_operation_begin(&op, SPIO_FN_FREAD, ISOC, key_of(stream), SP_IO_MODE_READ,
                              (uint64_t)size * count, SPIO_MATCHING_ISOC))
        return real(ptr, size, count, stream);
    size_t r = real(ptr, size, count, stream);
    spio_operation_end(&op, (uint64_t)r * size);
    return r;
}

static size_t w_fwrite(const void *ptr, size_t size, size_t count, FILE *stream)
{
    size_t (*real)(const void *, size_t, size_t, FILE *) =
        SPIO_REAL(FWRITE, size_t(*)(const void *, size_t, size_t, FILE *));
    spio_operation op;
    if (!spio_operation_begin(&op, SPIO_FN_FWRITE, ISOC, key_of(stream), SP_IO_MODE_WRITE,
                              (uint64_t)size * count, SPIO_MATCHING_ISOC))
        return real(ptr, size, count, stream);
    size_t r = real(ptr, size, count, stream);
    spio_operation_end(&op, (uint64_t)r * size);
    return r;
}

static int w_fflush(FILE *stream)
{
    int (*real)(FILE *) = SPIO_REAL(FFLUSH, int (*)(FILE *));
    spio_operation op;
    /* fflush(NULL) flushes every output stream: Score-P's handle that stands for all. */
    if (!spio_operation_begin(&op, SPIO_FN_FFLUSH, ISOC, stream ? key_of(stream) : UINT64_MAX,
                              SP_IO_MODE_FLUSH, SP_IO_UNKNOWN_BYTES, SPIO_MATCHING_ISOC))
        return real(stream);
    int r = real(stream);
    spio_operation_end(&op, SP_IO_UNKNOWN_BYTES);
    return r;
}

/* fseek, fseeko, fseeko64: the resulting position is the stream's after the call. */
static int seek_stream(int fn, FILE *stream, int64_t offset, int whence)
{
    spio_call c;
    int (*real_long)(FILE *, long, int) = (int (*)(FILE *, long, int))spio_real[fn];
    int (*real_off)(FILE *, off64_t, int) = (int (*)(FILE *, off64_t, int))spio_real[fn];
    bool is_long = fn == SPIO_FN_FSEEK;
#define REAL_SEEK() (is_long ? real_long(stream, (long)offset, whence) \
                             : real_off(stream, (off64_t)offset, whence))
    if (!spio_begin(&c, fn))
        return REAL_SEEK();
    uint32_t handle = sp_io_handle_lookup(ISOC, key_of(stream));
    spio_pause(&c);
    int r = REAL_SEEK();
#undef REAL_SEEK
    if (!spio_resume(&c))
        return r;
    if (handle != SP_NO_ID) {
        uint64_t position = r == 0 ? (uint64_t)ftello64(stream) : SP_IO_UNKNOWN_BYTES;
        sp_io_seek(c.loc, spio_now(), ISOC, handle, offset, spio_whence(whence), position);
    }
    spio_end(&c);
    return r;
}

static int w_fseek(FILE *stream, long offset, int whence)
{
    return seek_stream(SPIO_FN_FSEEK, stream, offset, whence);
}

static int w_fseeko(FILE *stream, off_t offset, int whence)
{
    return seek_stream(SPIO_FN_FSEEKO, stream, offset, whence);
}

static int w_fseeko64(FILE *stream, off64_t offset, int whence)
{
    return seek_stream(SPIO_FN_FSEEKO64, stream, offset, whence);
}

void *const spio_isoc_wrappers[SPIO_FN_COUNT] = {
    [SPIO_FN_FOPEN] = (void *)w_fopen,
    [SPIO_FN_FOPEN64] = (void *)w_fopen64,
    [SPIO_FN_FDOPEN] = (void *)w_fdopen,
    [SPIO_FN_FCLOSE] = (void *)w_fclose,
    [SPIO_FN_FREAD] = (void *)w_fread,
    [SPIO_FN_FWRITE] = (void *)w_fwrite,
    [SPIO_FN_FFLUSH] = (void *)w_fflush,
    [SPIO_FN_FSEEK] = (void *)w_fseek,
    [SPIO_FN_FSEEKO] = (void *)w_fseeko,
    [SPIO_FN_FSEEKO64] = (void *)w_fseeko64,
};
