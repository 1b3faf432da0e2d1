#include "core/memory.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Fresh chunks are mapped this many at a time (2 MB with 256 kB chunks: one transparent
 * huge page) and populated in one kernel call. Touching fresh malloc'd pages instead costs
 * one page fault per 4 kB inside the measured program: under a paravirtualised kernel that
 * was more than half of the tracing overhead. */
#define SLAB_CHUNKS 8
#define HUGE_PAGE (2u * 1024 * 1024)

int sp_chunk_pool_init(sp_chunk_pool *pool, uint64_t budget_bytes, size_t chunk_size)
{
    if (chunk_size < sizeof(void *))
        return -1;
    pool->chunk_size = chunk_size;
    pool->budget_chunks = (size_t)(budget_bytes / chunk_size);
    if (pool->budget_chunks == 0)
        pool->budget_chunks = 1;
    pool->used_chunks = 0;
    pool->peak_chunks = 0;
    pool->over_budget_chunks = 0;
    pool->free_list = NULL;
    pool->free_count = 0;
    pool->reclaim = NULL;
    pool->reclaim_user = NULL;
    long page = sysconf(_SC_PAGESIZE);
    pool->mapped = page > 0 && chunk_size % (size_t)page == 0;
    return pthread_mutex_init(&pool->lock, NULL) == 0 ? 0 : -1;
}

/* Maps min(wanted, SLAB_CHUNKS) chunks, returns the first and puts the others on the free
 * list. Called with the pool's lock held. */
static void *map_slab(sp_chunk_pool *pool, size_t wanted)
{
    size_t count = wanted < SLAB_CHUNKS ? wanted : SLAB_CHUNKS;
    size_t bytes = count * pool->chunk_size;
    bool huge = bytes % HUGE_PAGE == 0;
    size_t mapped = bytes + (huge ? HUGE_PAGE : 0);
    char *base = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    char *slab = base;
    if (huge) {
        /* Trim to a huge-page boundary so the kernel can back the slab with huge pages. */
        slab = (char *)(((uintptr_t)base + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
        if (slab > base)
            munmap(base, (size_t)(slab - base));
        if (base + mapped > slab + bytes)
            munmap(slab + bytes, (size_t)(base + mapped - (slab + bytes)));
#ifdef MADV_HUGEPAGE
        madvise(slab, bytes, MADV_HUGEPAGE);
#endif
    }
#ifdef MADV_POPULATE_WRITE
    /* Kernels before 5.14 refuse it; the pages then fault in on first use, as before. */
    madvise(slab, bytes, MADV_POPULATE_WRITE);
#endif
    for (size_t i = count; i-- > 1;) {
        void *extra = slab + i * pool->chunk_size;
        *(void **)extra = pool->free_list;
        pool->free_list = extra;
        pool->free_count++;
    }
    return slab;
}

static void release_chunk(const sp_chunk_pool *pool, void *chunk)
{
    if (pool->mapped)
        munmap(chunk, pool->chunk_size);
    else
        free(chunk);
}

void *sp_chunk_pool_get(sp_chunk_pool *pool, bool must)
{
    void *chunk = NULL;
    pthread_mutex_lock(&pool->lock);
    bool within_budget = pool->used_chunks < pool->budget_chunks;
    if (within_budget || must) {
        if (pool->free_list) {
            chunk = pool->free_list;
            pool->free_list = *(void **)chunk;
            pool->free_count--;
        } else if (!pool->mapped) {
            chunk = malloc(pool->chunk_size);
        } else {
            size_t room = pool->budget_chunks - pool->used_chunks - pool->free_count;
            chunk = map_slab(pool, within_budget && room > 1 ? room : 1);
        }
        if (chunk) {
            pool->used_chunks++;
            if (!within_budget)
                pool->over_budget_chunks++;
            if (pool->used_chunks > pool->peak_chunks)
                pool->peak_chunks = pool->used_chunks;
        }
    }
    pthread_mutex_unlock(&pool->lock);
    return chunk;
}

void *sp_chunk_pool_get_reclaiming(sp_chunk_pool *pool, void *requester, bool must)
{
    void *chunk = sp_chunk_pool_get(pool, must);
    if (!chunk && pool->reclaim && pool->reclaim(pool->reclaim_user, requester))
        chunk = sp_chunk_pool_get(pool, false);
    return chunk;
}

void sp_chunk_pool_set_reclaim(sp_chunk_pool *pool, sp_chunk_reclaim_fn fn, void *user)
{
    pool->reclaim = fn;
    pool->reclaim_user = user;
}

void sp_chunk_pool_put(sp_chunk_pool *pool, void *chunk)
{
    if (!chunk)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->used_chunks--;
    /* Keep returned chunks for reuse up to the budget: malloc'ing a fresh one means fresh
     * page faults inside the measured program. */
    if (pool->free_count + pool->used_chunks < pool->budget_chunks) {
        *(void **)chunk = pool->free_list;
        pool->free_list = chunk;
        pool->free_count++;
        chunk = NULL;
    }
    pthread_mutex_unlock(&pool->lock);
    if (chunk)
        release_chunk(pool, chunk);
}

void sp_chunk_pool_destroy(sp_chunk_pool *pool)
{
    while (pool->free_list) {
        void *next = *(void **)pool->free_list;
        release_chunk(pool, pool->free_list);
        pool->free_list = next;
    }
    pool->free_count = 0;
    pthread_mutex_destroy(&pool->lock);
}
