/* What the I/O adapter's files share. The adapter records POSIX I/O (file descriptors) and
 * ISO C I/O (FILE streams) calls of the whole process as Score-P's POSIX I/O adapter does:
 * each call is a region named after the libc function (paradigm io), with Score-P's I/O
 * events on the handles it creates, uses and destroys (core/io.h, core/events.h).
 *
 * How calls reach the wrappers: the core library is loaded with dlopen, so defining `write`
 * here would intercept nothing. Instead, while I/O is recorded, the global offset table
 * entries through which every loaded object (the interpreter, extension modules, C
 * libraries) calls these libc functions point at the wrappers (the core's core/got.h);
 * objects loaded later are patched when they load (dlopen) or before their first use. When
 * the measurement ends every entry gets its original value back. With I/O recording off nothing is patched and
 * nothing costs anything. The tool's own libraries and libc itself are never patched, so
 * the measurement's own files are never recorded. */
#ifndef SCOREP_ADAPTERS_IO_H
#define SCOREP_ADAPTERS_IO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/events.h"
#include "core/got.h"
#include "core/io.h"
#include "core/measurement.h"

#define SPIO_HIDDEN __attribute__((visibility("hidden")))

/* ---- the functions recorded: one region each ------------------------------------------- */

#define SPIO_FUNCTIONS(X)                                                                     \
    /* enum, region name, symbol, role, the I/O events a call writes and how many             \
     * (sp_io_call_class: scorep-score counts them; fcntl duplicates with F_DUPFD and         \
     * F_DUPFD_CLOEXEC only, counted as if every call did: CPython's os.dup calls it) */      \
    X(OPEN, "open", "open", SP_ROLE_FILE_IO_METADATA, CREATE, 1)                              \
    X(OPEN64, "open64", "open64", SP_ROLE_FILE_IO_METADATA, CREATE, 1)                        \
    X(OPEN_2, "open", "__open_2", SP_ROLE_FILE_IO_METADATA, CREATE, 1)                        \
    X(OPEN64_2, "open64", "__open64_2", SP_ROLE_FILE_IO_METADATA, CREATE, 1)                  \
    X(OPENAT, "openat", "openat", SP_ROLE_FILE_IO_METADATA, CREATE, 1)                        \
    X(OPENAT64, "openat64", "openat64", SP_ROLE_FILE_IO_METADATA, CREATE, 1)                  \
    X(OPENAT_2, "openat", "__openat_2", SP_ROLE_FILE_IO_METADATA, CREATE, 1)                  \
    X(OPENAT64_2, "openat64", "__openat64_2", SP_ROLE_FILE_IO_METADATA, CREATE, 1)            \
    X(CREAT, "creat", "creat", SP_ROLE_FILE_IO_METADATA, CREATE, 1)                           \
    X(CREAT64, "creat64", "creat64", SP_ROLE_FILE_IO_METADATA, CREATE, 1)                     \
    X(CLOSE, "close", "close", SP_ROLE_FILE_IO_METADATA, DESTROY, 1)                          \
    X(READ, "read", "read", SP_ROLE_FILE_IO, TRANSFER, 1)                                     \
    X(WRITE, "write", "write", SP_ROLE_FILE_IO, TRANSFER, 1)                                  \
    X(PREAD, "pread", "pread", SP_ROLE_FILE_IO, TRANSFER, 1)                                  \
    X(PREAD64, "pread64", "pread64", SP_ROLE_FILE_IO, TRANSFER, 1)                            \
    X(PWRITE, "pwrite", "pwrite", SP_ROLE_FILE_IO, TRANSFER, 1)                               \
    X(PWRITE64, "pwrite64", "pwrite64", SP_ROLE_FILE_IO, TRANSFER, 1)                         \
    X(READV, "readv", "readv", SP_ROLE_FILE_IO, TRANSFER, 1)                                  \
    X(WRITEV, "writev", "writev", SP_ROLE_FILE_IO, TRANSFER, 1)                               \
    X(PREADV, "preadv", "preadv", SP_ROLE_FILE_IO, TRANSFER, 1)                               \
    X(PREADV64, "preadv64", "preadv64", SP_ROLE_FILE_IO, TRANSFER, 1)                         \
    X(PWRITEV, "pwritev", "pwritev", SP_ROLE_FILE_IO, TRANSFER, 1)                            \
    X(PWRITEV64, "pwritev64", "pwritev64", SP_ROLE_FILE_IO, TRANSFER, 1)                      \
    X(LSEEK, "lseek", "lseek", SP_ROLE_FILE_IO_METADATA, SEEK, 1)                             \
    X(LSEEK64, "lseek64", "lseek64", SP_ROLE_FILE_IO_METADATA, SEEK, 1)                       \
    X(FSYNC, "fsync", "fsync", SP_ROLE_FILE_IO, FLUSH, 1)                                     \
    X(FDATASYNC, "fdatasync", "fdatasync", SP_ROLE_FILE_IO, FLUSH, 1)                         \
    X(DUP, "dup", "dup", SP_ROLE_FILE_IO_METADATA, DUPLICATE, 1)                              \
    X(DUP2, "dup2", "dup2", SP_ROLE_FILE_IO_METADATA, DUPLICATE, 1)                           \
    X(DUP3, "dup3", "dup3", SP_ROLE_FILE_IO_METADATA, DUPLICATE, 1)                           \
    X(FCNTL, "fcntl", "fcntl", SP_ROLE_FILE_IO_METADATA, DUPLICATE, 1)                        \
    X(FCNTL64, "fcntl64", "fcntl64", SP_ROLE_FILE_IO_METADATA, DUPLICATE, 1)                  \
    X(FOPEN, "fopen", "fopen", SP_ROLE_FILE_IO_METADATA, CREATE, 2)                           \
    X(FOPEN64, "fopen64", "fopen64", SP_ROLE_FILE_IO_METADATA, CREATE, 2)                     \
    X(FDOPEN, "fdopen", "fdopen", SP_ROLE_FILE_IO_METADATA, CREATE, 1)                        \
    X(FCLOSE, "fclose", "fclose", SP_ROLE_FILE_IO_METADATA, DESTROY, 2)                       \
    X(FREAD, "fread", "fread", SP_ROLE_FILE_IO, TRANSFER, 1)                                  \
    X(FWRITE, "fwrite", "fwrite", SP_ROLE_FILE_IO, TRANSFER, 1)                               \
    X(FSEEK, "fseek", "fseek", SP_ROLE_FILE_IO_METADATA, SEEK, 1)                             \
    X(FSEEKO, "fseeko", "fseeko", SP_ROLE_FILE_IO_METADATA, SEEK, 1)                          \
    X(FSEEKO64, "fseeko64", "fseeko64", SP_ROLE_FILE_IO_METADATA, SEEK, 1)                    \
    X(FFLUSH, "fflush", "fflush", SP_ROLE_FILE_IO, FLUSH, 1)

enum {
#define SPIO_ENUM(e, region, symbol, role, events, count) SPIO_FN_##e,
    SPIO_FUNCTIONS(SPIO_ENUM)
#undef SPIO_ENUM
    SPIO_FN_COUNT
};

/* Each function's wrapper (posix.c and isoc.c fill in theirs) and the libc function it
 * calls (resolved by sp_got_add before anything is patched). */
extern void *const spio_posix_wrappers[SPIO_FN_COUNT] SPIO_HIDDEN;
extern void *const spio_isoc_wrappers[SPIO_FN_COUNT] SPIO_HIDDEN;
extern void *spio_real[SPIO_FN_COUNT] SPIO_HIDDEN;

#define SPIO_REAL(fn, type) ((type)spio_real[SPIO_FN_##fn])

/* Matching ids of blocking operations, as Score-P uses them. */
#define SPIO_MATCHING_POSIX 1
#define SPIO_MATCHING_ISOC 2

/* ---- one recorded call (record.c) --------------------------------------------------------- */

/* While I/O is recorded (the wrappers are in place and the measurement runs). Global
 * because the wrappers are reached from arbitrary code without any context. */
extern atomic_bool spio_recording SPIO_HIDDEN;

typedef struct {
    sp_location *loc;
    uint32_t region;
    uint32_t generation;
    int saved_errno;
} spio_call;

/* The call's enter (and the section the events before the call need): false when this
 * call is not recorded (recording off, a thread without a location, the tool's own work,
 * a call made while recording another one), then nothing else is called but the real
 * function. Keeps errno as it was. */
SPIO_HIDDEN bool spio_begin(spio_call *call, int fn);
/* Around the real call: no section is held while it runs (it may block for ever). */
SPIO_HIDDEN void spio_pause(spio_call *call);
/* After it: false when the measurement ended meanwhile (nothing more is recorded). Saves
 * errno for spio_end. */
SPIO_HIDDEN bool spio_resume(spio_call *call);
/* The call's leave; restores the errno the real call left. */
SPIO_HIDDEN void spio_end(spio_call *call);
/* Restores errno when spio_resume returned false. */
SPIO_HIDDEN void spio_abandon(spio_call *call, int saved_errno);

/* A read, write or flush on the handle bound to `native` (UINT64_MAX: the handle that
 * stands for all of the paradigm's, fflush(NULL)). */
typedef struct {
    spio_call call;
    uint32_t handle; /* SP_NO_ID: a native handle the measurement does not know */
    sp_io_paradigm paradigm;
    sp_io_mode mode;
    uint64_t matching;
} spio_operation;

/* The call's enter and the operation's begin (`bytes` requested); false when the call is
 * not recorded. The real call follows, then spio_operation_end. */
SPIO_HIDDEN bool spio_operation_begin(spio_operation *op, int fn, sp_io_paradigm paradigm,
                                      uint64_t native, sp_io_mode mode, uint64_t bytes,
                                      uint64_t matching);
/* `bytes`: what the operation moved, SP_IO_UNKNOWN_BYTES when it failed (or a flush). */
SPIO_HIDDEN void spio_operation_end(spio_operation *op, uint64_t bytes);

static inline uint64_t spio_now(void)
{
    return sp_clock_now();
}

/* Flag translations (record.c). */
SPIO_HIDDEN sp_io_access_mode spio_access_mode(int flags);
SPIO_HIDDEN void spio_open_flags(int flags, uint32_t *creation, uint32_t *status);
/* Access mode and status flags of an open descriptor; false when it is not open. */
SPIO_HIDDEN bool spio_fd_state(int fd, sp_io_access_mode *mode, uint32_t *status);
SPIO_HIDDEN sp_io_access_mode spio_stream_mode(const char *mode);
SPIO_HIDDEN sp_io_seek_whence spio_whence(int whence);

/* ---- the handles open before the measurement (adapter.c) ---------------------------------- */

/* The handle flushing all streams stands for (fflush(NULL)). */
extern uint32_t spio_flush_all_handle SPIO_HIDDEN;

#endif
