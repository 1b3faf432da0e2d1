/* Two shared objects of one source, for tests/test_io.py's unload-and-reload test. Built with
 * -DWIDE_RELRO: a large table the loader fills in and then makes read-only (RELRO), the GOT
 * slot of write at its end; without: its data, writable and as large, where the other's table
 * lies. -DPAD evens out the two objects' sizes, so that the second is mapped where the first
 * was once that one is unloaded. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

extern const char __ehdr_start[] __attribute__((visibility("hidden")));

#ifdef WIDE_RELRO
const char *const names[8192] = {[0 ... 8191] = "x"};
#else
char data[65536 + PAD] = {1};
#endif
static char scratch[65536];

uintptr_t base(void)
{
    return (uintptr_t)__ehdr_start;
}

/* What the object's GOT holds for write: the wrapper while patched, libc's otherwise. */
void *write_address(void)
{
    return (void *)&write;
}

/* Writes n bytes to fd after writing to the object's own memory (a crash where a page of it
 * was made read-only). */
long work(int fd, int n)
{
#ifndef WIDE_RELRO
    memset(data, n, sizeof data);
#endif
    memset(scratch, n, sizeof scratch);
    char buf[64];
    memset(buf, 'a' + n, sizeof buf);
    return (long)write(fd, buf, (size_t)n) + scratch[1] - n;
}
