/* Drives the core's real wait-state replay (core/waitstates.c) with synthetic MPI
 * operations of P simulated ranks: threads of one process, grouped by an in-process sp_ipc
 * (tests/c/thread_ipc.h). Prints one line of measurements; benchmarks/wait_states.py runs it.
 *
 *     wait_states_driver RANKS EVENTS_PER_RANK
 *
 * Each rank's program: a ring exchange (send to the right, receive from the left, every
 * receive 1 us late for even ranks), and every 16th step an MPI_Allreduce on the world and
 * every 64th a barrier, until it has EVENTS_PER_RANK operations. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "core/events.h"
#include "core/waitstates.h"
#include "rank_memory.h"
#include "thread_ipc.h"

static uint32_t ranks;
static size_t events_per_rank;
static uint32_t *world;

typedef struct {
    thread_rank me; /* first: thread_group_run fills it */
    int status;
    char err[256];
    double seconds, cpu_seconds;
    double waiting_ns;
    uint64_t received_bytes;
} rank_work;

static double now(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static void *run_rank(void *arg)
{
    rank_work *w = arg;
    uint32_t r = w->me.rank;
    rank_memory_enter(r); /* the rank's input (its operations) counts too */
    sp_ws_event *ev = malloc(events_per_rank * sizeof *ev);
    sp_ws_result result;
    if (!ev || sp_ws_result_init(&result, 4) != 0) {
        w->status = -1;
        return NULL;
    }
    int64_t t = 1000;
    size_t n = 0;
    for (uint64_t step = 0; n < events_per_rank; step++) {
        sp_ws_event e;
        memset(&e, 0, sizeof e);
        e.root = SP_NO_ROOT;
        if (step % 64 == 63 || step % 16 == 15) {
            e.kind = SP_WS_COLL;
            e.op = step % 64 == 63 ? SP_COLL_BARRIER : SP_COLL_ALLREDUCE;
            e.cnode = step % 64 == 63 ? 2 : 3;
            e.enter = t + (int64_t)(r * 100);
            e.leave = t + (int64_t)(ranks * 100) + 50;
            ev[n++] = e;
            t += (int64_t)(ranks * 100) + 1000;
            continue;
        }
        e.kind = SP_WS_SEND;
        e.op = SP_WS_BLOCKING; /* the backward pass (Late Receiver) runs for every message */
        e.peer = (r + 1) % ranks;
        e.tag = (uint32_t)(step % 8);
        e.enter = t + (r % 2 ? 0 : 1000);
        e.leave = e.enter + 100;
        ev[n++] = e;
        if (n == events_per_rank)
            break;
        e.kind = SP_WS_RECV;
        e.op = 0;
        e.peer = (r + ranks - 1) % ranks;
        e.enter = t + 500;
        e.leave = t + 2000;
        e.cnode = 1;
        ev[n++] = e;
        t += 3000;
    }
    /* The last step may have sent without its receive: keep the ring's pairs whole. */
    if (ev[n - 1].kind == SP_WS_SEND)
        n--;
    sp_ipc ipc = thread_group_ipc(&w->me, true);
    sp_ws_comm comm = {0, ranks, world};
    (void)ipc.ops->barrier(ipc.ctx); /* every rank's clock starts together */
    double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
    w->status = sp_ws_replay(&ipc, ev, n, &comm, 1, &result, w->err, sizeof w->err);
    w->cpu_seconds = now(CLOCK_THREAD_CPUTIME_ID) - c0;
    w->seconds = now(CLOCK_MONOTONIC) - t0;
    for (uint32_t i = 0; i < 4 * SP_WS_METRIC_COUNT; i++)
        w->waiting_ns += result.time[i];
    sp_ws_result_free(&result);
    free(ev);
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
    world = malloc(ranks * sizeof *world);
    for (uint32_t r = 0; r < ranks; r++)
        world[r] = r;
    thread_group group;
    if (thread_group_init(&group, ranks) != 0)
        return 1;
    rank_work *work = calloc(ranks, sizeof *work);
    if (!work || rank_memory_init(&group, ranks) != 0)
        return 1;
    thread_group_run(&group, work, sizeof *work, run_rank);
    struct rusage after;
    getrusage(RUSAGE_SELF, &after);
    double max_seconds = 0, max_cpu = 0, waiting = 0;
    uint64_t received = 0;
    for (uint32_t r = 0; r < ranks; r++) {
        if (work[r].status != 0) {
            fprintf(stderr, "rank %u: %s\n", r, work[r].err);
            return 1;
        }
        if (work[r].seconds > max_seconds)
            max_seconds = work[r].seconds;
        if (work[r].cpu_seconds > max_cpu)
            max_cpu = work[r].cpu_seconds;
        waiting += work[r].waiting_ns;
        received += group.received[r];
    }
    printf("ranks=%u events_per_rank=%zu wall=%.3f max_rank_cpu=%.3f peak_rss_mb=%.1f "
           "input_mb_per_rank=%.1f exchanged_mb=%.1f waiting_s=%.6f root_wall=%.6f "
           "root_cpu=%.6f root_peak_mb=%.3f root_received_mb=%.3f\n",
           ranks, events_per_rank, max_seconds, max_cpu, after.ru_maxrss / 1024.0,
           events_per_rank * sizeof(sp_ws_event) / 1048576.0, received / 1048576.0,
           waiting * 1e-9, work[0].seconds, work[0].cpu_seconds,
           rank_memory_peak(0) / 1048576.0, group.received[0] / 1048576.0);
    return 0;
}
