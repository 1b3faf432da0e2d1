/* The wait-state replay (core/waitstates.h) on four ranks simulated by threads: constructed
 * operations whose waiting is known by construction, one scenario per call path (cnode). */
#include <math.h>

#include "core/events.h"
#include "core/waitstates.h"
#include "core/waitstates_build.h"
#include "ctest.h"
#include "thread_ipc.h"

#define RANKS 4
#define CNODES 14
#define WORLD 0
#define PAIR 5 /* a communicator of ranks 1 and 3 */
#define WIN 77 /* a window of the world */

static const uint32_t world_members[RANKS] = {0, 1, 2, 3};
static const uint32_t pair_members[2] = {1, 3};

typedef struct {
    thread_rank me; /* first: thread_group_run fills it */
    int status;
    char err[256];
    sp_ws_result r;
} ws_work;

#define SEND(to, tg, t) {SP_WS_SEND, 0, to, tg, SP_NO_ROOT, 0, 0, WORLD, t, t + 5, 0}
#define RECV(from, tg, e, l, cn, compl) {SP_WS_RECV, 0, from, tg, SP_NO_ROOT, cn, compl, WORLD, e, l, 0}
#define COLL(o, rt, cm, e, l, cn) {SP_WS_COLL, o, 0, 0, rt, cn, 0, cm, e, l, 0}
/* a send with its call's times and flags (SP_WS_BLOCKING, SP_WS_EMPTY) */
#define BSEND(to, tg, e, l, cn, fl) {SP_WS_SEND, fl, to, tg, SP_NO_ROOT, cn, 0, WORLD, e, l, 0}
/* a receive with flags, posted at `p` when SP_WS_POSTED */
#define PRECV(from, tg, e, l, cn, fl, p) {SP_WS_RECV, fl, from, tg, SP_NO_ROOT, cn, 0, WORLD, e, l, p}
#define B SP_WS_BLOCKING

static const sp_ws_event rank0[] = {
    SEND(1, 0, 1000),
    RECV(1, 0, 2500, 2600, 1, 0),
    SEND(2, 9, 3000),
    COLL(SP_COLL_BARRIER, SP_NO_ROOT, WORLD, 10000, 10310, 4),
    COLL(SP_COLL_REDUCE, 0, WORLD, 30000, 30500, 6),
    COLL(SP_COLL_ALLREDUCE, SP_NO_ROOT, WORLD, 40000, 40400, 7),
    COLL(SP_COLL_SCAN, SP_NO_ROOT, WORLD, 50000, 50400, 8),
    RECV(3, 0, 59000, 59500, 9, 0), /* before its send: a clock condition violation */
    /* Late Receiver: rank 2 posts its receive 500 after this MPI_Ssend began */
    BSEND(2, 20, 70000, 70800, 11, B),
    /* an eager MPI_Send that left before the receive was posted did not wait */
    BSEND(2, 21, 71000, 71010, 12, B),
    COLL(SP_WS_OP_FENCE, SP_NO_ROOT, WIN, 80000, 80700, 10),
};
static const sp_ws_event rank1[] = {
    RECV(0, 0, 100, 1020, 0, 0), /* Late Sender: 900 */
    SEND(0, 0, 2000),
    SEND(2, 9, 3500),
    COLL(SP_COLL_BARRIER, SP_NO_ROOT, WORLD, 10100, 10320, 4),
    COLL(SP_COLL_BCAST, 1, PAIR, 20500, 20600, 5),
    COLL(SP_COLL_REDUCE, 0, WORLD, 30400, 30500, 6),
    COLL(SP_COLL_ALLREDUCE, SP_NO_ROOT, WORLD, 40100, 40400, 7),
    COLL(SP_COLL_SCAN, SP_NO_ROOT, WORLD, 50300, 50400, 8),
    /* rank 3's MPI_Irecv was posted at 71000, before this send: no Late Receiver, though
     * the MPI_Wait that completed it began after */
    BSEND(3, 22, 72000, 72900, 13, B | SP_WS_EMPTY),
    /* a message without data waits 400 for its receive: a synchronization */
    BSEND(3, 23, 73000, 73600, 12, B | SP_WS_EMPTY),
    COLL(SP_WS_OP_FENCE, SP_NO_ROOT, WIN, 80100, 80700, 10),
};
static const sp_ws_event rank2[] = {
    SEND(3, 1, 100),
    SEND(3, 2, 500),
    /* one Waitall completes both: 1000 and 1500 of waiting count once, as 1500 */
    RECV(0, 9, 2000, 3600, 3, 7),
    RECV(1, 9, 2000, 3600, 3, 7),
    COLL(SP_COLL_BARRIER, SP_NO_ROOT, WORLD, 10300, 10330, 4),
    COLL(SP_COLL_REDUCE, 0, WORLD, 30200, 30500, 6),
    COLL(SP_COLL_ALLREDUCE, SP_NO_ROOT, WORLD, 40200, 40400, 7),
    COLL(SP_COLL_SCAN, SP_NO_ROOT, WORLD, 50100, 50400, 8),
    PRECV(0, 20, 70500, 70810, 11, 0, 0),
    PRECV(0, 21, 71500, 71510, 12, 0, 0),
    COLL(SP_WS_OP_FENCE, SP_NO_ROOT, WIN, 80600, 80700, 10), /* the last to fence */
};
static const sp_ws_event rank3[] = {
    /* waits for tag 2 (sent at 500) while tag 1 (sent at 100) is there: wrong order */
    RECV(2, 2, 200, 510, 2, 0),
    RECV(2, 1, 600, 610, 10, 0),
    COLL(SP_COLL_BARRIER, SP_NO_ROOT, WORLD, 10050, 10340, 4),
    COLL(SP_COLL_BCAST, 1, PAIR, 20000, 20600, 5),
    COLL(SP_COLL_REDUCE, 0, WORLD, 30300, 30500, 6),
    COLL(SP_COLL_ALLREDUCE, SP_NO_ROOT, WORLD, 40300, 40400, 7),
    COLL(SP_COLL_SCAN, SP_NO_ROOT, WORLD, 50200, 50400, 8),
    SEND(0, 0, 60000),
    PRECV(1, 22, 72500, 72910, 13, SP_WS_POSTED | SP_WS_EMPTY, 71000),
    PRECV(1, 23, 73400, 73610, 11, SP_WS_EMPTY, 0),
    COLL(SP_WS_OP_FENCE, SP_NO_ROOT, WIN, 80200, 80700, 10),
};

static const sp_ws_event *const programs[RANKS] = {rank0, rank1, rank2, rank3};
static const size_t lengths[RANKS] = {sizeof rank0 / sizeof rank0[0], sizeof rank1 / sizeof rank1[0],
                                      sizeof rank2 / sizeof rank2[0], sizeof rank3 / sizeof rank3[0]};

/* Runs `body` on `ranks` threads as ranks of one group, each with a result of `cnodes` call
 * paths, and checks that every rank's replay returned 0. */
static void run_group(uint32_t ranks, uint32_t cnodes, void *(*body)(void *), ws_work *work)
{
    thread_group group;
    CHECK(thread_group_init(&group, ranks) == 0);
    for (uint32_t r = 0; r < ranks; r++) {
        memset(&work[r], 0, sizeof work[r]);
        CHECK(sp_ws_result_init(&work[r].r, cnodes) == 0);
    }
    thread_group_run(&group, work, sizeof *work, body);
    for (uint32_t r = 0; r < ranks; r++) {
        if (work[r].status != 0)
            fprintf(stderr, "rank %u: %s\n", r, work[r].err);
        CHECK(work[r].status == 0);
    }
    thread_group_free(&group);
}

static void free_results(ws_work *work, uint32_t ranks)
{
    for (uint32_t r = 0; r < ranks; r++)
        sp_ws_result_free(&work[r].r);
}

static double t(const ws_work *w, uint32_t cnode, sp_ws_metric m)
{
    return w->r.time[cnode * SP_WS_METRIC_COUNT + m];
}

static uint64_t n(const ws_work *w, uint32_t cnode, sp_ws_metric m)
{
    return w->r.count[cnode * SP_WS_METRIC_COUNT + m];
}

static double total(const ws_work *w, sp_ws_metric m)
{
    double sum = 0;
    for (uint32_t c = 0; c < CNODES; c++)
        sum += t(w, c, m);
    return sum;
}

static void *replay_rank(void *arg)
{
    ws_work *w = arg;
    sp_ipc ipc = thread_group_ipc(&w->me, true);
    sp_ws_comm comms[3] = {{PAIR, 2, pair_members}, {WORLD, RANKS, world_members},
                           {WIN, RANKS, world_members}};
    bool in_pair = w->me.rank == 1 || w->me.rank == 3;
    /* In an order that is not the keys' order: the replay sorts them. */
    w->status = sp_ws_replay(&ipc, programs[w->me.rank], lengths[w->me.rank],
                             in_pair ? comms : comms + 1, in_pair ? 3 : 2, &w->r, w->err,
                             sizeof w->err);
    return NULL;
}

static void test_patterns_of_constructed_programs(void)
{
    ws_work work[RANKS];
    run_group(RANKS, CNODES, replay_rank, work);
    for (uint32_t r = 0; r < RANKS; r++) {
        CHECK_EQ_U64(work[r].r.unmatched, 0);
        CHECK_EQ_U64(work[r].r.collectives_skipped, 0);
    }
    const ws_work *w0 = &work[0], *w1 = &work[1], *w2 = &work[2], *w3 = &work[3];
    /* Late Sender */
    CHECK_EQ_U64(t(w1, 0, SP_WS_LATE_SENDER), 900);
    CHECK_EQ_U64(n(w1, 0, SP_WS_LATE_SENDER), 1);
    CHECK_EQ_U64(t(w1, 0, SP_WS_LATE_SENDER_WO), 0);
    CHECK_EQ_U64(total(w0, SP_WS_LATE_SENDER), 0);
    CHECK_EQ_U64(t(w2, 3, SP_WS_LATE_SENDER), 1500);
    CHECK_EQ_U64(n(w2, 3, SP_WS_LATE_SENDER), 1);
    CHECK_EQ_U64(t(w2, 3, SP_WS_LATE_SENDER_WO), 0);
    CHECK_EQ_U64(t(w3, 2, SP_WS_LATE_SENDER), 300);
    CHECK_EQ_U64(t(w3, 2, SP_WS_LATE_SENDER_WO), 300);
    CHECK_EQ_U64(t(w3, 10, SP_WS_LATE_SENDER), 0);
    CHECK_EQ_U64(w0->r.clock_violations, 1);
    CHECK_EQ_U64(w1->r.clock_violations + w2->r.clock_violations + w3->r.clock_violations, 0);
    /* Wait at Barrier, Barrier Completion */
    CHECK_EQ_U64(t(w0, 4, SP_WS_BARRIER_WAIT), 300);
    CHECK_EQ_U64(t(w1, 4, SP_WS_BARRIER_WAIT), 200);
    CHECK_EQ_U64(t(w2, 4, SP_WS_BARRIER_WAIT), 0);
    CHECK_EQ_U64(t(w3, 4, SP_WS_BARRIER_WAIT), 250);
    CHECK_EQ_U64(t(w0, 4, SP_WS_BARRIER_COMPLETION), 0);
    CHECK_EQ_U64(t(w1, 4, SP_WS_BARRIER_COMPLETION), 10);
    CHECK_EQ_U64(t(w2, 4, SP_WS_BARRIER_COMPLETION), 20);
    CHECK_EQ_U64(t(w3, 4, SP_WS_BARRIER_COMPLETION), 30);
    /* Late Broadcast on the pair's communicator: the root (1) enters 500 after rank 3 */
    CHECK_EQ_U64(t(w3, 5, SP_WS_LATE_BROADCAST), 500);
    CHECK_EQ_U64(t(w1, 5, SP_WS_LATE_BROADCAST), 0);
    /* Early Reduce: the root waits for the first other rank (rank 2 at 30200) */
    CHECK_EQ_U64(t(w0, 6, SP_WS_EARLY_REDUCE), 200);
    CHECK_EQ_U64(total(w1, SP_WS_EARLY_REDUCE) + total(w2, SP_WS_EARLY_REDUCE) +
                 total(w3, SP_WS_EARLY_REDUCE), 0);
    /* Wait at N x N */
    CHECK_EQ_U64(t(w0, 7, SP_WS_WAIT_NXN), 300);
    CHECK_EQ_U64(t(w1, 7, SP_WS_WAIT_NXN), 200);
    CHECK_EQ_U64(t(w2, 7, SP_WS_WAIT_NXN), 100);
    CHECK_EQ_U64(t(w3, 7, SP_WS_WAIT_NXN), 0);
    CHECK_EQ_U64(total(w0, SP_WS_NXN_COMPLETION), 0);
    /* Early Scan: rank i waits for the last of ranks 0..i */
    CHECK_EQ_U64(t(w0, 8, SP_WS_EARLY_SCAN), 0);
    CHECK_EQ_U64(t(w1, 8, SP_WS_EARLY_SCAN), 0);
    CHECK_EQ_U64(t(w2, 8, SP_WS_EARLY_SCAN), 200);
    CHECK_EQ_U64(t(w3, 8, SP_WS_EARLY_SCAN), 100);
    /* Late Receiver: on the sender, in the send's call path */
    CHECK_EQ_U64(t(w0, 11, SP_WS_LATE_RECEIVER), 500);
    CHECK_EQ_U64(t(w0, 12, SP_WS_LATE_RECEIVER), 0);
    CHECK_EQ_U64(t(w1, 13, SP_WS_LATE_RECEIVER), 0);
    CHECK_EQ_U64(t(w1, 12, SP_WS_LATE_RECEIVER), 400);
    CHECK_EQ_U64(total(w0, SP_WS_LATE_RECEIVER), 500);
    CHECK_EQ_U64(total(w1, SP_WS_LATE_RECEIVER), 400);
    CHECK_EQ_U64(total(w2, SP_WS_LATE_RECEIVER) + total(w3, SP_WS_LATE_RECEIVER), 0);
    /* the late receives themselves waited for nothing */
    CHECK_EQ_U64(t(w2, 11, SP_WS_LATE_SENDER) + t(w2, 12, SP_WS_LATE_SENDER), 0);
    CHECK_EQ_U64(t(w3, 11, SP_WS_LATE_SENDER) + t(w3, 13, SP_WS_LATE_SENDER), 0);
    /* Scalasca's count metrics: communications (data) and synchronizations (none) */
    CHECK_EQ_U64(t(w0, 11, SP_WS_CLR_COUNT), 1);
    CHECK_EQ_U64(t(w0, 11, SP_WS_SLR_COUNT), 0);
    CHECK_EQ_U64(t(w1, 12, SP_WS_SLR_COUNT), 1);
    CHECK_EQ_U64(t(w1, 12, SP_WS_CLR_COUNT), 0);
    CHECK_EQ_U64(t(w1, 0, SP_WS_CLS_COUNT), 1);
    CHECK_EQ_U64(t(w1, 0, SP_WS_CLSWO_COUNT), 0);
    CHECK_EQ_U64(t(w2, 3, SP_WS_CLS_COUNT), 1); /* one Waitall, one instance */
    CHECK_EQ_U64(t(w3, 2, SP_WS_CLS_COUNT), 1);
    CHECK_EQ_U64(t(w3, 2, SP_WS_CLSWO_COUNT), 1);
    for (uint32_t r = 0; r < RANKS; r++)
        CHECK_EQ_U64(total(&work[r], SP_WS_SLS_COUNT) + total(&work[r], SP_WS_SLSWO_COUNT), 0);
    /* Wait at Fence: until the last member (rank 2) entered */
    CHECK_EQ_U64(t(w0, 10, SP_WS_RMA_WAIT_AT_FENCE), 600);
    CHECK_EQ_U64(t(w1, 10, SP_WS_RMA_WAIT_AT_FENCE), 500);
    CHECK_EQ_U64(t(w2, 10, SP_WS_RMA_WAIT_AT_FENCE), 0);
    CHECK_EQ_U64(t(w3, 10, SP_WS_RMA_WAIT_AT_FENCE), 400);
    CHECK_EQ_U64(t(w0, 10, SP_WS_BARRIER_WAIT) + t(w3, 10, SP_WS_BARRIER_COMPLETION), 0);
    free_results(work, RANKS);
}

/* Members that disagree on a communicator's collectives (an erroneous trace) make every
 * member skip it, without deadlock, and the others still count. */
static void *mismatch_rank(void *arg)
{
    ws_work *w = arg;
    sp_ipc ipc = thread_group_ipc(&w->me, true);
    static const uint32_t members[2] = {0, 1};
    sp_ws_comm comm = {WORLD, 2, members};
    sp_ws_event ev[2] = {COLL(SP_COLL_BARRIER, SP_NO_ROOT, WORLD, 0, 100, 0),
                         COLL(SP_COLL_BARRIER, SP_NO_ROOT, WORLD, 200, 300, 0)};
    w->status = sp_ws_replay(&ipc, ev, w->me.rank == 0 ? 2 : 1, &comm, 1, &w->r, w->err,
                             sizeof w->err);
    return NULL;
}

static void test_disagreeing_members_skip_the_communicator(void)
{
    ws_work work[2];
    run_group(2, 1, mismatch_rank, work);
    CHECK_EQ_U64(work[0].r.collectives_skipped, 2);
    CHECK_EQ_U64(work[1].r.collectives_skipped, 1);
    CHECK_EQ_U64(t(&work[0], 0, SP_WS_BARRIER_WAIT), 0);
    free_results(work, 2);
}

/* A rank whose partner recorded nothing of their message or of their communicator's
 * collectives (recording off there, a filter): nobody waits for the other, nothing counts. */
static void *one_sided_rank(void *arg)
{
    ws_work *w = arg;
    sp_ipc ipc = thread_group_ipc(&w->me, true);
    static const uint32_t members[2] = {0, 1};
    sp_ws_comm comm = {WORLD, 2, members};
    sp_ws_event ev[2] = {SEND(1, 0, 100), COLL(SP_COLL_BARRIER, SP_NO_ROOT, WORLD, 0, 100, 0)};
    w->status = sp_ws_replay(&ipc, ev, w->me.rank == 0 ? 2 : 0, &comm, 1, &w->r, w->err,
                             sizeof w->err);
    return NULL;
}

static void test_partner_that_recorded_nothing(void)
{
    ws_work work[2];
    run_group(2, 1, one_sided_rank, work);
    CHECK_EQ_U64(work[0].r.collectives_skipped, 1);
    CHECK_EQ_U64(work[1].r.unmatched + work[0].r.unmatched, 0);
    CHECK_EQ_U64(t(&work[0], 0, SP_WS_BARRIER_WAIT), 0);
    free_results(work, 2);
}

/* Late Receiver of non-blocking sends completed in MPI_Wait* and the one-sided patterns of
 * general active target synchronization, on three ranks (window WIN2: target 0, origins 1
 * and 2). Fields: kind, flags, peer, tag, root, cnode, completion, comm, enter, leave,
 * posted (a waited send: its Wait's enter). */
#define WIN2 88
#define W SP_WS_WAITED
#define M SP_WS_MULTI
static const sp_ws_event more0[] = {
    /* Isend at 100, its MPI_Wait 200..900 (cnode 1); rank 1 posts the receive at 700 */
    {SP_WS_SEND, W, 1, 30, SP_NO_ROOT, 1, 1, WORLD, 100, 900, 200},
    /* two Isends completed by one MPI_Waitall 1100..2000 (cnode 2): received at 1300 and
     * 1600: one instance, 500 */
    {SP_WS_SEND, W | M, 1, 31, SP_NO_ROOT, 2, 2, WORLD, 1000, 2000, 1100},
    {SP_WS_SEND, W | M, 2, 32, SP_NO_ROOT, 2, 2, WORLD, 1010, 2000, 1100},
    /* a MPI_Waitall 3100..3900 (cnode 3) completing an Isend (received at 3300) and an
     * Irecv whose message was sent at 3500: Late Sender 400, no Late Receiver */
    {SP_WS_SEND, W | M, 1, 33, SP_NO_ROOT, 3, 3, WORLD, 3000, 3900, 3100},
    {SP_WS_RECV, M, 2, 34, SP_NO_ROOT, 3, 3, WORLD, 3100, 3900, 0},
    /* MPI_Win_post at 5000 (cnode 4), MPI_Win_wait 5100..5800 (cnode 5) */
    {SP_WS_GATS_POST, 0, 1, 0, SP_NO_ROOT, 4, 4, WIN2, 5000, 5010, 0},
    {SP_WS_GATS_POST, 0, 2, 0, SP_NO_ROOT, 4, 4, WIN2, 5000, 5010, 0},
    {SP_WS_GATS_WAIT, 0, 1, 0, SP_NO_ROOT, 5, 5, WIN2, 5100, 5800, 0},
    {SP_WS_GATS_WAIT, 0, 2, 0, SP_NO_ROOT, 5, 5, WIN2, 5100, 5800, 0},
};
static const sp_ws_event more1[] = {
    {SP_WS_RECV, 0, 0, 30, SP_NO_ROOT, 0, 11, WORLD, 700, 910, 0},
    {SP_WS_RECV, 0, 0, 31, SP_NO_ROOT, 0, 12, WORLD, 1300, 1400, 0},
    {SP_WS_RECV, 0, 0, 33, SP_NO_ROOT, 0, 13, WORLD, 3300, 3400, 0},
    /* a blocking MPI_Win_start 4000..5020 (cnode 6): the post came at 5000 */
    {SP_WS_GATS_START, 0, 0, 0, SP_NO_ROOT, 6, 14, WIN2, 4000, 5020, 0},
    {SP_WS_GATS_COMPLETE, 0, 0, 0, SP_NO_ROOT, 7, 15, WIN2, 5200, 5210, 0},
};
static const sp_ws_event more2[] = {
    {SP_WS_RECV, 0, 0, 32, SP_NO_ROOT, 0, 21, WORLD, 1600, 1700, 0},
    {SP_WS_SEND, 0, 0, 34, SP_NO_ROOT, 0, 0, WORLD, 3500, 3510, 0},
    /* a start that did not block; the post (5000) fell in MPI_Win_complete 4950..5300 */
    {SP_WS_GATS_START, 0, 0, 0, SP_NO_ROOT, 6, 22, WIN2, 4900, 4905, 0},
    {SP_WS_GATS_COMPLETE, 0, 0, 0, SP_NO_ROOT, 7, 23, WIN2, 4950, 5300, 0},
};

static void *more_rank(void *arg)
{
    ws_work *w = arg;
    static const sp_ws_event *const progs[3] = {more0, more1, more2};
    static const size_t lens[3] = {sizeof more0 / sizeof more0[0], sizeof more1 / sizeof more1[0],
                                   sizeof more2 / sizeof more2[0]};
    sp_ipc ipc = {&thread_group_ops, &w->me, w->me.rank, 3};
    sp_ws_comm comm = {WORLD, 3, world_members};
    w->status = sp_ws_replay(&ipc, progs[w->me.rank], lens[w->me.rank], &comm, 1, &w->r,
                             w->err, sizeof w->err);
    return NULL;
}

static void test_waited_sends_and_active_target(void)
{
    ws_work work[3];
    run_group(3, CNODES, more_rank, work);
    ws_work *w0 = &work[0], *w1 = &work[1], *w2 = &work[2];
    CHECK_EQ_U64(w0->r.unmatched + w1->r.unmatched + w2->r.unmatched, 0);
    /* MPI_Wait: from its enter (200) until the receive was posted (700) */
    CHECK_EQ_U64(t(w0, 1, SP_WS_LATE_RECEIVER), 500);
    CHECK_EQ_U64(n(w0, 1, SP_WS_CLR_COUNT), 1);
    /* MPI_Waitall: the longer of 200 and 500, once */
    CHECK_EQ_U64(t(w0, 2, SP_WS_LATE_RECEIVER), 500);
    CHECK_EQ_U64(t(w0, 2, SP_WS_CLR_COUNT), 1);
    /* a Waitall that was a Late Sender is no Late Receiver */
    CHECK_EQ_U64(t(w0, 3, SP_WS_LATE_SENDER), 400);
    CHECK_EQ_U64(t(w0, 3, SP_WS_LATE_RECEIVER), 0);
    CHECK_EQ_U64(total(w1, SP_WS_LATE_RECEIVER) + total(w2, SP_WS_LATE_RECEIVER), 0);
    /* Late Post: in rank 1's blocking start, in rank 2's complete */
    CHECK_EQ_U64(t(w1, 6, SP_WS_RMA_LATE_POST), 1000);
    CHECK_EQ_U64(t(w1, 7, SP_WS_RMA_LATE_POST), 0);
    CHECK_EQ_U64(t(w2, 6, SP_WS_RMA_LATE_POST), 0);
    CHECK_EQ_U64(t(w2, 7, SP_WS_RMA_LATE_POST), 50);
    CHECK_EQ_U64(total(w0, SP_WS_RMA_LATE_POST), 0);
    /* Early Wait: the target's wait (5100) until the last complete's enter (5200) */
    CHECK_EQ_U64(t(w0, 5, SP_WS_RMA_EARLY_WAIT), 100);
    CHECK_EQ_U64(total(w1, SP_WS_RMA_EARLY_WAIT) + total(w2, SP_WS_RMA_EARLY_WAIT), 0);
    free_results(work, 3);
}

/* The critical path and the delay costs (sp_ws_run with timelines) of two ranks: rank 1
 * runs `slow` (1000 ns) before it sends to rank 0, which waits 1100 in its receive; then
 * both enter MPI_Finalize, rank 0 last. Call paths on both ranks: 0 main, 1 main > slow,
 * 2 main > the send or the receive, 3 main > MPI_Barrier, 4 main > MPI_Finalize. */
#define FIN 99
enum { P_MAIN, P_SLOW, P_MSG, P_BARRIER, P_FINALIZE, P_COUNT };

static void *critical_rank(void *arg)
{
    ws_work *w = arg;
    sp_ipc ipc = {&thread_group_ops, &w->me, w->me.rank, 2};
    static const uint32_t members[2] = {0, 1};
    sp_ws_comm comms[2] = {{WORLD, 2, members}, {FIN, 2, members}};
    bool late = w->me.rank == 1;
    sp_ws_event ev[3] = {
        COLL(SP_COLL_BARRIER, SP_NO_ROOT, WORLD, 0, 100, P_BARRIER),
        late ? (sp_ws_event)BSEND(0, 7, 1250, 1260, P_MSG, 0)
             : (sp_ws_event)RECV(1, 7, 150, 1270, P_MSG, 0),
        late ? (sp_ws_event)COLL(SP_WS_OP_FINALIZE, SP_NO_ROOT, FIN, 1300, 1400, P_FINALIZE)
             : (sp_ws_event)COLL(SP_WS_OP_FINALIZE, SP_NO_ROOT, FIN, 1500, 1600, P_FINALIZE)};
    uint32_t parent[P_COUNT] = {SP_WS_NO_PATH, P_MAIN, P_MAIN, P_MAIN, P_MAIN};
    uint32_t region[P_COUNT] = {0, 1, 2, 3, 4};
    uint32_t location[P_COUNT] = {0, 0, 0, 0, 0};
    /* the same names on both ranks, but for the send and the receive */
    uint64_t hash[P_COUNT] = {11, 12, late ? 13 : 14, 15, 16};
    int64_t late_time[] = {0, 100, 200, 1200, 1250, 1260, 1300, 1400};
    uint32_t late_path[] = {P_BARRIER, P_MAIN, P_SLOW, P_MAIN, P_MSG, P_MAIN, P_FINALIZE,
                            SP_WS_NO_PATH};
    int64_t wait_time[] = {0, 100, 150, 1270, 1500, 1600};
    uint32_t wait_path[] = {P_BARRIER, P_MAIN, P_MSG, P_MAIN, P_FINALIZE, SP_WS_NO_PATH};
    size_t pieces = late ? 8 : 6;
    sp_ws_timeline tl = {0, 0, pieces};
    sp_ws_input in = {
        .events = ev, .count = 3, .comms = comms, .comm_count = 2,
        .path_parent = parent, .path_region = region, .path_location = location,
        .path_hash = hash, .path_count = P_COUNT,
        .piece_time = late ? late_time : wait_time, .piece_path = late ? late_path : wait_path,
        .piece_count = pieces, .timelines = &tl, .timeline_count = 1};
    w->status = sp_ws_run(&ipc, true, &in, &w->r, w->err, sizeof w->err);
    return NULL;
}

static void test_critical_path_and_delay_costs(void)
{
    ws_work work[2];
    run_group(2, P_COUNT, critical_rank, work);
    ws_work *w0 = &work[0], *w1 = &work[1];
    CHECK(w0->status == 0 && w1->status == 0);
    CHECK_EQ_U64(t(w0, P_MSG, SP_WS_LATE_SENDER), 1100);
    CHECK_EQ_U64(t(w1, P_FINALIZE, SP_WS_FINALIZE_WAIT), 100);
    /* The waiting rank 1's send caused, on what rank 1 ran since the barrier [100, 1250):
     * main 150, slow 1000 */
    CHECK(fabs(t(w1, P_SLOW, SP_WS_DELAY_LATESENDER) - 1100.0 * 1000 / 1150) < 1e-6);
    CHECK(fabs(t(w1, P_MAIN, SP_WS_DELAY_LATESENDER) - 1100.0 * 150 / 1150) < 1e-6);
    for (uint32_t c = 0; c < P_COUNT; c++)
        CHECK_EQ_U64(t(w0, c, SP_WS_DELAY_LATESENDER), 0);
    /* the path: from rank 0's MPI_Finalize enter (1500) back to the end of its waiting
     * (1250), then on rank 1 from its send's enter back to its beginning */
    CHECK_EQ_U64(t(w0, P_MAIN, SP_WS_CRITICAL_PATH), 230);
    CHECK_EQ_U64(t(w0, P_MSG, SP_WS_CRITICAL_PATH), 20);
    CHECK_EQ_U64(t(w0, P_BARRIER, SP_WS_CRITICAL_PATH) + t(w0, P_FINALIZE, SP_WS_CRITICAL_PATH), 0);
    CHECK_EQ_U64(t(w1, P_SLOW, SP_WS_CRITICAL_PATH), 1000);
    CHECK_EQ_U64(t(w1, P_MAIN, SP_WS_CRITICAL_PATH), 150);
    CHECK_EQ_U64(t(w1, P_BARRIER, SP_WS_CRITICAL_PATH), 100);
    CHECK_EQ_U64(t(w1, P_MSG, SP_WS_CRITICAL_PATH), 0);
    /* the imbalance: slow 1000 on the path, 500 on average; main 380 on the path, (280 +
     * 190) / 2 without waiting on average, shared 230 : 150; the barrier is balanced; the
     * receive (its own name) 20 on the path, 10 on average */
    CHECK_EQ_U64(t(w1, P_SLOW, SP_WS_CRITICAL_PATH_IMBALANCE), 500);
    CHECK(fabs(t(w0, P_MAIN, SP_WS_CRITICAL_PATH_IMBALANCE) - 145.0 * 230 / 380) < 1e-6);
    CHECK(fabs(t(w1, P_MAIN, SP_WS_CRITICAL_PATH_IMBALANCE) - 145.0 * 150 / 380) < 1e-6);
    CHECK_EQ_U64(t(w1, P_BARRIER, SP_WS_CRITICAL_PATH_IMBALANCE), 0);
    CHECK_EQ_U64(t(w0, P_MSG, SP_WS_CRITICAL_PATH_IMBALANCE), 10);
    free_results(work, 2);
}

/* The critical path across a Late Receiver of a non-blocking send completed in MPI_Wait:
 * rank 0 posts an MPI_Isend at 100 (path Q_MSG), works until 300, then waits in MPI_Wait
 * (Q_WAIT) until rank 1 posts the receive at 1000 (after 990 of work); rank 0 enters
 * MPI_Finalize last, at 1500. Its waiting ended when the receive was posted (1000), not at
 * the Isend's enter plus the waiting (800). */
enum { Q_MAIN, Q_WORK, Q_MSG, Q_WAIT, Q_FINALIZE, Q_COUNT };

static void *waited_send_rank(void *arg)
{
    ws_work *w = arg;
    sp_ipc ipc = {&thread_group_ops, &w->me, w->me.rank, 2};
    static const uint32_t members[2] = {0, 1};
    sp_ws_comm comms[1] = {{FIN, 2, members}};
    bool sender = w->me.rank == 0;
    sp_ws_event ev[2] = {
        sender ? (sp_ws_event){SP_WS_SEND, W, 1, 7, SP_NO_ROOT, Q_WAIT, 1, WORLD, 100, 1010, 300}
               : (sp_ws_event)RECV(0, 7, 1000, 1020, Q_MSG, 0),
        sender ? (sp_ws_event)COLL(SP_WS_OP_FINALIZE, SP_NO_ROOT, FIN, 1500, 1600, Q_FINALIZE)
               : (sp_ws_event)COLL(SP_WS_OP_FINALIZE, SP_NO_ROOT, FIN, 1100, 1600, Q_FINALIZE)};
    uint32_t parent[Q_COUNT] = {SP_WS_NO_PATH, Q_MAIN, Q_MAIN, Q_MAIN, Q_MAIN};
    uint32_t region[Q_COUNT] = {0, 1, 2, 3, 4};
    uint32_t location[Q_COUNT] = {0, 0, 0, 0, 0};
    uint64_t hash[Q_COUNT] = {21, 22, sender ? 23 : 24, 25, 26};
    int64_t s_time[] = {0, 100, 110, 120, 300, 1010, 1500, 1600};
    uint32_t s_path[] = {Q_MAIN, Q_MSG, Q_MAIN, Q_WORK, Q_WAIT, Q_MAIN, Q_FINALIZE,
                         SP_WS_NO_PATH};
    int64_t r_time[] = {0, 10, 1000, 1020, 1100, 1600};
    uint32_t r_path[] = {Q_MAIN, Q_WORK, Q_MSG, Q_MAIN, Q_FINALIZE, SP_WS_NO_PATH};
    size_t pieces = sender ? 8 : 6;
    sp_ws_timeline tl = {0, 0, pieces};
    sp_ws_input in = {
        .events = ev, .count = 2, .comms = comms, .comm_count = 1,
        .path_parent = parent, .path_region = region, .path_location = location,
        .path_hash = hash, .path_count = Q_COUNT,
        .piece_time = sender ? s_time : r_time, .piece_path = sender ? s_path : r_path,
        .piece_count = pieces, .timelines = &tl, .timeline_count = 1};
    w->status = sp_ws_run(&ipc, true, &in, &w->r, w->err, sizeof w->err);
    return NULL;
}

static void test_critical_path_through_a_waited_send(void)
{
    ws_work work[2];
    run_group(2, Q_COUNT, waited_send_rank, work);
    ws_work *w0 = &work[0], *w1 = &work[1];
    /* MPI_Wait from its enter (300) until the receive was posted (1000) */
    CHECK_EQ_U64(t(w0, Q_WAIT, SP_WS_LATE_RECEIVER), 700);
    /* the path: rank 0 from 1500 back to 1000 (MPI_Wait 10, main 490), then rank 1 from
     * its receive's posting (1000) back to its beginning (main 10, work 990) */
    CHECK_EQ_U64(t(w0, Q_MAIN, SP_WS_CRITICAL_PATH), 490);
    CHECK_EQ_U64(t(w0, Q_WAIT, SP_WS_CRITICAL_PATH), 10);
    CHECK_EQ_U64(t(w0, Q_WORK, SP_WS_CRITICAL_PATH), 0);
    CHECK_EQ_U64(t(w1, Q_WORK, SP_WS_CRITICAL_PATH), 990);
    CHECK_EQ_U64(t(w1, Q_MAIN, SP_WS_CRITICAL_PATH), 10);
    free_results(work, 2);
}

/* The builder's compact timelines (waitstates.h) against the plain arrays of the pieces the
 * same events make, by the rule of the plain form (a piece per change of the innermost call
 * path, a piece of no length replaced by the next, a return into the same path not
 * repeated, an end marker): two ranks of two locations each, 300 steps (many blocks), times
 * that step by 0 to 10^10 ns; the pieces decode to the same times and paths, and the
 * replay, the critical path and the delay costs give the same results, bit for bit. */
enum { C_MAIN, C_WORK, C_SEND, C_RECV, C_BARRIER, C_FINALIZE, C_REGIONS };
static const char *const c_names[C_REGIONS] = {"main", "work", "MPI_Send", "MPI_Recv",
                                               "MPI_Barrier", "MPI_Finalize"};
#define C_STEPS 300
#define C_MAX_PIECES 8192

static const char *c_region_name(void *ctx, uint32_t region)
{
    (void)ctx;
    return c_names[region];
}

static bool c_comm(void *ctx, uint32_t c, uint64_t *key, uint32_t *size)
{
    (void)ctx, (void)c;
    *key = 42;
    *size = 2;
    return true;
}

static uint32_t c_member(void *ctx, uint32_t c, uint32_t i)
{
    (void)ctx, (void)c;
    return i;
}

/* One location's events: enter (region >= 0) or leave (-1), and the MPI record after it. */
typedef struct {
    int region; /* -1: leave */
    int64_t ns;
    int mpi; /* 0 none, 1 send, 2 receive, 3 barrier's end */
} c_event;

typedef struct {
    ws_work w[3]; /* compact, plain, plain in rounds of one item */
} c_pair;

#define C_STEP ((int64_t)1 << 36)

/* The length of the work of step s on `rank`: none (a piece replaced), 1 ns, ... 2^34 ns. */
static int64_t c_work(uint32_t rank, int s)
{
    int64_t step = s % 7 == 0 ? 0 : (int64_t)1 << (s * 5 % 34);
    return step * (rank + 1) + 3;
}

static size_t c_events(uint32_t rank, uint32_t loc, c_event *out)
{
    size_t n = 0;
    out[n++] = (c_event){C_MAIN, 0, 0};
    for (int s = 0; s < C_STEPS; s++) {
        int64_t T = (s + 1) * C_STEP;
        out[n++] = (c_event){C_WORK, T, 0};
        out[n++] = (c_event){-1, T + c_work(rank, s), 0};
        if (loc == 1)
            continue;
        /* rank 1 sends after its work, rank 0 receives after its own (shorter): it waits */
        int64_t sent = T + c_work(1, s) + 5;
        out[n++] = (c_event){rank ? C_SEND : C_RECV, T + c_work(rank, s) + 5, 0};
        out[n++] = (c_event){-1, rank ? sent + 2 : sent + 40000, rank ? 1 : 2};
        if (s % 10 == 9) {
            /* the last to enter: rank 1, rank 0 every other time */
            out[n++] = (c_event){C_BARRIER, T + C_STEP / 2 + 100 * (rank ^ (s / 10 % 2)), 0};
            out[n++] = (c_event){-1, T + C_STEP / 2 + 500, 3};
        }
    }
    int64_t end = (C_STEPS + 1) * C_STEP;
    if (loc == 0) {
        out[n++] = (c_event){C_FINALIZE, end + 11 * rank, 0};
        out[n++] = (c_event){-1, end + 100, 0};
    }
    out[n++] = (c_event){-1, end + 200, 0};
    return n;
}

static uint32_t c_find_path(const sp_ws_input *in, uint32_t parent, uint32_t region,
                            uint32_t loc)
{
    for (uint32_t p = 0; p < in->path_count; p++)
        if (in->path_parent[p] == parent && in->path_region[p] == (uint32_t)region &&
            in->path_location[p] == loc)
            return p;
    return SP_WS_NO_PATH - 1;
}

static void *compact_rank(void *arg)
{
    c_pair *pair = arg;
    ws_work *w = &pair->w[0];
    uint32_t rank = w->me.rank;
    sp_ipc ipc = thread_group_ipc(&w->me, true);
    static c_event ev[2][2][C_STEPS * 10];
    size_t nev[2];
    sp_ws_source src = {NULL, 2, C_REGIONS, 1, 0, c_region_name, c_comm, c_member,
                        NULL, 0, NULL, NULL};
    sp_ws_input in;
    memset(&in, 0, sizeof in);
    sp_ws_builder *b = sp_ws_builder_new(&src, &in);
    for (uint32_t loc = 0; loc < 2; loc++) {
        nev[loc] = c_events(rank, loc, ev[rank][loc]);
        CHECK(sp_ws_builder_location(b, loc) == 0);
        for (size_t i = 0; i < nev[loc]; i++) {
            const c_event *e = &ev[rank][loc][i];
            if (e->region >= 0)
                CHECK(sp_ws_builder_enter(b, (uint32_t)e->region, e->ns) == 0);
            if (e->mpi == 1)
                CHECK(sp_ws_builder_send(b, 0, 0, 5, 8, true, SP_WS_NO_REQUEST) == 0);
            if (e->mpi == 2)
                CHECK(sp_ws_builder_recv(b, 0, 1, 5, 8, SP_WS_NO_REQUEST) == 0);
            if (e->mpi == 3)
                CHECK(sp_ws_builder_collective(b, 0, SP_COLL_BARRIER, UINT64_MAX) == 0);
            if (e->region < 0)
                CHECK(sp_ws_builder_leave(b, e->ns) == 0);
        }
    }
    CHECK(sp_ws_builder_finish(b) == 0);
    /* the pieces by the plain form's rule */
    static int64_t ptime[2][C_MAX_PIECES];
    static uint32_t ppath[2][C_MAX_PIECES];
    size_t np = 0;
    for (uint32_t loc = 0; loc < 2; loc++) {
        uint32_t stack[8];
        size_t depth = 0, first = np;
        int64_t last = 0;
        for (size_t i = 0; i <= nev[loc]; i++) {
            const c_event *e = &ev[rank][loc][i < nev[loc] ? i : nev[loc] - 1];
            uint32_t path;
            int64_t ns = e->ns;
            if (i == nev[loc]) {
                path = SP_WS_NO_PATH; /* the end marker */
                ns = last;
            } else if (e->region >= 0) {
                path = c_find_path(&in, depth ? stack[depth - 1] : SP_WS_NO_PATH,
                                   (uint32_t)e->region, loc);
                stack[depth++] = path;
            } else {
                depth--;
                path = depth ? stack[depth - 1] : SP_WS_NO_PATH;
            }
            last = ns;
            if (np > first && ppath[rank][np - 1] == path)
                continue;
            if (np > first && ptime[rank][np - 1] >= ns) {
                ppath[rank][np - 1] = path;
                continue;
            }
            ptime[rank][np] = ns;
            ppath[rank][np++] = path;
        }
    }
    CHECK_EQ_U64(in.piece_count, np);
    CHECK(in.piece_time == NULL && in.piece_block_count > 2 &&
          in.piece_block_count >= np / SP_WS_PIECE_BLOCK);
    CHECK(in.piece_bytes_size < 5 * np); /* against 12 bytes a piece in the plain form */
    size_t same = 0;
    for (size_t i = 0; i < np && i < in.piece_count; i++) {
        int64_t time;
        uint32_t path;
        sp_ws_input_piece(&in, i, &time, &path);
        same += time == ptime[rank][i] && path == ppath[rank][i];
    }
    CHECK_EQ_U64(same, np);
    CHECK(sp_ws_result_init(&w->r, in.path_count) == 0);
    w->status = sp_ws_run(&ipc, true, &in, &w->r, w->err, sizeof w->err);
    /* the same input with the plain arrays */
    sp_ws_input plain = in;
    plain.piece_time = ptime[rank];
    plain.piece_path = ppath[rank];
    ws_work *v = &pair->w[1];
    CHECK(sp_ws_result_init(&v->r, in.path_count) == 0);
    v->status = sp_ws_run(&ipc, true, &plain, &v->r, v->err, sizeof v->err);
    /* rank 0's backward steps in rounds of one item per rank: the same as in one round */
    plain.round_items = 1;
    ws_work *u = &pair->w[2];
    CHECK(sp_ws_result_init(&u->r, in.path_count) == 0);
    u->status = sp_ws_run(&ipc, true, &plain, &u->r, u->err, sizeof u->err);
    sp_ws_input_free(&in);
    return NULL;
}

static void test_compact_timelines_give_the_same_results(void)
{
    c_pair pair[2];
    memset(pair, 0, sizeof pair);
    thread_group group;
    CHECK(thread_group_init(&group, 2) == 0);
    thread_group_run(&group, pair, sizeof *pair, compact_rank);
    thread_group_free(&group);
    for (int r = 0; r < 2; r++) {
        ws_work *a = &pair[r].w[0], *b = &pair[r].w[1], *u = &pair[r].w[2];
        CHECK(a->status == 0 && b->status == 0 && u->status == 0);
        CHECK_EQ_U64(a->r.cnode_count, b->r.cnode_count);
        size_t cells = (size_t)a->r.cnode_count * SP_WS_METRIC_COUNT;
        CHECK(memcmp(a->r.time, b->r.time, cells * sizeof *a->r.time) == 0);
        CHECK(memcmp(a->r.count, b->r.count, cells * sizeof *a->r.count) == 0);
        CHECK(memcmp(a->r.time, u->r.time, cells * sizeof *a->r.time) == 0);
        CHECK(memcmp(a->r.count, u->r.count, cells * sizeof *a->r.count) == 0);
        double longterm = 0;
        for (uint32_t c = 0; c < a->r.cnode_count; c++)
            for (int m = SP_WS_DELAY_LATESENDER_LONGTERM; m < SP_WS_METRIC_COUNT; m += 2)
                longterm += a->r.time[c * SP_WS_METRIC_COUNT + m];
        CHECK(r == 0 || longterm > 0); /* rank 1 passes waiting on: something to compare */
        sp_ws_result_free(&u->r);
        double cp = 0, delay = 0, ls = 0;
        for (uint32_t c = 0; c < a->r.cnode_count; c++) {
            cp += a->r.time[c * SP_WS_METRIC_COUNT + SP_WS_CRITICAL_PATH];
            delay += a->r.time[c * SP_WS_METRIC_COUNT + SP_WS_DELAY_LATESENDER];
            ls += a->r.time[c * SP_WS_METRIC_COUNT + SP_WS_LATE_SENDER];
        }
        /* something to compare: the path crosses both ranks, rank 1 caused rank 0's waiting */
        CHECK(cp > 0);
        CHECK(r == 0 ? ls > 0 : delay > 0);
        sp_ws_result_free(&a->r);
        sp_ws_result_free(&b->r);
    }
}

CTEST_MAIN(test_patterns_of_constructed_programs, test_disagreeing_members_skip_the_communicator,
           test_partner_that_recorded_nothing, test_waited_sends_and_active_target,
           test_critical_path_and_delay_costs, test_critical_path_through_a_waited_send,
           test_compact_timelines_give_the_same_results)
