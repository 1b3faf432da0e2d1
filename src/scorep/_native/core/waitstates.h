/* Wait-state analysis of MPI programs: Scalasca's patterns (Late Sender, Wait at Barrier, ...)
 * computed by replaying the MPI operations of every rank of a group together.
 *
 * The engine knows neither OTF2 nor the trace substrate's records: a caller turns its own
 * events (the trace substrate's records at the end of a run, an OTF2 archive offline) into
 * the neutral operations below, one array per rank in the order they happened, with
 * timestamps on one clock for the whole group (the clock offsets applied). Every rank of the
 * group calls sp_ws_replay with its own operations; the replay re-enacts each message and
 * each collective over the group interface (core/ipc.h, point to point) with the
 * timestamps as payload:
 *   - messages: one batch per pair of ranks that exchanged messages, in both directions
 *     (pairs visited in one global order, so blocking sends cannot deadlock);
 *   - collectives: per communicator, its members send their instances' times to the lowest
 *     rank, which computes everyone's waiting and sends each member its part.
 * The traffic grows like the program's own communication, not with the group size squared.
 *
 * Definitions (Scalasca's pattern documentation; times are ns on the common clock):
 *   Late Sender      receiver: min(send enter, receive leave) - receive enter, when > 0; a
 *                    receive completed by MPI_Wait* counts from the enter of that call, and
 *                    the receives one call completed (Waitall) count once, with their maximum
 *   LS, Wrong Order  a Late Sender instance while a message sent earlier (by the time the
 *                    receiver began waiting) was still to be received by it
 *   Late Receiver    sender, in a blocking send (SP_WS_BLOCKING: MPI_Send, MPI_Ssend,
 *                    MPI_Rsend) that was still in the call when the receive was posted:
 *                    receive posted - send enter, when > 0 (Scalasca's rule: a send that
 *                    left before the receive was posted did not wait, so an eager MPI_Send
 *                    counts only when it did block). A non-blocking send completed in
 *                    MPI_Wait (SP_WS_WAITED) waits there the same way, from the Wait's
 *                    enter; the sends one MPI_Waitall/any/some completed (SP_WS_MULTI)
 *                    count once, with their maximum, and not at all when a receive of
 *                    that call was a Late Sender (its time is counted there). Computed in
 *                    the backward pass: each receiver returns to each sender, per message,
 *                    when it posted the receive (MPI_Irecv's enter for a receive completed
 *                    in MPI_Wait*).
 *   Wait at Barrier  min(last member's enter, own leave) - own enter (MPI_Barrier)
 *   Barrier Compl.   own leave - first member's leave
 *   Wait at NxN, NxN Completion: the same for Allreduce, Allgather(v), Alltoall(v,w),
 *                    Reduce_scatter(_block)
 *   Late Broadcast   non-root: min(root's enter, own leave) - own enter (Bcast, Scatter(v))
 *   Early Reduce     root: min(first non-root's enter, own leave) - own enter (Reduce, Gather(v))
 *   Early Scan       rank i: min(max enter of ranks <= i, own leave) - own enter (Scan, Exscan)
 *   Wait at Finalize min(last rank's enter, own leave) - own enter (MPI_Finalize)
 *   Init Completion  own leave - first rank's leave (MPI_Init)
 *   Wait at Fence    min(last member's enter, own leave) - own enter (MPI_Win_fence, the
 *                    members of the window's communicator)
 *   Late Post        general active target synchronization, origin: the last target of
 *                    its access group entered MPI_Win_post at P; when P falls inside the
 *                    origin's MPI_Win_complete, P - complete's enter there, else when it
 *                    falls inside its MPI_Win_start (an MPI whose start blocks, as Open
 *                    MPI's), P - start's enter there (Scalasca's mpi_rma_sync_late_post)
 *   Early Wait       target: the last origin of its exposure group entered MPI_Win_complete
 *                    at C; min(C, wait's leave) - MPI_Win_wait's enter, when > 0 (a
 *                    successful MPI_Win_test ends the epoch without waiting)
 * The GATS calls are re-enacted as messages: a post tells each origin of its group when it
 * was entered, a complete each target; an origin's k-th access epoch on a window towards a
 * target matches that target's k-th exposure epoch on it towards the origin.
 * A message received before it was sent (receive leave < send enter) is a clock condition
 * violation: counted, and its waiting is not.
 *
 * With the ranks' timelines (sp_ws_input's pieces, through sp_ws_run), also:
 *   Critical path    backward from the rank whose run ended last (its MPI_Finalize enter, or
 *                    its last event): on each rank, back to the end of its last wait state
 *                    before, where the path moves to the rank that was late (the sender of a
 *                    Late Sender, the receiver of a Late Receiver, the last to enter a
 *                    barrier, N x N, fence or MPI_Finalize, the root of a broadcast, the
 *                    first sender of a reduce, the last before a scan) at the time it came.
 *                    The metric: the time of each call path on the path, exclusive.
 *   CP imbalance     per call path (the same region names from the root, on any rank): its
 *                    time on the critical path minus its average over the ranks of its
 *                    time without waiting, when > 0; shared among the ranks by their part
 *                    of its critical-path time
 *   Delay (short-term) Late Sender, Late Receiver, Wait at Barrier, Wait at N x N, Late
 *                    Broadcast, Early Reduce: the waiting one late arrival caused (a receive's
 *                    Late Sender; a send's Late Receiver, charged to the receive's posting;
 *                    the sum over the members of a collective that waited for the last one,
 *                    for the root, for the first sender), charged to the call paths the
 *                    late rank ran in its interval before it: from the leave of its previous
 *                    MPI operation with the peer (or collective on the communicator) to the
 *                    enter of the late one, in proportion to their exclusive time there,
 *                    less the late rank's own waiting there, whose share is passed on:
 *   Delay (long-term) the waiting a wait state passed on (its share of the interval of each
 *                    late operation of its rank that lies after it, times that operation's
 *                    caused waiting and what that passed on in turn), summed over the wait
 *                    states a late operation caused and charged as its short-term cost is.
 *                    Propagated at rank 0 backward in time, in rounds of a span of time
 *                    (rank 0 holds a round of every rank's items, not all of them); a wait
 *                    state is matched to its late operation by the late rank, the pattern
 *                    and when it ended. The critical path's walk runs in rounds the same way. */
#ifndef SCOREP_CORE_WAITSTATES_H
#define SCOREP_CORE_WAITSTATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/ipc.h"

typedef enum {
    SP_WS_SEND = 0, /* a message this rank sent: enter = the enter of the sending call */
    SP_WS_RECV,     /* a message received: enter = the enter of the call that waited for it,
                     * leave = the leave of the call that completed it */
    SP_WS_COLL,     /* one collective operation (or MPI_Init / MPI_Finalize) */
    /* General active target synchronization, one operation per member of the call's group
     * (`peer`: that member; `comm`: the window's key; `completion`: shared by the
     * operations of one call): */
    SP_WS_GATS_POST,     /* MPI_Win_post on a target, towards an origin */
    SP_WS_GATS_START,    /* MPI_Win_start on an origin, towards a target */
    SP_WS_GATS_COMPLETE, /* MPI_Win_complete on an origin, towards a target */
    SP_WS_GATS_WAIT,     /* MPI_Win_wait (or a successful MPI_Win_test) on a target */
} sp_ws_kind;

/* Operations of SP_WS_COLL beyond sp_collective_op (core/events.h). */
#define SP_WS_OP_INIT 200
#define SP_WS_OP_FINALIZE 201
#define SP_WS_OP_FENCE 202 /* MPI_Win_fence; `comm` is the window's key */

/* Flags of SEND and RECV, in `op` (which only collectives use otherwise). */
#define SP_WS_BLOCKING 1u /* SEND: a blocking send call (MPI_Send, MPI_Ssend, MPI_Rsend) */
#define SP_WS_EMPTY 2u    /* SEND, RECV: no data (Scalasca's "synchronization", 0 bytes) */
#define SP_WS_POSTED 4u   /* RECV: `posted` holds when it was posted (before `enter`) */
/* SEND: a non-blocking send completed in MPI_Wait*: `posted` is that call's enter,
 * `leave` its leave, `cnode` its call path, `completion` shared by what it completed */
#define SP_WS_WAITED 8u
/* SEND with SP_WS_WAITED, RECV: completed in MPI_Waitall, MPI_Waitany or MPI_Waitsome */
#define SP_WS_MULTI 16u
#define SP_WS_TESTED 32u /* GATS_WAIT: MPI_Win_test ended the epoch (it does not wait) */

typedef struct {
    uint8_t kind;        /* sp_ws_kind */
    uint8_t op;          /* COLL: sp_collective_op or SP_WS_OP_*; SEND, RECV: SP_WS_* flags */
    uint32_t peer;       /* SEND: the destination's rank in the group, RECV: the source's */
    uint32_t tag;        /* SEND, RECV */
    uint32_t root;       /* COLL: the root's rank in the group, or SP_NO_ROOT */
    uint32_t cnode;      /* the caller's call path to charge (< result's cnode_count) */
    uint32_t completion; /* RECV: non-zero and shared by the receives one call completed */
    uint64_t comm;       /* the communicator's key (the same on every rank) */
    int64_t enter, leave; /* SEND: the sending call's enter and leave */
    int64_t posted;       /* RECV with SP_WS_POSTED: when the receive was posted (Irecv) */
} sp_ws_event;

/* A communicator on which this rank took part in collectives: its members' ranks in the
 * group, in communicator rank order. */
typedef struct {
    uint64_t key;
    uint32_t size;
    const uint32_t *members;
} sp_ws_comm;

/* Scalasca's metrics, in the order of its metric tree (sp_ws_metric_names). */
typedef enum {
    SP_WS_LATE_SENDER = 0,
    SP_WS_LATE_SENDER_WO,
    SP_WS_LATE_RECEIVER,
    SP_WS_BARRIER_WAIT,
    SP_WS_BARRIER_COMPLETION,
    SP_WS_WAIT_NXN,
    SP_WS_NXN_COMPLETION,
    SP_WS_LATE_BROADCAST,
    SP_WS_EARLY_REDUCE,
    SP_WS_EARLY_SCAN,
    SP_WS_INIT_COMPLETION,
    SP_WS_FINALIZE_WAIT,
    SP_WS_RMA_WAIT_AT_FENCE,
    SP_WS_RMA_LATE_POST,  /* mpi_rma_sync_late_post */
    SP_WS_RMA_EARLY_WAIT, /* mpi_rma_early_wait */
    /* Scalasca's count metrics (unit "occ"): instances of Late Sender (its Wrong Order part)
     * and Late Receiver, in synchronizations (messages without data) and communications. */
    SP_WS_SLS_COUNT,
    SP_WS_SLSWO_COUNT,
    SP_WS_SLR_COUNT,
    SP_WS_CLS_COUNT,
    SP_WS_CLSWO_COUNT,
    SP_WS_CLR_COUNT,
    /* The critical path and what caused the waiting (sp_ws_run with timelines). */
    SP_WS_CRITICAL_PATH,
    SP_WS_CRITICAL_PATH_IMBALANCE,
    /* Delay costs, short-term and long-term (Scalasca's order): what a late arrival caused
     * directly, and what the waiting it caused made others wait in turn. */
    SP_WS_DELAY_LATESENDER,
    SP_WS_DELAY_LATESENDER_LONGTERM,
    SP_WS_DELAY_LATERECEIVER,
    SP_WS_DELAY_LATERECEIVER_LONGTERM,
    SP_WS_DELAY_BARRIER,
    SP_WS_DELAY_BARRIER_LONGTERM,
    SP_WS_DELAY_N2N,
    SP_WS_DELAY_N2N_LONGTERM,
    SP_WS_DELAY_12N,
    SP_WS_DELAY_12N_LONGTERM,
    SP_WS_DELAY_N21,
    SP_WS_DELAY_N21_LONGTERM,
    SP_WS_METRIC_COUNT
} sp_ws_metric;

/* Scalasca's unique names of the metrics above ("mpi_latesender", ...). */
extern const char *const sp_ws_metric_names[SP_WS_METRIC_COUNT];
/* The parent of each metric in Scalasca's tree, as an index above, or -1 when its parent is
 * one of Scalasca's groups that only sum their children (mpi_latesender_wo is a part of
 * mpi_latesender; the others hang below mpi_point2point, mpi_collective, ...). */
extern const int sp_ws_metric_parent[SP_WS_METRIC_COUNT];
/* Each metric's unit as CUBE writes it: "sec" (values in ns here), or "occ" (a count). */
extern const char *const sp_ws_metric_unit[SP_WS_METRIC_COUNT];

typedef struct sp_ws_result {
    uint32_t cnode_count;
    /* [cnode * SP_WS_METRIC_COUNT + metric]: the metric's value (waiting time in ns, or for
     * an "occ" metric the number of instances), each metric including its parts (Late Sender
     * includes its Wrong Order time), and how many instances waited. */
    double *time;
    uint64_t *count;
    uint64_t clock_violations;    /* messages received before they were sent */
    uint64_t unmatched;           /* receives whose send was not among the senders' events */
    uint64_t collectives_skipped; /* instances whose members disagreed (none in a correct run) */
} sp_ws_result;

/* One process's operations as a substrate builds them at the end of a run, with the call
 * paths they charge (a tree per location: parent SP_WS_NO_PATH is the location's root) and
 * the communicators of its collectives. All arrays malloc'ed (sp_ws_input_free). */
#define SP_WS_NO_PATH UINT32_MAX
/* The timeline of each location (for the critical path and the delay costs): pieces in the
 * order they happened, piece i running from its time until the next piece of its location
 * (or its end marker, path SP_WS_NO_PATH) in its call path. A location's pieces are
 * contiguous: timelines[k] names the location and its range.
 *
 * Two forms: plain arrays piece_time[i], piece_path[i] (12 bytes a piece; inputs made by
 * hand, tests), or, when piece_time is NULL, the builder's compact bytes: a piece per
 * change of call path is most of what a rank holds for the analysis (every enter and
 * leave: 54% of the trace in 12 bytes, about 3 so). Blocks of up to
 * SP_WS_PIECE_BLOCK pieces, a location's first piece beginning one: the block's first piece
 * is the unsigned LEB128 varint of its path + 1 (0: SP_WS_NO_PATH) at its time; each further
 * piece the varint of its time minus the previous piece's (> 0: a location's pieces come in
 * increasing time), then that of its path + 1. */
typedef struct {
    uint32_t location;
    size_t first, end;
} sp_ws_timeline;

#define SP_WS_PIECE_BLOCK 32
typedef struct {
    int64_t time;  /* of its first piece */
    uint64_t first; /* the index of its first piece */
    uint64_t offset; /* where its bytes begin in piece_bytes */
} sp_ws_piece_block;

typedef struct sp_ws_input {
    sp_ws_event *events;
    size_t count, capacity;
    sp_ws_comm *comms;
    uint32_t comm_count;
    uint32_t *path_parent, *path_region, *path_location;
    /* a hash of the path's region names from the root: the same call path on every rank */
    uint64_t *path_hash;
    uint32_t path_count, path_capacity;
    int64_t *piece_time;
    uint32_t *piece_path;
    size_t piece_count, piece_capacity; /* capacity: of either form, in pieces */
    uint8_t *piece_bytes; /* the compact form (above) */
    size_t piece_bytes_size, piece_bytes_capacity;
    sp_ws_piece_block *piece_blocks;
    size_t piece_block_count, piece_block_capacity;
    sp_ws_timeline *timelines;
    uint32_t timeline_count;
    /* The most items this rank sends rank 0 in one round of the backward steps (the
     * long-term delay costs, the critical path's walk); 0: the default (16 384 / ranks, at
     * least 256). Any value gives the same results: tests set 1. */
    uint32_t round_items;
} sp_ws_input;

void sp_ws_input_free(sp_ws_input *in);

/* Piece `i` of the input's timelines (i < piece_count), in either form. */
void sp_ws_input_piece(const sp_ws_input *in, size_t i, int64_t *time, uint32_t *path);

/* Allocates the result's arrays for `cnode_count` call paths (zeroed). */
SP_MUST_CHECK int sp_ws_result_init(sp_ws_result *r, uint32_t cnode_count);
void sp_ws_result_free(sp_ws_result *r);

/* Called by every rank of `ipc` (which must have send and recv) with its own operations, in
 * the order they happened, and the communicators of its collectives. */
SP_MUST_CHECK int sp_ws_replay(const sp_ipc *ipc, const sp_ws_event *events, size_t count,
                               const sp_ws_comm *comms, uint32_t comm_count,
                               sp_ws_result *result, char *err, size_t errlen);

/* sp_ws_replay after every rank said whether it has its operations (`ready`): when one has
 * not, none replays and all return -1 (`err` says why on the ranks that were not ready).
 * Then the critical path and the delay costs from the input's timelines (a rank without
 * one takes part and contributes nothing). */
SP_MUST_CHECK int sp_ws_run(const sp_ipc *ipc, bool ready, const sp_ws_input *in,
                            sp_ws_result *result, char *err, size_t errlen);

#endif
