/* profile.cubex at the end of a run, simulated: RANKS threads as ranks (tests/c/thread_ipc.h),
 * each with LOCATIONS call trees of PATHS call paths (SHARED percent of them the same on every
 * rank, the rest the rank's own; default metrics: visits, time, min and max time), written by
 * the real writer into DIR: streamed (stream: call paths along the binomial tree, rows in
 * blocks, substrates/profile/stream.c) or flat (flat: every rank's trees gathered and merged
 * at rank 0, write.c). WRITE_BYTES (optional, streamed only): the least bytes of a row per
 * writer for the rows to be written by several ranks (0: the default, 64 KB; "alone": rank 0
 * writes every row). Prints rank 0's CPU time for the whole (collection, merge, file), the
 * most it held at once (measured by rank_memory.h, its own trees included), the bytes it
 * received, the file's size, the process's peak RSS, the number of ranks that wrote rows and
 * the most CPU time any rank took. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "substrates/profile/profile_internal.h"
#include "rank_memory.h"
#include "thread_ipc.h"

static bool use_stream;
static uint32_t npaths, nlocations, shared_percent;
static sp_measurement *meas;
static sp_unified unified;
static const char *dir;

typedef struct {
    thread_rank me; /* first: thread_group_run fills it */
    int status;
    double cpu_seconds;
    char err[256];
} rank_work;

static bool own_path(uint32_t i)
{
    return i % 100 >= shared_percent;
}

static void trees(uint32_t rank, sp_buffer *b)
{
    sp_buffer_u32(b, nlocations);
    for (uint32_t l = 0; l < nlocations; l++) {
        sp_buffer_u32(b, rank);
        sp_buffer_u32(b, 1 + l);
        sp_buffer_u32(b, npaths);
        for (uint32_t i = 0; i < npaths; i++) {
            sp_buffer_u32(b, i ? (i - 1) / 8 : SP_PROFILE_NO_NODE); /* 8 callees per caller */
            sp_buffer_u32(b, own_path(i) ? npaths + rank * npaths + i : i);
            sp_buffer_u32(b, SP_NODE_REGION);
            sp_buffer_u32(b, 0);
            sp_buffer_u64(b, 0);
            sp_buffer_u64(b, 1 + (i + rank) % 7); /* visits */
            for (int k = 0; k < 5; k++)           /* no MPI bytes, no samples */
                sp_buffer_u64(b, 0);
            sp_buffer_f64(b, 1e-3 * (i + 1) + 1e-9 * rank); /* time, min, max */
            sp_buffer_f64(b, 1e-4 * (i + 1));
            sp_buffer_f64(b, 2e-4 * (i + 1));
        }
        for (int k = 0; k < 6; k++) /* no I/O, metrics, folded calls, wait states */
            sp_buffer_u32(b, 0);
    }
}

static void *rank_main(void *arg)
{
    rank_work *w = arg;
    rank_memory_enter(w->me.rank);
    sp_buffer mine;
    sp_buffer_init(&mine);
    trees(w->me.rank, &mine);
    sp_ipc ipc = thread_group_ipc(&w->me, use_stream);
    struct timespec cpu0, cpu1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
    w->status = sp_profile_write_collected(meas, &unified, &ipc, mine.data, mine.size, dir,
                                           w->err, sizeof w->err);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
    w->cpu_seconds = (double)(cpu1.tv_sec - cpu0.tv_sec) + (cpu1.tv_nsec - cpu0.tv_nsec) * 1e-9;
    sp_buffer_free(&mine);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 7 && argc != 8) {
        fprintf(stderr,
                "usage: cube_driver RANKS PATHS LOCATIONS SHARED stream|flat DIR [WRITE_BYTES]\n");
        return 2;
    }
    uint64_t write_bytes = 0;
    if (argc == 8)
        write_bytes = strcmp(argv[7], "alone") == 0 ? UINT64_MAX : strtoull(argv[7], NULL, 10);
    sp_profile_stream_write_bytes = write_bytes;
    uint32_t ranks = (uint32_t)atoi(argv[1]);
    npaths = (uint32_t)atoi(argv[2]);
    nlocations = (uint32_t)atoi(argv[3]);
    shared_percent = (uint32_t)atoi(argv[4]);
    use_stream = strcmp(argv[5], "stream") == 0;
    dir = argv[6];
    /* the root's definitions (made before the ranks start: not counted as a rank's) */
    meas = calloc(1, sizeof *meas);
    meas->config.creator = "scorep cube_driver";
    meas->config.machine_name = "simulated";
    meas->config.program_name = "prog";
    meas->config.profile_base_name = "profile";
    meas->config.max_callpath_depth = 30;
    if (!meas || sp_defs_init(&unified.global) != 0)
        return 1;
    char text[48];
    for (uint32_t k = 0; k < nlocations + 2; k++) {
        snprintf(text, sizeof text, "thread %u", k);
        (void)sp_defs_string(&unified.global, text);
    }
    uint64_t regions = npaths;
    for (uint32_t i = 0; i < npaths; i++)
        if (own_path(i))
            regions = npaths + (uint64_t)ranks * npaths;
    for (uint64_t k = 0; k <= regions; k++) {
        snprintf(text, sizeof text, "mod:f%" PRIu64, k);
        (void)sp_defs_new_region(&unified.global, text, text, "mod.py", 1, 2, SP_PARADIGM_USER,
                                 SP_ROLE_FUNCTION, SP_REGION_PYTHON);
    }
    unified.ranks = calloc(ranks, sizeof *unified.ranks);
    unified.rank_count = ranks;
    for (uint32_t r = 0; r < ranks; r++)
        unified.ranks[r] = (sp_unified_rank){.rank = r, .name = 1, .node = 0};
    static uint32_t node = 1;
    unified.nodes = &node;
    unified.node_count = 1;

    thread_group group;
    if (thread_group_init(&group, ranks) != 0)
        return 1;
    rank_work *work = calloc(ranks, sizeof *work);
    if (!work || rank_memory_init(&group, ranks) != 0)
        return 1;
    struct timespec wall0, wall1;
    clock_gettime(CLOCK_MONOTONIC, &wall0);
    thread_group_run(&group, work, sizeof *work, rank_main);
    clock_gettime(CLOCK_MONOTONIC, &wall1);
    for (uint32_t r = 0; r < ranks; r++)
        if (work[r].status != 0) {
            fprintf(stderr, "rank %u failed: %s\n", r, work[r].err);
            return 1;
        }
    char path[4096];
    snprintf(path, sizeof path, "%s/profile.cubex", dir);
    struct stat st;
    if (stat(path, &st) != 0)
        return 1;
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    /* the writers as stream.c chooses them: every G-th rank, G the least power of two whose
     * ranks hold on average write_bytes of a row */
    double slice = write_bytes ? (double)write_bytes : 65536.0;
    uint64_t locs = (uint64_t)ranks * nlocations, per_writer = 1;
    while (per_writer < ranks && (double)per_writer * locs * 8 < slice * ranks)
        per_writer <<= 1;
    uint32_t writers =
        use_stream && per_writer < ranks ? (uint32_t)((ranks + per_writer - 1) / per_writer) : 1;
    double max_cpu = 0, total_cpu = 0;
    uint32_t max_rank = 0;
    for (uint32_t r = 0; r < ranks; r++)
        total_cpu += work[r].cpu_seconds;
    for (uint32_t r = 0; r < ranks; r++)
        if (work[r].cpu_seconds > max_cpu) {
            max_cpu = work[r].cpu_seconds;
            max_rank = r;
        }
    printf("ranks=%u root_cpu_seconds=%.6f root_peak_bytes=%" PRId64
           " root_received_bytes=%" PRIu64 " file_bytes=%lld wall_seconds=%.3f"
           " peak_rss_kb=%ld writers=%u max_cpu_seconds=%.6f max_cpu_rank=%u"
           " total_cpu_seconds=%.3f\n",
           ranks, work[0].cpu_seconds, rank_memory_peak(0), group.received[0],
           (long long)st.st_size,
           (double)(wall1.tv_sec - wall0.tv_sec) + (wall1.tv_nsec - wall0.tv_nsec) * 1e-9,
           usage.ru_maxrss, writers, max_cpu, max_rank, total_cpu);
    free(work);
    thread_group_free(&group);
    return 0;
}
