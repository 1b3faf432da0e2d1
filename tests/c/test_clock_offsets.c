/* Clock offsets measured along the binomial tree and composed, and directly by rank 0 with
 * every rank (core/ipc.c, sp_ipc_clock_offsets), with ranks simulated by threads whose clocks
 * are the machine's shifted by a known amount: every estimate is within the error bound the
 * measurement reports (half the shortest round trip per hop, summed). */
#include <time.h>

#include "core/ipc.h"
#include "ctest.h"
#include "thread_ipc.h"

static int64_t skew_of(uint32_t rank)
{
    return ((int64_t)(rank * 7919u % 2001u) - 1000) * 1000; /* within +-1 ms */
}

typedef struct {
    thread_rank me;
    bool tree;
    int status;
    int64_t offset, bound;
} clock_work;

static int64_t shifted_clock(void *ctx)
{
    const clock_work *w = ctx;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec + skew_of(w->me.rank);
}

static void *clock_rank(void *arg)
{
    clock_work *w = arg;
    sp_ipc ipc = thread_group_ipc(&w->me, true);
    w->status = sp_ipc_clock_offsets(&ipc, w->tree, 4, shifted_clock, w, &w->offset, &w->bound);
    return NULL;
}

static uint32_t hops(uint32_t rank, bool tree)
{
    uint32_t n = 0;
    for (; rank; n++)
        rank = tree ? rank & (rank - 1) : 0; /* the parent: the lowest set bit cleared */
    return n;
}

static void clock_group(uint32_t ranks, bool tree)
{
    thread_group group;
    CHECK(thread_group_init(&group, ranks) == 0);
    clock_work *work = calloc(ranks, sizeof *work);
    pthread_t *threads = calloc(ranks, sizeof *threads);
    for (uint32_t r = 0; r < ranks; r++) {
        work[r] = (clock_work){.me = {&group, r}, .tree = tree};
        CHECK(pthread_create(&threads[r], NULL, clock_rank, &work[r]) == 0);
    }
    for (uint32_t r = 0; r < ranks; r++)
        pthread_join(threads[r], NULL);
    CHECK_EQ_U64(work[0].offset, 0);
    for (uint32_t r = 0; r < ranks; r++) {
        CHECK_EQ_U64(work[r].status, 0);
        int64_t expected = skew_of(0) - skew_of(r);
        int64_t error = work[r].offset - expected;
        if (error < 0)
            error = -error;
        /* + 1 ns per hop: the middle of a round trip rounded down */
        if (error > work[r].bound + hops(r, tree)) {
            fprintf(stderr, "rank %u of %u (%s): offset %lld, expected %lld, bound %lld\n", r,
                    ranks, tree ? "tree" : "direct", (long long)work[r].offset,
                    (long long)expected, (long long)work[r].bound);
            ctest_failures++;
        }
        CHECK(r == 0 || work[r].bound > 0);
    }
    free(work);
    free(threads);
    thread_group_free(&group);
}

static void test_along_the_tree(void)
{
    clock_group(1, true);
    clock_group(2, true);
    clock_group(5, true);
    clock_group(37, true);
}

static void test_directly(void)
{
    clock_group(2, false);
    clock_group(5, false);
    clock_group(37, false);
}

CTEST_MAIN(test_along_the_tree, test_directly)
