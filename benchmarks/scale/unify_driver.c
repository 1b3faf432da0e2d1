/* Drives the core's real unification (core/unify.c) with synthetic definitions of P
 * simulated ranks: threads of one process, grouped by an in-process sp_ipc
 * (tests/c/thread_ipc.h). Prints one line of measurements; benchmarks/unify_scale.py runs it
 * for growing P and fits the growth.
 *
 *     unify_driver RANKS REGIONS SHARED_PERCENT LOCATIONS tree|root
 *
 * Each rank defines REGIONS regions; SHARED_PERCENT of them are the same on every rank
 * (same name, file and line: what ranks of one program share), the others are the rank's own,
 * plus LOCATIONS threads. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "core/unify.h"
#include "rank_memory.h"
#include "thread_ipc.h"

static uint32_t nregions, shared_percent, nlocations;
/* Along a tree (point-to-point messages) or everything at the root. Set once in main. */
static bool tree;

typedef struct {
    thread_rank me; /* first: thread_group_run fills it */
    int status;
    char err[256];
    uint64_t report_bytes; /* what this rank serialized (its definitions) */
    double seconds;        /* sp_unify on this rank, waiting included */
    double cpu_seconds;    /* what this rank computed (its thread's CPU time) */
    sp_unified u;
} rank_work;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static void *rank_main(void *arg)
{
    rank_work *w = arg;
    rank_memory_enter(w->me.rank);
    sp_defs defs;
    if (sp_defs_init(&defs) != 0) {
        w->status = -1;
        return NULL;
    }
    uint32_t shared = nregions * shared_percent / 100;
    char name[128], file[128];
    for (uint32_t i = 0; i < nregions; i++) {
        if (i < shared) {
            snprintf(name, sizeof name, "package.module_%u.Class_%u:method_%u", i / 50, i / 10, i);
            snprintf(file, sizeof file, "/home/user/project/package/module_%u.py", i / 50);
        } else {
            snprintf(name, sizeof name, "package.rank_%u.Class:method_%u", w->me.rank, i);
            snprintf(file, sizeof file, "/home/user/project/package/rank_%u.py", w->me.rank);
        }
        sp_defs_new_region(&defs, name, NULL, file, (int32_t)(i % 1000 + 1), -1,
                           SP_PARADIGM_USER, SP_ROLE_FUNCTION, SP_REGION_PYTHON);
    }
    sp_unified_location *locations = calloc(nlocations, sizeof *locations);
    for (uint32_t l = 0; l < nlocations; l++) {
        snprintf(name, sizeof name, l ? "Thread-%u" : "MainThread", l);
        locations[l] = (sp_unified_location){.id = ((uint64_t)l << 32) | w->me.rank,
                                             .name = sp_defs_string(&defs, name),
                                             .events = 1000};
    }
    snprintf(name, sizeof name, "MPI Rank %u", w->me.rank);
    snprintf(file, sizeof file, "node%u", w->me.rank / 48);
    sp_unified_rank mine = {.rank = w->me.rank, .name = sp_defs_string(&defs, name),
                            .host = sp_defs_string(&defs, file), .thread_requested = -1,
                            .thread_provided = -1, .location_count = nlocations,
                            .locations = locations};
    for (size_t i = 0; i < defs.strings.count; i++)
        w->report_bytes += strlen(defs.strings.strings[i]) + 1;
    w->report_bytes += (uint64_t)defs.region_count * 28;
    sp_ipc ipc = thread_group_ipc(&w->me, tree);
    ipc.ops->barrier(ipc.ctx);
    double start = now();
    struct timespec cpu0, cpu1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
    w->status = sp_unify(&ipc, &defs, &mine, NULL, 0, &w->u, w->err, sizeof w->err);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
    w->seconds = now() - start;
    w->cpu_seconds = (double)(cpu1.tv_sec - cpu0.tv_sec) + (cpu1.tv_nsec - cpu0.tv_nsec) * 1e-9;
    free(locations);
    sp_defs_free(&defs);
    if (w->me.rank != 0)
        sp_unified_free(&w->u);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 6 || (strcmp(argv[5], "tree") != 0 && strcmp(argv[5], "root") != 0)) {
        fprintf(stderr, "usage: unify_driver RANKS REGIONS SHARED_PERCENT LOCATIONS tree|root\n");
        return 2;
    }
    tree = strcmp(argv[5], "tree") == 0;
    uint32_t ranks = (uint32_t)strtoul(argv[1], NULL, 10);
    nregions = (uint32_t)strtoul(argv[2], NULL, 10);
    shared_percent = (uint32_t)strtoul(argv[3], NULL, 10);
    nlocations = (uint32_t)strtoul(argv[4], NULL, 10);
    thread_group group;
    if (thread_group_init(&group, ranks) != 0)
        return 1;
    rank_work *work = calloc(ranks, sizeof *work);
    if (!work || rank_memory_init(&group, ranks) != 0)
        return 1;
    thread_group_run(&group, work, sizeof *work, rank_main);
    double slowest = 0, busiest = 0;
    uint64_t gathered = 0;
    for (uint32_t r = 0; r < ranks; r++) {
        if (work[r].status != 0) {
            fprintf(stderr, "rank %u: %s\n", r, work[r].err);
            return 1;
        }
        if (work[r].seconds > slowest)
            slowest = work[r].seconds;
        if (work[r].cpu_seconds > busiest)
            busiest = work[r].cpu_seconds;
        gathered += work[r].report_bytes;
    }
    const sp_unified *u = &work[0].u;
    uint64_t global_bytes = 0;
    for (size_t i = 0; i < u->global.strings.count; i++)
        global_bytes += strlen(u->global.strings.strings[i]) + 1;
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    printf("ranks=%u regions=%u global_regions=%u wall_seconds=%.6f root_cpu_seconds=%.6f "
           "busiest_cpu_seconds=%.6f reported_bytes=%" PRIu64 " root_received_bytes=%" PRIu64
           " global_string_bytes=%" PRIu64 " root_peak_bytes=%" PRId64 " peak_rss_kb=%ld\n",
           ranks, nregions, u->global.region_count, slowest, work[0].cpu_seconds, busiest,
           gathered, group.received[0], global_bytes, rank_memory_peak(0), usage.ru_maxrss);
    sp_unified_free(&work[0].u);
    thread_group_free(&group);
    free(work);
    return 0;
}
