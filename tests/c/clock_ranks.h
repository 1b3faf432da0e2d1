/* Simulated ranks whose clocks are the machine's CLOCK_MONOTONIC shifted by a known amount
 * (within +-1 ms), measuring their offsets with sp_ipc_clock_offsets (core/ipc.c) along the
 * binomial tree or directly: what tests/c/test_clock_offsets.c checks and
 * benchmarks/scale/clock_driver.c measures. */
#ifndef SCOREP_TESTS_CLOCK_RANKS_H
#define SCOREP_TESTS_CLOCK_RANKS_H

#include <time.h>

#include "core/ipc.h"
#include "thread_ipc.h"

typedef struct {
    thread_rank me; /* first: thread_group_run fills it */
    bool tree;
    uint32_t rounds;
    int status;
    int64_t offset, bound;
} clock_work;

/* The known shift of a rank's clock, ns. */
static inline int64_t clock_skew_of(uint32_t rank)
{
    return ((int64_t)(rank * 7919u % 2001u) - 1000) * 1000;
}

/* What sp_ipc_clock_offsets should find for `rank`: rank 0's clock minus its own. */
static inline int64_t clock_expected_offset(uint32_t rank)
{
    return clock_skew_of(0) - clock_skew_of(rank);
}

static inline int64_t clock_shifted_now(void *ctx)
{
    const clock_work *w = ctx;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec + clock_skew_of(w->me.rank);
}

static inline void *clock_rank_main(void *arg)
{
    clock_work *w = arg;
    sp_ipc ipc = thread_group_ipc(&w->me, true);
    w->status = sp_ipc_clock_offsets(&ipc, w->tree, w->rounds, clock_shifted_now, w, &w->offset,
                                     &w->bound);
    return NULL;
}

/* Every rank of a group of `ranks` measured (work: calloc'ed, ranks entries, the caller
 * frees it); NULL when out of memory or the group cannot be made. */
static inline clock_work *clock_ranks_run(uint32_t ranks, bool tree, uint32_t rounds)
{
    thread_group group;
    clock_work *work = calloc(ranks, sizeof *work);
    if (!work || thread_group_init(&group, ranks) != 0) {
        free(work);
        return NULL;
    }
    for (uint32_t r = 0; r < ranks; r++)
        work[r] = (clock_work){.tree = tree, .rounds = rounds};
    thread_group_run(&group, work, sizeof *work, clock_rank_main);
    thread_group_free(&group);
    return work;
}

#endif
