/* A C library that allocates with libc, called through ctypes by native_memory_app.py: the
 * native memory metrics must see its malloc & co. (tests/test_native_memory.py). */
#include <stdlib.h>
#include <string.h>

void *grab(size_t n)
{
    char *p = malloc(n);
    if (p)
        memset(p, 1, n);
    return p;
}

void give(void *p)
{
    free(p);
}

/* Every allocator once, each block freed: n + 2n (realloc) + n + n + n allocated, the same
 * freed; at most 2n live at once. Returns 0 when all succeeded. */
int churn(size_t n)
{
    char *p = malloc(n);
    if (!p)
        return 1;
    memset(p, 2, n);
    char *q = realloc(p, 2 * n);
    if (!q) {
        free(p);
        return 1;
    }
    memset(q, 3, 2 * n);
    free(q);
    char *c = calloc(n, 1);
    if (!c)
        return 1;
    int bad = c[n / 2] != 0;
    free(c);
    void *m = NULL;
    if (posix_memalign(&m, 64, n) != 0)
        return 1;
    memset(m, 4, n);
    free(m);
    void *a = aligned_alloc(64, n);
    if (!a)
        return 1;
    memset(a, 5, n);
    free(a);
    return bad;
}
