/* Clock offsets at the end of a run, simulated: RANKS threads as ranks whose clocks are the
 * machine's shifted by up to +-1 ms (tests/c/clock_ranks.h, shared with the test), measured
 * by sp_ipc_clock_offsets along the binomial tree (tree) or by rank 0 with every rank
 * (direct), ROUNDS ping-pongs per pair. Prints the wall time, the largest and mean error
 * against the known shifts, and the largest error bound the measurement reported. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_ranks.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: clock_driver RANKS ROUNDS tree|direct\n");
        return 2;
    }
    uint32_t ranks = (uint32_t)atoi(argv[1]), rounds = (uint32_t)atoi(argv[2]);
    bool tree = strcmp(argv[3], "tree") == 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_work *work = clock_ranks_run(ranks, tree, rounds);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!work)
        return 1;
    double max_error = 0, sum_error = 0, max_bound = 0;
    for (uint32_t r = 0; r < ranks; r++) {
        if (work[r].status != 0) {
            fprintf(stderr, "rank %u failed\n", r);
            return 1;
        }
        double e = (double)(work[r].offset - clock_expected_offset(r));
        e = e < 0 ? -e : e;
        sum_error += e;
        max_error = e > max_error ? e : max_error;
        max_bound = (double)work[r].bound > max_bound ? (double)work[r].bound : max_bound;
    }
    printf("ranks=%u wall_seconds=%.6f max_error_us=%.3f mean_error_us=%.3f max_bound_us=%.3f\n",
           ranks, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9,
           max_error / 1e3, sum_error / ranks / 1e3, max_bound / 1e3);
    free(work);
    return 0;
}
