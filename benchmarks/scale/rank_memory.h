/* What one simulated rank holds, measured: malloc, calloc, realloc and free of the driver
 * replaced by glibc's own (__libc_malloc...) plus a count per rank of the bytes live in the
 * blocks its thread allocated (malloc_usable_size), and the peak of that count. A message
 * of the in-process group (tests/c/thread_ipc.h) is allocated by its sender and freed by its
 * receiver: the group's adopt hook moves its bytes from the one to the other when it is
 * received, so a rank's count is what it holds, received messages included.
 *
 * Include it in one driver file only (it defines the allocator). Global state: the
 * allocator has no context to carry it, and the drivers are one measurement per process. */
#ifndef SCOREP_BENCH_RANK_MEMORY_H
#define SCOREP_BENCH_RANK_MEMORY_H

#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "thread_ipc.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static _Atomic int64_t *rm_live; /* per rank: bytes held now */
static int64_t *rm_peak;         /* per rank: the most it held (written by its thread only) */
static uint32_t rm_ranks;
static _Thread_local int64_t rm_rank = -1; /* the rank this thread simulates, -1: none */

static inline void rm_count(int64_t rank, int64_t bytes)
{
    if (rank < 0 || !rm_live)
        return;
    int64_t now = atomic_fetch_add_explicit(&rm_live[rank], bytes, memory_order_relaxed) + bytes;
    if (rank == rm_rank && now > rm_peak[rank])
        rm_peak[rank] = now;
}

void *malloc(size_t n)
{
    void *p = __libc_malloc(n);
    if (p)
        rm_count(rm_rank, (int64_t)malloc_usable_size(p));
    return p;
}

void *calloc(size_t n, size_t size)
{
    void *p = __libc_calloc(n, size);
    if (p)
        rm_count(rm_rank, (int64_t)malloc_usable_size(p));
    return p;
}

void free(void *p)
{
    if (p)
        rm_count(rm_rank, -(int64_t)malloc_usable_size(p));
    __libc_free(p);
}

void *realloc(void *p, size_t n)
{
    int64_t before = p ? (int64_t)malloc_usable_size(p) : 0;
    void *q = __libc_realloc(p, n);
    if (q)
        rm_count(rm_rank, (int64_t)malloc_usable_size(q) - before);
    else if (n == 0)
        rm_count(rm_rank, -before);
    return q;
}

static void rm_adopt(void *data, uint32_t source, uint32_t receiver)
{
    int64_t bytes = (int64_t)malloc_usable_size(data);
    rm_count(source, -bytes);
    rm_count(receiver, bytes);
}

/* Before the ranks start: counts for `ranks` ranks, the group's messages followed. */
static inline int rank_memory_init(thread_group *g, uint32_t ranks)
{
    rm_live = __libc_calloc(ranks, sizeof *rm_live);
    rm_peak = __libc_calloc(ranks, sizeof *rm_peak);
    rm_ranks = ranks;
    g->adopt = rm_adopt;
    return rm_live && rm_peak ? 0 : -1;
}

/* In a rank's thread, first: what it allocates from now on is its own. */
static inline void rank_memory_enter(uint32_t rank)
{
    rm_rank = rank;
}

/* The most rank `rank` held at once, in bytes. */
static inline int64_t rank_memory_peak(uint32_t rank)
{
    return rank < rm_ranks ? rm_peak[rank] : 0;
}

#endif
