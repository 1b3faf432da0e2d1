/* Clock offsets measured along the binomial tree and composed, and directly by rank 0 with
 * every rank (core/ipc.c, sp_ipc_clock_offsets), with ranks simulated by threads whose clocks
 * are the machine's shifted by a known amount (clock_ranks.h): every estimate is within the
 * error bound the measurement reports (half the shortest round trip per hop, summed). */
#include "clock_ranks.h"
#include "ctest.h"

static uint32_t hops(uint32_t rank, bool tree)
{
    uint32_t n = 0;
    for (; rank; n++)
        rank = tree ? rank & (rank - 1) : 0; /* the parent: the lowest set bit cleared */
    return n;
}

static void clock_group(uint32_t ranks, bool tree)
{
    clock_work *work = clock_ranks_run(ranks, tree, 4);
    CHECK(work != NULL);
    if (!work)
        return;
    CHECK_EQ_U64(work[0].offset, 0);
    for (uint32_t r = 0; r < ranks; r++) {
        CHECK_EQ_U64(work[r].status, 0);
        int64_t expected = clock_expected_offset(r);
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
