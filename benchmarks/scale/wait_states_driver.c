/* Drives the wait-state analysis as a traced MPI run does at its end (core/substrates.h,
 * sp_substrates_wait_states): each simulated rank holds its trace as the trace substrate's
 * raw records (substrates/trace/trace.h, record lengths from encode.c), reads them into the
 * core's builder (core/waitstates_build.h) with the substrate's own reading
 * (sp_trace_wait_state_records: the operations, every call path interned, each location's
 * timeline) and runs sp_ws_run with
 * the other ranks (the replay, the critical path and the delay costs). The ranks are threads
 * of one process, grouped by an in-process sp_ipc (tests/c/thread_ipc.h). Prints one line of
 * measurements; benchmarks/wait_states.py and end_scale.py run it.
 *
 *     wait_states_driver RANKS EVENTS_PER_RANK
 *
 * EVENTS_PER_RANK counts the trace's events (enter, leave and MPI records). Each rank runs an
 * mpi4py ring program: per step, step() calls compute() > kernel() (20-27 us, varying with
 * the rank and the step: the left neighbour is often late), then Comm.Irecv > MPI_Irecv,
 * Comm.Send > MPI_Send (blocking, eager), Request.Wait > MPI_Wait (completes the receive);
 * every 16th step Comm.Allreduce > MPI_Allreduce, every 64th Comm.Barrier > MPI_Barrier;
 * MPI_Init at the start and MPI_Finalize at the end, all inside the module's region. That
 * is 6 enter/leave events per MPI call (the benchmark's real mpi4py ring had 5.6). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "core/events.h"
#include "core/waitstates.h"
#include "core/waitstates_build.h"
#include "rank_memory.h"
#include "substrates/trace/trace_internal.h"
#include "thread_ipc.h"

static uint32_t ranks;
static size_t events_per_rank;

enum { R_MODULE, R_STEP, R_COMPUTE, R_KERNEL, R_COMM_IRECV, R_MPI_IRECV, R_COMM_SEND,
       R_MPI_SEND, R_REQ_WAIT, R_MPI_WAIT, R_COMM_ALLREDUCE, R_MPI_ALLREDUCE, R_COMM_BARRIER,
       R_MPI_BARRIER, R_MPI_INIT, R_MPI_FINALIZE, R_COUNT };
static const char *const region_names[R_COUNT] = {
    "__main__", "__main__:step", "__main__:compute", "__main__:kernel",
    "mpi4py.MPI:Comm.Irecv", "MPI_Irecv", "mpi4py.MPI:Comm.Send", "MPI_Send",
    "mpi4py.MPI:Request.Wait", "MPI_Wait", "mpi4py.MPI:Comm.Allreduce", "MPI_Allreduce",
    "mpi4py.MPI:Comm.Barrier", "MPI_Barrier", "MPI_Init", "MPI_Finalize"};
#define WORLD_KEY 0x5eed0001u
#define STEP_NS 40000 /* every step of every rank fits into it: collectives leave together */

typedef struct {
    thread_rank me; /* first: thread_group_run fills it */
    int status;
    char err[256];
    double seconds, cpu_seconds, build_cpu, run_cpu;
    double waiting_ns, critical_path_ns;
    uint64_t trace_bytes, events, mpi_ops, enter_leave, pieces, paths, operations;
    int64_t live_before; /* what the rank held before the analysis: its trace */
    int64_t built;       /* what the builder's result (sp_ws_input) holds, bytes */
    uint64_t digest;     /* of every value of its result, bit for bit */
} rank_work;

static double now(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* The trace of one rank being written (buf NULL: only counted). */
typedef struct {
    sp_trace_record *buf;
    size_t records, events, mpi_ops, enter_leave;
} trace_out;

static void put(trace_out *o, int64_t ns, uint32_t kind, uint32_t ref, uint64_t a, uint64_t b,
                uint64_t a2, uint64_t b2)
{
    sp_trace_record r = {(uint64_t)ns, kind, ref};
    unsigned len = sp_trace_record_length(&r);
    if (o->buf) {
        o->buf[o->records] = r;
        if (len > 1)
            *(sp_trace_payload *)&o->buf[o->records + 1] = (sp_trace_payload){a, b};
        if (len > 2)
            *(sp_trace_payload *)&o->buf[o->records + 2] = (sp_trace_payload){a2, b2};
    }
    o->records += len;
    o->events++;
    o->enter_leave += kind == SP_REC_ENTER || kind == SP_REC_LEAVE;
}

static void enter(trace_out *o, int64_t ns, uint32_t region)
{
    put(o, ns, SP_REC_ENTER, region, 0, 0, 0, 0);
    o->mpi_ops += !strncmp(region_names[region], "MPI_", 4);
}

static void leave(trace_out *o, int64_t ns, uint32_t region)
{
    put(o, ns, SP_REC_LEAVE, region, 0, 0, 0, 0);
}

/* How long rank r computes in step s (ns). */
static int64_t compute_ns(uint32_t r, uint64_t s)
{
    return 20000 + (int64_t)((r * 7 + s * 13) % 8) * 1000;
}

/* When rank r's step s sends to its right neighbour. */
static int64_t send_enter(uint32_t r, uint64_t s, int64_t step_begin)
{
    return step_begin + 300 + compute_ns(r, s) + 600;
}

/* Rank r's trace until it has `events_per_rank` events (the last step completed). */
static void write_trace(trace_out *o, uint32_t r)
{
    const uint32_t left = (r + ranks - 1) % ranks, right = (r + 1) % ranks;
    enter(o, 0, R_MODULE);
    enter(o, 100 + r * 10, R_MPI_INIT);
    leave(o, 10000, R_MPI_INIT);
    int64_t T = 20000;
    for (uint64_t s = 0; o->events + 40 < events_per_rank; s++, T += STEP_NS) {
        enter(o, T, R_STEP);
        int64_t c = compute_ns(r, s);
        enter(o, T + 100, R_COMPUTE);
        enter(o, T + 200, R_KERNEL);
        leave(o, T + 200 + c, R_KERNEL);
        leave(o, T + 300 + c, R_COMPUTE);
        int64_t a = T + 300 + c;
        uint32_t tag = (uint32_t)(s % 8);
        enter(o, a + 100, R_COMM_IRECV);
        enter(o, a + 200, R_MPI_IRECV);
        put(o, a + 250, SP_REC_MPI_IRECV_REQUEST, 0, s, 0, 0, 0);
        leave(o, a + 300, R_MPI_IRECV);
        leave(o, a + 400, R_COMM_IRECV);
        enter(o, a + 500, R_COMM_SEND);
        enter(o, send_enter(r, s, T), R_MPI_SEND);
        put(o, a + 650, SP_REC_MPI_SEND, 0, 32, (uint64_t)right << 32 | tag, 0, 0);
        leave(o, a + 700, R_MPI_SEND);
        leave(o, a + 800, R_COMM_SEND);
        enter(o, a + 900, R_REQ_WAIT);
        int64_t w = a + 1000, arrived = send_enter(left, s, T) + 500;
        int64_t done = (arrived > w ? arrived : w) + 100;
        enter(o, w, R_MPI_WAIT);
        put(o, done - 50, SP_REC_MPI_IRECV, 0, 32, (uint64_t)left << 32 | tag, s, 0);
        leave(o, done, R_MPI_WAIT);
        leave(o, done + 100, R_REQ_WAIT);
        int64_t t = done + 200;
        for (int k = 0; k < 2; k++) {
            bool barrier = k == 1;
            if (!(barrier ? s % 64 == 63 : s % 16 == 15))
                continue;
            /* every rank leaves together, after the last one entered */
            int64_t out = T + STEP_NS - (barrier ? 500 : 1500);
            enter(o, t, barrier ? R_COMM_BARRIER : R_COMM_ALLREDUCE);
            enter(o, t + 100, barrier ? R_MPI_BARRIER : R_MPI_ALLREDUCE);
            put(o, t + 150, SP_REC_MPI_COLLECTIVE_BEGIN, 0, 0, 0, 0, 0);
            put(o, out - 50, SP_REC_MPI_COLLECTIVE_END, 0, barrier ? 0 : 32, barrier ? 0 : 32,
                barrier ? SP_COLL_BARRIER : SP_COLL_ALLREDUCE, UINT32_MAX);
            leave(o, out, barrier ? R_MPI_BARRIER : R_MPI_ALLREDUCE);
            leave(o, out + 100, barrier ? R_COMM_BARRIER : R_COMM_ALLREDUCE);
            t = out + 200;
        }
        leave(o, t, R_STEP);
    }
    enter(o, T + 100 + r * 10, R_MPI_FINALIZE);
    leave(o, T + 10000, R_MPI_FINALIZE);
    leave(o, T + 10100, R_MODULE);
}

/* The builder's questions (sp_ws_source), answered from the program's one communicator. */
static const char *region_name(void *ctx, uint32_t region)
{
    (void)ctx;
    return region < R_COUNT ? region_names[region] : NULL;
}

static bool comm_of(void *ctx, uint32_t comm, uint64_t *key, uint32_t *size)
{
    (void)ctx;
    if (comm != 0)
        return false;
    *key = WORLD_KEY;
    *size = ranks;
    return true;
}

static uint32_t member_of(void *ctx, uint32_t comm, uint32_t i)
{
    (void)ctx, (void)comm;
    return i;
}

static bool window_of(void *ctx, uint32_t win, uint64_t *key, uint32_t *comm)
{
    (void)ctx, (void)win, (void)key, (void)comm;
    return false;
}

/* The rank's one location into the builder, read as the end of a traced run reads its
 * records (the trace substrate's own reading; the times are ns on the common clock). */
static int read_trace(sp_ws_builder *b, const sp_trace_record *r, const sp_trace_record *end)
{
    int status = sp_ws_builder_location(b, 0);
    if (status == 0)
        status = sp_trace_wait_state_records(b, r, end, NULL, NULL);
    return status;
}

static int metric_index(const char *name)
{
    for (int m = 0; m < SP_WS_METRIC_COUNT; m++)
        if (!strcmp(sp_ws_metric_names[m], name))
            return m;
    return -1;
}

static void *run_rank(void *arg)
{
    rank_work *w = arg;
    uint32_t r = w->me.rank;
    rank_memory_enter(r); /* the rank's trace counts too: the analysis comes on top of it */
    trace_out count = {0};
    write_trace(&count, r);
    trace_out trace = {.buf = malloc(count.records * sizeof(sp_trace_record))};
    w->status = -1;
    if (!trace.buf)
        return NULL;
    write_trace(&trace, r);
    w->trace_bytes = trace.records * sizeof(sp_trace_record);
    w->events = trace.events;
    w->mpi_ops = trace.mpi_ops;
    w->enter_leave = trace.enter_leave;
    w->live_before = atomic_load(&rm_live[r]);

    sp_ws_source source = {
        .group_size = ranks,
        .region_count = R_COUNT,
        .comm_count = 1,
        .region_name = region_name,
        .comm = comm_of,
        .member = member_of,
        .window = window_of,
    };
    sp_ipc ipc = thread_group_ipc(&w->me, true);
    (void)ipc.ops->barrier(ipc.ctx); /* every rank's clock starts together */
    double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
    sp_ws_input in;
    memset(&in, 0, sizeof in);
    sp_ws_builder *b = sp_ws_builder_new(&source, &in);
    int built = b ? read_trace(b, trace.buf, trace.buf + trace.records) : -1;
    bool ready = sp_ws_builder_finish(b) == 0 && built == 0;
    sp_ws_result result;
    memset(&result, 0, sizeof result);
    if (ready && sp_ws_result_init(&result, in.path_count) != 0)
        ready = false;
    w->built = atomic_load(&rm_live[r]) - w->live_before;
    double c1 = now(CLOCK_THREAD_CPUTIME_ID);
    w->status = sp_ws_run(&ipc, ready, &in, &result, w->err, sizeof w->err);
    double c2 = now(CLOCK_THREAD_CPUTIME_ID);
    w->build_cpu = c1 - c0;
    w->run_cpu = c2 - c1;
    w->cpu_seconds = c2 - c0;
    w->seconds = now(CLOCK_MONOTONIC) - t0;
    int cp = metric_index("critical_path");
    for (uint32_t i = 0; w->status == 0 && i < result.cnode_count; i++) {
        const double *row = result.time + (size_t)i * SP_WS_METRIC_COUNT;
        for (int m = 0; m < SP_WS_METRIC_COUNT; m++)
            if (!strcmp(sp_ws_metric_unit[m], "sec") && !strncmp(sp_ws_metric_names[m], "mpi_", 4) &&
                m != SP_WS_LATE_SENDER_WO) /* a part of Late Sender */
                w->waiting_ns += row[m];
        if (cp >= 0)
            w->critical_path_ns += row[cp];
    }
    /* FNV-1a over the result's bits: a change of the data layout must not move a value */
    uint64_t h = 14695981039346656037ull;
    const unsigned char *bytes[2] = {(const unsigned char *)result.time,
                                     (const unsigned char *)result.count};
    size_t cells = (size_t)result.cnode_count * SP_WS_METRIC_COUNT;
    for (int a = 0; w->status == 0 && a < 2; a++)
        for (size_t i = 0; i < cells * 8; i++)
            h = (h ^ bytes[a][i]) * 1099511628211ull;
    uint64_t tail[3] = {result.clock_violations, result.unmatched, result.collectives_skipped};
    for (size_t i = 0; i < sizeof tail; i++)
        h = (h ^ ((const unsigned char *)tail)[i]) * 1099511628211ull;
    w->digest = h;
    w->operations = in.count;
    w->paths = in.path_count;
#if WS_TIMELINES /* the tree before the critical path has none (benchmarks/wait_states.py) */
    w->pieces = in.piece_count;
#endif
    sp_ws_result_free(&result);
    sp_ws_input_free(&in);
    free(trace.buf);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: wait_states_driver RANKS EVENTS_PER_RANK\n");
        return 2;
    }
    ranks = (uint32_t)strtoul(argv[1], NULL, 10);
    events_per_rank = (size_t)strtoull(argv[2], NULL, 10);
    if (ranks < 2) {
        fprintf(stderr, "wait_states_driver: at least 2 ranks\n");
        return 2;
    }
    thread_group group;
    if (thread_group_init(&group, ranks) != 0)
        return 1;
    rank_work *work = calloc(ranks, sizeof *work);
    if (!work || rank_memory_init(&group, ranks) != 0)
        return 1;
    thread_group_run(&group, work, sizeof *work, run_rank);
    struct rusage after;
    getrusage(RUSAGE_SELF, &after);
    double max_seconds = 0, max_cpu = 0, max_build = 0, max_run = 0, waiting = 0, cp = 0;
    double max_extra = 0, max_trace = 0, max_built = 0, max_other = 0;
    uint64_t received = 0, digest = 0;
    for (uint32_t r = 0; r < ranks; r++) {
        rank_work *w = &work[r];
        if (w->status != 0) {
            fprintf(stderr, "rank %u: %s\n", r, w->err[0] ? w->err : "out of memory");
            return 1;
        }
        max_seconds = w->seconds > max_seconds ? w->seconds : max_seconds;
        max_cpu = w->cpu_seconds > max_cpu ? w->cpu_seconds : max_cpu;
        max_build = w->build_cpu > max_build ? w->build_cpu : max_build;
        max_run = w->run_cpu > max_run ? w->run_cpu : max_run;
        /* the most the analysis held at once beside the rank's trace */
        double extra = (double)(rank_memory_peak(r) - w->live_before);
        max_extra = extra > max_extra ? extra : max_extra;
        if (r != 0) /* rank 0 also walks the critical path for everyone */
            max_other = extra > max_other ? extra : max_other;
        max_built = (double)w->built > max_built ? (double)w->built : max_built;
        max_trace = (double)w->trace_bytes > max_trace ? (double)w->trace_bytes : max_trace;
        waiting += w->waiting_ns;
        cp += w->critical_path_ns;
        received += group.received[r];
        digest = digest * 1099511628211ull ^ w->digest;
    }
    const rank_work *w0 = &work[0];
    printf("ranks=%u events_per_rank=%" PRIu64 " mpi_ops_per_rank=%" PRIu64
           " enter_leave_per_rank=%" PRIu64 " operations_per_rank=%" PRIu64
           " paths_per_rank=%" PRIu64 " pieces_per_rank=%" PRIu64 " trace_mb_per_rank=%.3f"
           " wall=%.3f max_rank_cpu=%.3f max_build_cpu=%.3f max_run_cpu=%.3f"
           " analysis_peak_mb=%.3f analysis_per_trace=%.3f other_peak_mb=%.3f built_mb=%.3f"
           " peak_rss_mb=%.1f"
           " input_mb_per_rank=%.3f exchanged_mb=%.1f waiting_s=%.6f critical_path_s=%.6f"
           " root_wall=%.6f root_cpu=%.6f root_peak_mb=%.3f root_received_mb=%.3f"
           " results_digest=%016" PRIx64 "\n",
           ranks, w0->events, w0->mpi_ops, w0->enter_leave, w0->operations, w0->paths,
           w0->pieces, max_trace / 1048576.0, max_seconds, max_cpu, max_build, max_run,
           max_extra / 1048576.0, max_trace > 0 ? max_extra / max_trace : 0,
           max_other / 1048576.0, max_built / 1048576.0,
           after.ru_maxrss / 1024.0, w0->operations * sizeof(sp_ws_event) / 1048576.0,
           received / 1048576.0, waiting * 1e-9, cp * 1e-9, w0->seconds, w0->cpu_seconds,
           rank_memory_peak(0) / 1048576.0, group.received[0] / 1048576.0, digest);
    return 0;
}
