/* A C library doing I/O of its own, called through ctypes by tests/programs/io_mix.py:
 * the stdio family (fopen, fwrite, fflush, fseek, fread, fclose) and POSIX calls (open,
 * write, pwrite, lseek, read, pread, fsync, dup, close). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Writes `blocks` blocks of 1000 bytes with stdio, reads them back; returns the bytes
 * read, -1 on failure. */
long native_stdio(const char *path, int blocks)
{
    char buf[1000];
    memset(buf, 's', sizeof buf);
    FILE *f = fopen(path, "w+b");
    if (!f)
        return -1;
    for (int i = 0; i < blocks; i++)
        fwrite(buf, 1, sizeof buf, f);
    fflush(f);
    fseek(f, 0, SEEK_SET);
    long total = 0;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        total += (long)n;
    fclose(f);
    return total;
}

/* Writes `bytes` bytes with write and pwrite, reads them back through a duplicate of the
 * descriptor; returns the bytes read. */
long native_posix(const char *path, int bytes)
{
    char buf[4096];
    memset(buf, 'p', sizeof buf);
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
    if (fd < 0)
        return -1;
    int half = bytes / 2;
    if (write(fd, buf, (size_t)half) != half || pwrite(fd, buf, (size_t)(bytes - half), half) != bytes - half)
        return -1;
    fsync(fd);
    int copy = dup(fd);
    close(fd);
    lseek(copy, 0, SEEK_SET);
    long total = 0;
    ssize_t n;
    while ((n = read(copy, buf, sizeof buf)) > 0)
        total += n;
    total += pread(copy, buf, 10, 0) > 0 ? 0 : 0;
    close(copy);
    return total;
}
