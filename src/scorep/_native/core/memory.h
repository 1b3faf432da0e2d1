/* The memory budget (SCOREP_TOTAL_MEMORY): fixed-size chunks handed out until the budget
 * is used up. Trace buffers and profile call-path nodes take their chunks from here; when
 * none is left, a reclaim callback lets whoever can give memory back do so (the trace
 * substrate writes the asking location's full buffers to disk), without the substrates
 * knowing each other. */
#ifndef SCOREP_CORE_MEMORY_H
#define SCOREP_CORE_MEMORY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every chunk of the budget has this size: OTF2's smallest event chunk, so that trace
 * buffers, OTF2 writers and profile node blocks all draw from one pool. */
#define SP_CHUNK_SIZE (256 * 1024)

/* Gives memory back to the pool for `requester` (the location that asks, whose own thread
 * is calling); returns true when something was given back. */
typedef bool (*sp_chunk_reclaim_fn)(void *user, void *requester);

typedef struct sp_chunk_pool {
    pthread_mutex_t lock; /* chunks are requested only every few thousand events */
    size_t chunk_size;
    size_t budget_chunks; /* how many chunks the budget allows */
    size_t used_chunks;   /* handed out now */
    size_t peak_chunks;
    size_t over_budget_chunks; /* handed out beyond the budget to let a location progress */
    void *free_list;           /* returned chunks, linked through their first word */
    size_t free_count;
    bool mapped; /* chunks are mmap'd in slabs (chunk size a multiple of the page size) */
    sp_chunk_reclaim_fn reclaim; /* NULL: nobody can give memory back */
    void *reclaim_user;
} sp_chunk_pool;

/* budget_bytes is rounded down to whole chunks; at least one chunk is allowed. */
int sp_chunk_pool_init(sp_chunk_pool *pool, uint64_t budget_bytes, size_t chunk_size);

/* A chunk, or NULL when the budget is used up. With `must`, a chunk is handed out even
 * over budget (counted in over_budget_chunks): a location that owns no chunk at all must
 * still be able to record. */
void *sp_chunk_pool_get(sp_chunk_pool *pool, bool must);

/* The same, but when the budget is used up the reclaim callback runs first and the pool is
 * asked once more (within the budget). */
void *sp_chunk_pool_get_reclaiming(sp_chunk_pool *pool, void *requester, bool must);

void sp_chunk_pool_set_reclaim(sp_chunk_pool *pool, sp_chunk_reclaim_fn fn, void *user);

void sp_chunk_pool_put(sp_chunk_pool *pool, void *chunk);

void sp_chunk_pool_destroy(sp_chunk_pool *pool);

#endif
