#include "core/memory.h"

#include <stdlib.h>

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
    return pthread_mutex_init(&pool->lock, NULL) == 0 ? 0 : -1;
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
        } else {
            chunk = malloc(pool->chunk_size);
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
    free(chunk);
}

void sp_chunk_pool_destroy(sp_chunk_pool *pool)
{
    while (pool->free_list) {
        void *next = *(void **)pool->free_list;
        free(pool->free_list);
        pool->free_list = next;
    }
    pool->free_count = 0;
    pthread_mutex_destroy(&pool->lock);
}
