/* The profile's collection at the end of a run, simulated: RANKS threads as ranks
 * (tests/c/thread_ipc.h), each with LOCATIONS call trees of PATHS call paths in the layout
 * sp_profile_serialize_trees writes (default metrics: visits and three times; 90 % of the
 * call paths the same on every rank, the rest the rank's own), collected at rank 0 by the
 * gather (root) or merged along the binomial tree (tree, substrates/profile/reduce.c).
 * Prints rank 0's CPU time for the collection, the bytes it received, the bytes it holds at
 * the end (what it received, or the trees it got back), the most it held at once (its own
 * trees included; measured by rank_memory.h) and the process's peak RSS. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "substrates/profile/profile_internal.h"
#include "rank_memory.h"
#include "thread_ipc.h"

static bool use_tree;
static uint32_t npaths, nlocations;

typedef struct {
    thread_rank me; /* first: thread_group_run fills it */
    int status;
    double cpu_seconds;
    void *all;
    uint64_t *sizes;
    uint32_t nchunks;
    uint64_t held;
} rank_work;

static void trees(uint32_t rank, sp_buffer *b)
{
    sp_buffer_u32(b, nlocations);
    for (uint32_t l = 0; l < nlocations; l++) {
        sp_buffer_u32(b, rank);
        sp_buffer_u32(b, 1 + l);
        sp_buffer_u32(b, npaths);
        for (uint32_t i = 0; i < npaths; i++) {
            bool own = i % 10 == 9;
            sp_buffer_u32(b, i ? (i - 1) / 8 : SP_PROFILE_NO_NODE); /* 8 callees per caller */
            sp_buffer_u32(b, own ? 100000 + rank * npaths + i : i);
            sp_buffer_u32(b, SP_NODE_REGION);
            sp_buffer_u32(b, 0);
            sp_buffer_u64(b, 0);
            sp_buffer_u64(b, 1 + i % 7);         /* visits */
            for (int k = 0; k < 5; k++)          /* no MPI bytes, no samples */
                sp_buffer_u64(b, 0);
            sp_buffer_f64(b, 1e-3 * (i + 1));    /* time, min, max */
            sp_buffer_f64(b, 1e-4 * (i + 1));
            sp_buffer_f64(b, 2e-4 * (i + 1));
        }
        sp_buffer_u32(b, 0); /* no I/O */
        sp_buffer_u32(b, 0); /* no metrics */
        sp_buffer_u32(b, 0);
        sp_buffer_u32(b, 0); /* nothing folded */
        sp_buffer_u32(b, 0);
        sp_buffer_u32(b, 0); /* no wait states */
    }
}

static void *rank_main(void *arg)
{
    rank_work *w = arg;
    rank_memory_enter(w->me.rank);
    sp_buffer mine;
    sp_buffer_init(&mine);
    trees(w->me.rank, &mine);
    sp_ipc ipc = thread_group_ipc(&w->me, use_tree);
    struct timespec cpu0, cpu1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
    if (use_tree) {
        w->status = sp_profile_reduce(&ipc, mine.data, mine.size, &w->all, &w->sizes,
                                      &w->nchunks);
    } else {
        w->sizes = calloc(ipc.size, sizeof *w->sizes);
        w->status = sp_ipc_gather_bytes(&ipc, mine.data, mine.size, &w->all, w->sizes);
        w->nchunks = ipc.size;
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
    w->cpu_seconds = (double)(cpu1.tv_sec - cpu0.tv_sec) + (cpu1.tv_nsec - cpu0.tv_nsec) * 1e-9;
    for (uint32_t c = 0; w->all && c < w->nchunks; c++)
        w->held += w->sizes[c];
    sp_buffer_free(&mine);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: profile_driver RANKS PATHS LOCATIONS tree|root\n");
        return 2;
    }
    uint32_t ranks = (uint32_t)atoi(argv[1]);
    npaths = (uint32_t)atoi(argv[2]);
    nlocations = (uint32_t)atoi(argv[3]);
    use_tree = strcmp(argv[4], "tree") == 0;
    thread_group group;
    if (thread_group_init(&group, ranks) != 0)
        return 1;
    rank_work *work = calloc(ranks, sizeof *work);
    if (!work || rank_memory_init(&group, ranks) != 0)
        return 1;
    thread_group_run(&group, work, sizeof *work, rank_main);
    for (uint32_t r = 0; r < ranks; r++)
        if (work[r].status != 0) {
            fprintf(stderr, "rank %u failed\n", r);
            return 1;
        }
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    printf("ranks=%u root_cpu_seconds=%.6f root_received_bytes=%" PRIu64
           " root_held_bytes=%" PRIu64 " root_peak_bytes=%" PRId64 " peak_rss_kb=%ld\n",
           ranks, work[0].cpu_seconds, group.received[0], work[0].held, rank_memory_peak(0),
           usage.ru_maxrss);
    for (uint32_t r = 0; r < ranks; r++) {
        free(work[r].all);
        free(work[r].sizes);
    }
    free(work);
    thread_group_free(&group);
    return 0;
}
