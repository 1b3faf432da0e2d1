/* Clock offsets at the end of a run, simulated: RANKS threads as ranks (tests/c/thread_ipc.h)
 * whose clocks are the machine's shifted by up to +-1 ms, measured by sp_ipc_clock_offsets
 * along the binomial tree (tree) or by rank 0 with every rank (direct), ROUNDS ping-pongs per
 * pair. Prints the wall time, the largest and mean error against the known shifts, and the
 * largest error bound the measurement reported. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ipc.h"
#include "thread_ipc.h"

typedef struct {
    thread_rank me;
    bool tree;
    uint32_t rounds;
    int status;
    int64_t offset, bound;
} clock_work;

static int64_t skew_of(uint32_t rank)
{
    return ((int64_t)(rank * 7919u % 2001u) - 1000) * 1000;
}

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
    w->status = sp_ipc_clock_offsets(&ipc, w->tree, w->rounds, shifted_clock, w, &w->offset,
                                     &w->bound);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: clock_driver RANKS ROUNDS tree|direct\n");
        return 2;
    }
    uint32_t ranks = (uint32_t)atoi(argv[1]), rounds = (uint32_t)atoi(argv[2]);
    bool tree = strcmp(argv[3], "tree") == 0;
    thread_group group;
    if (thread_group_init(&group, ranks) != 0)
        return 1;
    clock_work *work = calloc(ranks, sizeof *work);
    pthread_t *threads = calloc(ranks, sizeof *threads);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 128 * 1024);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint32_t r = 0; r < ranks; r++) {
        work[r] = (clock_work){.me = {&group, r}, .tree = tree, .rounds = rounds};
        if (pthread_create(&threads[r], &attr, clock_rank, &work[r]) != 0)
            return 1;
    }
    for (uint32_t r = 0; r < ranks; r++)
        pthread_join(threads[r], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double max_error = 0, sum_error = 0, max_bound = 0;
    for (uint32_t r = 0; r < ranks; r++) {
        if (work[r].status != 0) {
            fprintf(stderr, "rank %u failed\n", r);
            return 1;
        }
        double e = (double)(work[r].offset - (skew_of(0) - skew_of(r)));
        e = e < 0 ? -e : e;
        sum_error += e;
        max_error = e > max_error ? e : max_error;
        max_bound = (double)work[r].bound > max_bound ? (double)work[r].bound : max_bound;
    }
    printf("ranks=%u wall_seconds=%.6f max_error_us=%.3f mean_error_us=%.3f max_bound_us=%.3f\n",
           ranks, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9,
           max_error / 1e3, sum_error / ranks / 1e3, max_bound / 1e3);
    return 0;
}
