/* Wrappers of the POSIX I/O functions: file descriptors as handles of paradigm POSIX. */
#include "adapters/io/io_adapter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define POSIX SP_IO_PARADIGM_POSIX

/* ---- creating descriptors ------------------------------------------------------------------- */

/* The file a new descriptor refers to: the path resolved (Score-P's realpath), or for a
 * path relative to another directory what the kernel says the descriptor is. */
static uint32_t file_of(int dirfd, const char *path, int fd)
{
    if (path && (path[0] == '/' || dirfd == AT_FDCWD))
        return sp_io_file_define(path);
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0)
        return sp_io_file_define(path ? path : "");
    target[n] = '\0';
    return sp_io_file_define(target);
}

typedef enum { CALL_OPEN, CALL_OPEN_2, CALL_OPENAT, CALL_OPENAT_2, CALL_CREAT } open_kind;

static int call_real(int fn, open_kind kind, int dirfd, const char *path, int flags, mode_t mode)
{
    void *real = spio_real[fn];
    switch (kind) {
    case CALL_OPEN: return ((int (*)(const char *, int, ...))real)(path, flags, mode);
    case CALL_OPEN_2: return ((int (*)(const char *, int))real)(path, flags);
    case CALL_OPENAT: return ((int (*)(int, const char *, int, ...))real)(dirfd, path, flags, mode);
    case CALL_OPENAT_2: return ((int (*)(int, const char *, int))real)(dirfd, path, flags);
    case CALL_CREAT: return ((int (*)(const char *, mode_t))real)(path, mode);
    }
    return -1;
}

static int record_open(int fn, open_kind kind, int dirfd, const char *path, int flags,
                       mode_t mode)
{
    spio_call c;
    if (!spio_begin(&c, fn))
        return call_real(fn, kind, dirfd, path, flags, mode);
    uint32_t handle = sp_io_handle_begin(c.loc, POSIX, "", SP_NO_ID, 0);
    spio_pause(&c);
    int fd = call_real(fn, kind, dirfd, path, flags, mode);
    if (!spio_resume(&c))
        return fd;
    if (fd >= 0 && handle != SP_NO_ID) {
        sp_io_handle_complete(c.loc, handle, file_of(dirfd, path, fd), (uint64_t)fd);
        uint32_t creation, status;
        spio_open_flags(flags, &creation, &status);
        sp_io_create_handle(c.loc, spio_now(), POSIX, handle, spio_access_mode(flags), creation,
                            status);
    } else {
        sp_io_handle_drop(c.loc, handle);
    }
    spio_end(&c);
    return fd;
}

/* open(2) takes a mode only when it may create a file. */
static bool takes_mode(int flags)
{
#ifdef O_TMPFILE
    if ((flags & O_TMPFILE) == O_TMPFILE)
        return true;
#endif
    return (flags & O_CREAT) != 0;
}

/* `mode`: open(2)'s optional third argument, read only when `flags` say it is there. In the
 * variadic wrapper itself: va_start needs its frame. */
#define OPEN_MODE(mode, flags)                                                      \
    mode_t mode = 0;                                                                \
    if (takes_mode(flags)) {                                                        \
        va_list ap;                                                                 \
        va_start(ap, flags);                                                        \
        mode = (mode_t)va_arg(ap, int);                                             \
        va_end(ap);                                                                 \
    }

#define OPEN_WRAPPER(name, FN)                                                      \
    static int name(const char *path, int flags, ...)                               \
    {                                                                               \
        OPEN_MODE(mode, flags)                                                      \
        return record_open(SPIO_FN_##FN, CALL_OPEN, AT_FDCWD, path, flags, mode);   \
    }

#define OPENAT_WRAPPER(name, FN)                                                    \
    static int name(int dirfd, const char *path, int flags, ...)                    \
    {                                                                               \
        OPEN_MODE(mode, flags)                                                      \
        return record_open(SPIO_FN_##FN, CALL_OPENAT, dirfd, path, flags, mode);    \
    }

OPEN_WRAPPER(w_open, OPEN)
OPEN_WRAPPER(w_open64, OPEN64)
OPENAT_WRAPPER(w_openat, OPENAT)
OPENAT_WRAPPER(w_openat64, OPENAT64)

/* _FORTIFY_SOURCE's checked entry points of open without a mode. */
static int w_open_2(const char *path, int flags)
{
    return record_open(SPIO_FN_OPEN_2, CALL_OPEN_2, AT_FDCWD, path, flags, 0);
}

static int w_open64_2(const char *path, int flags)
{
    return record_open(SPIO_FN_OPEN64_2, CALL_OPEN_2, AT_FDCWD, path, flags, 0);
}

static int w_openat_2(int dirfd, const char *path, int flags)
{
    return record_open(SPIO_FN_OPENAT_2, CALL_OPENAT_2, dirfd, path, flags, 0);
}

static int w_openat64_2(int dirfd, const char *path, int flags)
{
    return record_open(SPIO_FN_OPENAT64_2, CALL_OPENAT_2, dirfd, path, flags, 0);
}

static int w_creat(const char *path, mode_t mode)
{
    return record_open(SPIO_FN_CREAT, CALL_CREAT, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC,
                       mode);
}

static int w_creat64(const char *path, mode_t mode)
{
    return record_open(SPIO_FN_CREAT64, CALL_CREAT, AT_FDCWD, path,
                       O_CREAT | O_WRONLY | O_TRUNC, mode);
}

/* ---- closing ------------------------------------------------------------------------------ */

static int w_close(int fd)
{
    int (*real)(int) = SPIO_REAL(CLOSE, int (*)(int));
    spio_call c;
    if (!spio_begin(&c, SPIO_FN_CLOSE))
        return real(fd);
    uint32_t handle = sp_io_handle_unbind(POSIX, (uint64_t)fd);
    spio_pause(&c);
    int r = real(fd);
    if (!spio_resume(&c))
        return r;
    /* Linux releases the descriptor even when close fails (EINTR, EIO): the handle ends
     * either way. A descriptor the measurement does not know (closed twice, never opened,
     * a socket) leaves only the call. */
    if (handle != SP_NO_ID)
        sp_io_destroy_handle(c.loc, spio_now(), POSIX, handle);
    spio_end(&c);
    return r;
}

/* ---- reading and writing ------------------------------------------------------------------ */

static uint64_t transferred(ssize_t r)
{
    return r >= 0 ? (uint64_t)r : SP_IO_UNKNOWN_BYTES;
}

static uint64_t iov_bytes(const struct iovec *iov, int count)
{
    uint64_t bytes = 0;
    for (int i = 0; iov && i < count; i++)
        bytes += iov[i].iov_len;
    return bytes;
}

/* Same-shape I/O wrappers, a family (here and in isoc.c): one per libc function, each
 * the same steps around its real call through TRANSFER or the record_* helpers. */
#define TRANSFER(FN, mode, fd, request, call)                                                 \
    do {                                                                                      \
        spio_operation op;                                                                         \
        if (!spio_operation_begin(&op, SPIO_FN_##FN, POSIX, (uint64_t)(fd), mode, (request),  \
                                  SPIO_MATCHING_POSIX))                                       \
            return call;                                                                      \
        ssize_t r = call;                                                                     \
        spio_operation_end(&op, transferred(r));                                              \
        return r;                                                                             \
    } while (0)

static ssize_t w_read(int fd, void *buf, size_t count)
{
    TRANSFER(READ, SP_IO_MODE_READ, fd, count,
             SPIO_REAL(READ, ssize_t(*)(int, void *, size_t))(fd, buf, count));
}

static ssize_t w_write(int fd, const void *buf, size_t count)
{
    TRANSFER(WRITE, SP_IO_MODE_WRITE, fd, count,
             SPIO_REAL(WRITE, ssize_t(*)(int, const void *, size_t))(fd, buf, count));
}

static ssize_t w_pread(int fd, void *buf, size_t count, off_t offset)
{
    TRANSFER(PREAD, SP_IO_MODE_READ, fd, count,
             SPIO_REAL(PREAD, ssize_t(*)(int, void *, size_t, off_t))(fd, buf, count, offset));
}

static ssize_t w_pread64(int fd, void *buf, size_t count, off64_t offset)
{
    TRANSFER(PREAD64, SP_IO_MODE_READ, fd, count,
             SPIO_REAL(PREAD64, ssize_t(*)(int, void *, size_t, off64_t))(fd, buf, count, offset));
}

static ssize_t w_pwrite(int fd, const void *buf, size_t count, off_t offset)
{
    TRANSFER(PWRITE, SP_IO_MODE_WRITE, fd, count,
             SPIO_REAL(PWRITE, ssize_t(*)(int, const void *, size_t, off_t))(fd, buf, count,
                                                                                offset));
}

static ssize_t w_pwrite64(int fd, const void *buf, size_t count, off64_t offset)
{
    TRANSFER(PWRITE64, SP_IO_MODE_WRITE, fd, count,
             SPIO_REAL(PWRITE64, ssize_t(*)(int, const void *, size_t, off64_t))(fd, buf, count,
                                                                                  offset));
}

static ssize_t w_readv(int fd, const struct iovec *iov, int count)
{
    TRANSFER(READV, SP_IO_MODE_READ, fd, iov_bytes(iov, count),
             SPIO_REAL(READV, ssize_t(*)(int, const struct iovec *, int))(fd, iov, count));
}

static ssize_t w_writev(int fd, const struct iovec *iov, int count)
{
    TRANSFER(WRITEV, SP_IO_MODE_WRITE, fd, iov_bytes(iov, count),
             SPIO_REAL(WRITEV, ssize_t(*)(int, const struct iovec *, int))(fd, iov, count));
}

static ssize_t w_preadv(int fd, const struct iovec *iov, int count, off_t offset)
{
    TRANSFER(PREADV, SP_IO_MODE_READ, fd, iov_bytes(iov, count),
             SPIO_REAL(PREADV, ssize_t(*)(int, const struct iovec *, int, off_t))(fd, iov, count,
                                                                                  offset));
}

static ssize_t w_preadv64(int fd, const struct iovec *iov, int count, off64_t offset)
{
    TRANSFER(PREADV64, SP_IO_MODE_READ, fd, iov_bytes(iov, count),
             SPIO_REAL(PREADV64, ssize_t(*)(int, const struct iovec *, int, off64_t))(
                 fd, iov, count, offset));
}

static ssize_t w_pwritev(int fd, const struct iovec *iov, int count, off_t offset)
{
    TRANSFER(PWRITEV, SP_IO_MODE_WRITE, fd, iov_bytes(iov, count),
             SPIO_REAL(PWRITEV, ssize_t(*)(int, const struct iovec *, int, off_t))(fd, iov, count,
                                                                                    offset));
}

static ssize_t w_pwritev64(int fd, const struct iovec *iov, int count, off64_t offset)
{
    TRANSFER(PWRITEV64, SP_IO_MODE_WRITE, fd, iov_bytes(iov, count),
             SPIO_REAL(PWRITEV64, ssize_t(*)(int, const struct iovec *, int, off64_t))(
                 fd, iov, count, offset));
}

static int sync_call(int fn, int fd)
{
    int (*real)(int) = (int (*)(int))spio_real[fn];
    spio_operation op;
    if (!spio_operation_begin(&op, fn, POSIX, (uint64_t)fd, SP_IO_MODE_FLUSH, SP_IO_UNKNOWN_BYTES,
                              SPIO_MATCHING_POSIX))
        return real(fd);
    int r = real(fd);
    spio_operation_end(&op, SP_IO_UNKNOWN_BYTES);
    return r;
}

static int w_fsync(int fd)
{
    return sync_call(SPIO_FN_FSYNC, fd);
}

static int w_fdatasync(int fd)
{
    return sync_call(SPIO_FN_FDATASYNC, fd);
}

/* ---- seeking -------------------------------------------------------------------------------- */

#define SEEK_WRAPPER(name, FN, off_type)                                                     \
    static off_type name(int fd, off_type offset, int whence)                                \
    {                                                                                        \
        off_type (*real)(int, off_type, int) = SPIO_REAL(FN, off_type(*)(int, off_type, int)); \
        spio_call c;                                                                         \
        if (!spio_begin(&c, SPIO_FN_##FN))                                                   \
            return real(fd, offset, whence);                                                 \
        uint32_t handle = sp_io_handle_lookup(POSIX, (uint64_t)fd);                          \
        spio_pause(&c);                                                                      \
        off_type r = real(fd, offset, whence);                                               \
        if (!spio_resume(&c))                                                                \
            return r;                                                                        \
        if (handle != SP_NO_ID)                                                              \
            sp_io_seek(c.loc, spio_now(), POSIX, handle, (int64_t)offset, spio_whence(whence), \
                       (uint64_t)r);                                                         \
        spio_end(&c);                                                                        \
        return r;                                                                            \
    }

SEEK_WRAPPER(w_lseek, LSEEK, off_t)
SEEK_WRAPPER(w_lseek64, LSEEK64, off64_t)

/* ---- duplicating ---------------------------------------------------------------------------- */

/* After a successful duplication of `old` into `fd`: the new handle and its event. */
static void duplicated(spio_call *c, uint32_t old_handle, int old, int fd)
{
    if (old_handle == SP_NO_ID || fd < 0)
        return;
    uint32_t handle = sp_io_handle_duplicate(POSIX, old_handle, (uint64_t)fd);
    if (handle == SP_NO_ID)
        return;
    sp_io_access_mode mode;
    uint32_t status = 0;
    if (!spio_fd_state(old, &mode, &status))
        status = 0;
    sp_io_duplicate_handle(c->loc, spio_now(), POSIX, old_handle, handle, status);
}

static int w_dup(int old)
{
    int (*real)(int) = SPIO_REAL(DUP, int (*)(int));
    spio_call c;
    if (!spio_begin(&c, SPIO_FN_DUP))
        return real(old);
    uint32_t old_handle = sp_io_handle_lookup(POSIX, (uint64_t)old);
    spio_pause(&c);
    int fd = real(old);
    if (!spio_resume(&c))
        return fd;
    duplicated(&c, old_handle, old, fd);
    spio_end(&c);
    return fd;
}

/* dup2/dup3: a descriptor open at `target` is closed by the call: its handle ends first. */
static int dup_to(int fn, int old, int target, int flags)
{
    spio_call c;
    bool three = fn == SPIO_FN_DUP3;
    if (!spio_begin(&c, fn))
        return three ? SPIO_REAL(DUP3, int (*)(int, int, int))(old, target, flags)
                     : SPIO_REAL(DUP2, int (*)(int, int))(old, target);
    uint32_t old_handle = sp_io_handle_lookup(POSIX, (uint64_t)old);
    if (old != target && old_handle != SP_NO_ID) {
        uint32_t closed = sp_io_handle_unbind(POSIX, (uint64_t)target);
        if (closed != SP_NO_ID)
            sp_io_destroy_handle(c.loc, spio_now(), POSIX, closed);
    }
    spio_pause(&c);
    int fd = three ? SPIO_REAL(DUP3, int (*)(int, int, int))(old, target, flags)
                   : SPIO_REAL(DUP2, int (*)(int, int))(old, target);
    if (!spio_resume(&c))
        return fd;
    if (old != target)
        duplicated(&c, old_handle, old, fd);
    spio_end(&c);
    return fd;
}

static int w_dup2(int old, int target)
{
    return dup_to(SPIO_FN_DUP2, old, target, 0);
}

static int w_dup3(int old, int target, int flags)
{
    return dup_to(SPIO_FN_DUP3, old, target, flags);
}

/* fcntl's third argument is absent, an int or a pointer, by command: passed on as a word
 * (how the x86-64 and AArch64 calling conventions pass all three). */
static int fcntl_call(int fn, int fd, int cmd, unsigned long arg)
{
    int (*real)(int, int, ...) = (int (*)(int, int, ...))spio_real[fn];
    spio_call c;
    if (!spio_begin(&c, fn))
        return real(fd, cmd, arg);
    bool duplicates = cmd == F_DUPFD
#ifdef F_DUPFD_CLOEXEC
                      || cmd == F_DUPFD_CLOEXEC
#endif
        ;
    uint32_t old_handle = duplicates ? sp_io_handle_lookup(POSIX, (uint64_t)fd) : SP_NO_ID;
    spio_pause(&c);
    int r = real(fd, cmd, arg);
    if (!spio_resume(&c))
        return r;
    if (duplicates)
        duplicated(&c, old_handle, fd, r);
    spio_end(&c);
    return r;
}

static int w_fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    unsigned long arg = va_arg(ap, unsigned long);
    va_end(ap);
    return fcntl_call(SPIO_FN_FCNTL, fd, cmd, arg);
}

static int w_fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    unsigned long arg = va_arg(ap, unsigned long);
    va_end(ap);
    return fcntl_call(SPIO_FN_FCNTL64, fd, cmd, arg);
}

/* ---- the table got.c patches with ------------------------------------------------------------ */

void *const spio_posix_wrappers[SPIO_FN_COUNT] = {
    [SPIO_FN_OPEN] = (void *)w_open,
    [SPIO_FN_OPEN64] = (void *)w_open64,
    [SPIO_FN_OPEN_2] = (void *)w_open_2,
    [SPIO_FN_OPEN64_2] = (void *)w_open64_2,
    [SPIO_FN_OPENAT] = (void *)w_openat,
    [SPIO_FN_OPENAT64] = (void *)w_openat64,
    [SPIO_FN_OPENAT_2] = (void *)w_openat_2,
    [SPIO_FN_OPENAT64_2] = (void *)w_openat64_2,
    [SPIO_FN_CREAT] = (void *)w_creat,
    [SPIO_FN_CREAT64] = (void *)w_creat64,
    [SPIO_FN_CLOSE] = (void *)w_close,
    [SPIO_FN_READ] = (void *)w_read,
    [SPIO_FN_WRITE] = (void *)w_write,
    [SPIO_FN_PREAD] = (void *)w_pread,
    [SPIO_FN_PREAD64] = (void *)w_pread64,
    [SPIO_FN_PWRITE] = (void *)w_pwrite,
    [SPIO_FN_PWRITE64] = (void *)w_pwrite64,
    [SPIO_FN_READV] = (void *)w_readv,
    [SPIO_FN_WRITEV] = (void *)w_writev,
    [SPIO_FN_PREADV] = (void *)w_preadv,
    [SPIO_FN_PREADV64] = (void *)w_preadv64,
    [SPIO_FN_PWRITEV] = (void *)w_pwritev,
    [SPIO_FN_PWRITEV64] = (void *)w_pwritev64,
    [SPIO_FN_LSEEK] = (void *)w_lseek,
    [SPIO_FN_LSEEK64] = (void *)w_lseek64,
    [SPIO_FN_FSYNC] = (void *)w_fsync,
    [SPIO_FN_FDATASYNC] = (void *)w_fdatasync,
    [SPIO_FN_DUP] = (void *)w_dup,
    [SPIO_FN_DUP2] = (void *)w_dup2,
    [SPIO_FN_DUP3] = (void *)w_dup3,
    [SPIO_FN_FCNTL] = (void *)w_fcntl,
    [SPIO_FN_FCNTL64] = (void *)w_fcntl64,
};
