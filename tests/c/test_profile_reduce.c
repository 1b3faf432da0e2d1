/* The profile's call trees merged along the binomial tree (substrates/profile/reduce.c) give
 * the root what gathering every rank's trees gives it, byte for byte: the CUBE file written
 * from them holds the same values per location. Ranks simulated by threads (thread_ipc.h). */
#include "ctest.h"
#include "substrates/profile/profile_internal.h"
#include "core/waitstates.h"
#include "thread_ipc.h"

/* Rank r's trees in sp_profile_serialize_trees' layout: a program root, call paths every
 * rank shares, some shared by a few ranks, one of the rank's own, parameter nodes, and
 * I/O, metric, folded and wait-state sections on some ranks. Every value depends on the rank, the
 * location and the node. `damaged`: cut short in the middle of a node. */
static void rank_trees(uint32_t r, bool damaged, sp_buffer *b)
{
    enum { SHARED = 20 };
    uint32_t nlocs = 1 + (r % 3 == 1);
    sp_buffer_u32(b, nlocs);
    for (uint32_t l = 0; l < nlocs; l++) {
        sp_buffer_u32(b, r % 11 == 7 ? 100000 + r : r); /* a child process's group now and then */
        sp_buffer_u32(b, 500 + l);
        uint32_t count = 1 + 2 * SHARED + 3;
        sp_buffer_u32(b, count);
        uint32_t i = 0;
#define NODE(parent, region, kind, parameter, value)                                         \
    do {                                                                                     \
        sp_buffer_u32(b, parent);                                                            \
        sp_buffer_u32(b, region);                                                            \
        sp_buffer_u32(b, kind);                                                              \
        sp_buffer_u32(b, parameter);                                                         \
        sp_buffer_u64(b, value);                                                             \
        sp_buffer_u64(b, (uint64_t)r * 1000 + l * 100 + i);                                  \
        for (int v_ = 0; v_ < 5; v_++)                                                       \
            sp_buffer_u64(b, (r + v_) % 3 ? 0 : i * 10 + v_);                                \
        sp_buffer_f64(b, (r + 1) * 0.001 * (i + 1));                                         \
        sp_buffer_f64(b, (r + 1) * 0.0001 * (i + 1));                                        \
        sp_buffer_f64(b, (r + 1) * 0.0002 * (i + 1));                                        \
        i++;                                                                                 \
    } while (0)
        /* a program of its own on every 13th rank (a spawned program) */
        NODE(SP_PROFILE_NO_NODE, r % 13 == 5 ? 1u : 0u, SP_NODE_REGION, 0u, 0u);
        for (uint32_t k = 0; k < SHARED; k++) {
            uint32_t at = i;
            NODE(0u, 10 + (k + r * (l + 1)) % SHARED, SP_NODE_REGION, 0u, 0u);
            NODE(at, 100 + (k * 7 + r) % 5, SP_NODE_REGION, 0u, 0u);
        }
        NODE(1u, 1000 + r, SP_NODE_REGION, 0u, 0u);
        NODE(1u, 10u, SP_NODE_PARAMETER_INT, 2u, (uint64_t)(int64_t)((int)(r % 4) - 1));
        if (damaged) {
            b->size -= 30;
            return;
        }
        NODE(2u, 10u, SP_NODE_PARAMETER_STRING, 3u, 50 + r % 2);
#undef NODE
        /* I/O */
        uint32_t nio = r % 2;
        sp_buffer_u32(b, nio);
        for (uint32_t e = 0; e < nio; e++) {
            sp_buffer_u32(b, 1 + e);
            for (int k = 0; k < 2 * SP_IO_PARADIGM_COUNT; k++)
                sp_buffer_u64(b, r * 7 + k);
        }
        /* metrics */
        uint32_t rows = r % 3 == 0 ? count : 0;
        sp_buffer_u32(b, 2);
        sp_buffer_u32(b, rows);
        for (uint32_t k = 0; k < 2 * rows; k++)
            sp_buffer_u64(b, r * 31 + k);
        /* folded calls */
        uint32_t nf = r % 2;
        sp_buffer_u32(b, nf);
        for (uint32_t e = 0; e < nf; e++) {
            sp_buffer_u32(b, 1);
            sp_buffer_u32(b, 1000 + r);
            sp_buffer_u64(b, r);
            for (int k = 0; k < 3; k++)
                sp_buffer_f64(b, r * 0.5 + k);
        }
        sp_buffer_u32(b, nf);
        for (uint32_t e = 0; e < nf; e++) {
            sp_buffer_u32(b, 0);
            sp_buffer_u32(b, 10);
            sp_buffer_u64(b, r + 1);
            sp_buffer_u64(b, r + 2);
            for (int k = 0; k < 3; k++)
                sp_buffer_f64(b, r * 0.25 + k);
        }
        /* wait states (MPI ranks of a traced run) */
        uint32_t nwait = r % 4 == 1 ? count : 0;
        sp_buffer_u32(b, nwait);
        for (uint32_t k = 0; k < nwait * SP_WS_METRIC_COUNT; k++)
            sp_buffer_f64(b, r * 0.125 + k);
    }
}

typedef struct {
    thread_rank me; /* first: thread_group_run fills it */
    uint32_t damaged_rank;
    int status;
    void *all;
    uint64_t *sizes;
    uint32_t nchunks;
} reduce_work;

static void *reduce_rank(void *arg)
{
    reduce_work *w = arg;
    sp_buffer mine;
    sp_buffer_init(&mine);
    rank_trees(w->me.rank, w->me.rank == w->damaged_rank, &mine);
    sp_ipc ipc = thread_group_ipc(&w->me, true);
    w->status = mine.failed ? -1
                            : sp_profile_reduce(&ipc, mine.data, mine.size, &w->all, &w->sizes,
                                                &w->nchunks);
    sp_buffer_free(&mine);
    return NULL;
}

/* `ranks` ranks reduce; the root's result is compared with every rank's trees concatenated
 * (what the gather gives). With a damaged rank the root fails and nobody waits forever. */
static void reduce_group(uint32_t ranks, uint32_t damaged_rank)
{
    thread_group group;
    CHECK(thread_group_init(&group, ranks) == 0);
    reduce_work *work = calloc(ranks, sizeof *work);
    CHECK(work != NULL);
    for (uint32_t r = 0; r < ranks; r++)
        work[r] = (reduce_work){.damaged_rank = damaged_rank};
    thread_group_run(&group, work, sizeof *work, reduce_rank);
    if (damaged_rank < ranks) {
        CHECK(work[0].status == -1);
        CHECK(work[0].all == NULL);
    } else {
        for (uint32_t r = 0; r < ranks; r++)
            CHECK_EQ_U64(work[r].status, 0);
        CHECK_EQ_U64(work[0].nchunks, ranks);
        sp_buffer expected;
        sp_buffer_init(&expected);
        uint64_t offset = 0;
        int mismatches = 0;
        for (uint32_t r = 0; r < ranks && work[0].sizes; r++) {
            size_t at = expected.size;
            rank_trees(r, false, &expected);
            uint64_t size = expected.size - at;
            if (work[0].sizes[r] != size ||
                memcmp((const char *)work[0].all + offset, expected.data + at, size) != 0) {
                if (mismatches++ < 3)
                    fprintf(stderr, "rank %u of %u: the reduced trees differ from the rank's\n",
                            r, ranks);
                ctest_failures++;
            }
            offset += work[0].sizes[r];
        }
        CHECK(work[0].sizes != NULL);
        /* What the root received: each call path once per subtree, not once per location:
         * less than the gather would have put into its memory. */
        if (ranks >= 37)
            CHECK(group.received[0] < expected.size);
        sp_buffer_free(&expected);
    }
    for (uint32_t r = 0; r < ranks; r++) {
        free(work[r].all);
        free(work[r].sizes);
    }
    free(work);
    thread_group_free(&group);
}

static void test_one_rank(void) { reduce_group(1, UINT32_MAX); }
static void test_two_ranks(void) { reduce_group(2, UINT32_MAX); }
static void test_five_ranks(void) { reduce_group(5, UINT32_MAX); }
static void test_37_ranks(void) { reduce_group(37, UINT32_MAX); }
static void test_10000_ranks(void) { reduce_group(10000, UINT32_MAX); }
static void test_a_damaged_subtree_fails_at_the_root(void)
{
    reduce_group(37, 22);
    reduce_group(5, 0);
}

CTEST_MAIN(test_one_rank, test_two_ranks, test_five_ranks, test_37_ranks, test_10000_ranks,
           test_a_damaged_subtree_fails_at_the_root)
