/* The builder of the wait-state engine's operations (core/waitstates_build.h), fed the
 * neutral calls the trace substrate and the OTF2 reader make: one location's MPI calls and
 * a second location's, with the operations they must give, field by field. */
#include <malloc.h>

#include "core/events.h"
#include "core/waitstates.h"
#include "core/waitstates_build.h"
#include "ctest.h"

enum { MAIN, SEND, ISEND, IRECV, WAITALL, PROBE, RECV, BARRIER, BCAST, FENCE, INIT, REGIONS };
static const char *const region_names[REGIONS] = {
    "main", "MPI_Send", "MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Probe", "MPI_Recv",
    "MPI_Barrier", "MPI_Bcast", "MPI_Win_fence", "MPI_Init"};

/* Communicators by the caller's ids: the world, a pair (its rank 0 is the group's rank 2),
 * one with a process of another world, an inter-communicator. */
enum { WORLD, PAIR, SPAWNED, INTER, COMMS };
static const uint64_t comm_keys[COMMS] = {100, 200, 300, 400};
static const uint32_t comm_members[COMMS][3] = {
    {0, 1, 2}, {2, 0, 0}, {0, SP_WS_NO_RANK, 0}, {0, 1, 0}};
static const uint32_t comm_sizes[COMMS] = {3, 2, 2, 2};
#define WINDOW_KEY 900

static const char *region_name(void *ctx, uint32_t region)
{
    (void)ctx;
    return region_names[region];
}

static bool comm(void *ctx, uint32_t c, uint64_t *key, uint32_t *size)
{
    (void)ctx;
    *key = comm_keys[c];
    *size = comm_sizes[c];
    return c != INTER;
}

static uint32_t member(void *ctx, uint32_t c, uint32_t i)
{
    (void)ctx;
    return comm_members[c][i];
}

static bool window(void *ctx, uint32_t win, uint64_t *key, uint32_t *c)
{
    (void)ctx, (void)win;
    *key = WINDOW_KEY;
    *c = PAIR;
    return true;
}

static const sp_ws_source source = {NULL, 3, REGIONS, COMMS, 1,
                                    region_name, comm, member, window, 0, NULL, NULL};

/* The regions of a call path, innermost first, joined as "MPI_Recv<main". */
static void path_of(const sp_ws_input *in, uint32_t path, char *out, size_t len)
{
    out[0] = 0;
    for (uint32_t p = path; p != SP_WS_NO_PATH; p = in->path_parent[p]) {
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%s", used ? "<" : "", region_names[in->path_region[p]]);
    }
}

static void check_event(const sp_ws_input *in, size_t i, uint8_t kind, uint8_t op, uint32_t peer,
                        uint32_t tag, uint64_t comm_key, int64_t enter, int64_t leave,
                        const char *path)
{
    if (i >= in->count) {
        CHECK(i < in->count);
        return;
    }
    const sp_ws_event *e = &in->events[i];
    char p[256];
    path_of(in, e->cnode, p, sizeof p);
    CHECK_EQ_U64(e->kind, kind);
    CHECK_EQ_U64(e->op, op);
    CHECK_EQ_U64(e->peer, peer);
    CHECK_EQ_U64(e->tag, tag);
    CHECK_EQ_U64(e->comm, comm_key);
    CHECK_EQ_U64(e->enter, enter);
    CHECK_EQ_U64(e->leave, leave);
    CHECK_STR(p, path);
}

static void test_operations_of_two_locations(void)
{
    sp_ws_input in;
    memset(&in, 0, sizeof in);
    sp_ws_builder *b = sp_ws_builder_new(&source, &in);
    CHECK(b != NULL);
    if (!b)
        return;
    CHECK(sp_ws_builder_location(b, 0) == 0);
    sp_ws_builder_enter(b, MAIN, 10);
    sp_ws_builder_enter(b, INIT, 11); /* a collective of the group by itself */
    sp_ws_builder_leave(b, 12);
    sp_ws_builder_enter(b, SEND, 20);
    sp_ws_builder_send(b, PAIR, 0, 7, 8, true, SP_WS_NO_REQUEST); /* the pair's rank 0 is rank 2 */
    sp_ws_builder_leave(b, 25);
    sp_ws_builder_enter(b, ISEND, 30);
    sp_ws_builder_send(b, WORLD, 1, 1, 0, false, SP_WS_NO_REQUEST); /* no data, not blocking */
    sp_ws_builder_leave(b, 31);
    sp_ws_builder_enter(b, IRECV, 40);
    sp_ws_builder_irecv_request(b, 55);
    sp_ws_builder_leave(b, 41);
    sp_ws_builder_enter(b, IRECV, 42);
    sp_ws_builder_irecv_request(b, 56);
    sp_ws_builder_leave(b, 43);
    sp_ws_builder_enter(b, WAITALL, 50); /* completes both: posted at 40 and 42 */
    sp_ws_builder_recv(b, WORLD, 2, 3, 4, 55);
    sp_ws_builder_recv(b, WORLD, 1, 4, 4, 56);
    sp_ws_builder_leave(b, 60);
    sp_ws_builder_enter(b, PROBE, 70); /* mpi4py's recv: the waiting is in the probe */
    sp_ws_builder_leave(b, 75);
    sp_ws_builder_enter(b, RECV, 76);
    sp_ws_builder_recv(b, WORLD, 1, 5, 4, SP_WS_NO_REQUEST);
    sp_ws_builder_leave(b, 80);
    sp_ws_builder_enter(b, RECV, 90); /* none of these can be replayed */
    sp_ws_builder_recv(b, SPAWNED, 0, 6, 4, SP_WS_NO_REQUEST);
    sp_ws_builder_recv(b, INTER, 0, 6, 4, SP_WS_NO_REQUEST);
    sp_ws_builder_recv(b, WORLD, 3, 6, 4, SP_WS_NO_REQUEST);
    sp_ws_builder_leave(b, 91);
    sp_ws_builder_enter(b, BARRIER, 100);
    sp_ws_builder_collective(b, WORLD, SP_COLL_BARRIER, UINT32_MAX);
    sp_ws_builder_leave(b, 110);
    sp_ws_builder_enter(b, BCAST, 111);
    sp_ws_builder_collective(b, PAIR, SP_COLL_BCAST, 0);
    sp_ws_builder_leave(b, 112);
    sp_ws_builder_rma_collective(b, 0); /* in main, not in MPI_Win_fence: no fence */
    sp_ws_builder_enter(b, FENCE, 120);
    sp_ws_builder_rma_collective(b, 0);
    sp_ws_builder_leave(b, 130);
    sp_ws_builder_enter(b, SEND, 140); /* still in the call when the location ends */
    sp_ws_builder_send(b, WORLD, 1, 8, 8, true, SP_WS_NO_REQUEST);

    /* The next location: its own call paths and requests, the rank's completions. */
    CHECK(sp_ws_builder_location(b, 1) == 0);
    sp_ws_builder_enter(b, MAIN, 5);
    sp_ws_builder_enter(b, WAITALL, 8);
    sp_ws_builder_recv(b, WORLD, 1, 3, 4, 55); /* location 0's request 55: not this one's */
    sp_ws_builder_leave(b, 9);
    sp_ws_builder_leave(b, 10);
    sp_ws_builder_leave(b, 11); /* more leaves than enters */
    CHECK(sp_ws_builder_finish(b) == 0);

    CHECK_EQ_U64(in.count, 11);
    check_event(&in, 0, SP_WS_COLL, SP_WS_OP_INIT, 0, 0, UINT64_MAX - 1, 11, 12, "MPI_Init<main");
    check_event(&in, 1, SP_WS_SEND, SP_WS_BLOCKING, 2, 7, 200, 20, 25, "MPI_Send<main");
    check_event(&in, 2, SP_WS_SEND, SP_WS_EMPTY, 1, 1, 100, 30, 31, "MPI_Isend<main");
    check_event(&in, 3, SP_WS_RECV, SP_WS_POSTED | SP_WS_MULTI, 2, 3, 100, 50, 60, "MPI_Waitall<main");
    check_event(&in, 4, SP_WS_RECV, SP_WS_POSTED | SP_WS_MULTI, 1, 4, 100, 50, 60, "MPI_Waitall<main");
    check_event(&in, 5, SP_WS_RECV, 0, 1, 5, 100, 70, 80, "MPI_Probe<main");
    check_event(&in, 6, SP_WS_COLL, SP_COLL_BARRIER, 0, 0, 100, 100, 110, "MPI_Barrier<main");
    check_event(&in, 7, SP_WS_COLL, SP_COLL_BCAST, 0, 0, 200, 111, 112, "MPI_Bcast<main");
    check_event(&in, 8, SP_WS_COLL, SP_WS_OP_FENCE, 0, 0, WINDOW_KEY, 120, 130,
                "MPI_Win_fence<main");
    check_event(&in, 9, SP_WS_SEND, SP_WS_BLOCKING, 1, 8, 100, 140, 140, "MPI_Send<main");
    check_event(&in, 10, SP_WS_RECV, SP_WS_MULTI, 1, 3, 100, 8, 9, "MPI_Waitall<main");
    if (in.count == 11) {
        CHECK_EQ_U64(in.events[3].posted, 40);
        CHECK_EQ_U64(in.events[4].posted, 42);
        /* one call completed both; each other receive is a completion of its own */
        CHECK(in.events[3].completion != 0);
        CHECK_EQ_U64(in.events[4].completion, in.events[3].completion);
        CHECK(in.events[5].completion != in.events[3].completion);
        CHECK(in.events[10].completion != in.events[5].completion);
        CHECK_EQ_U64(in.events[6].root, SP_NO_ROOT);
        CHECK_EQ_U64(in.events[7].root, 2);
        CHECK_EQ_U64(in.events[0].root, SP_NO_ROOT);
        /* the same regions on two locations: two paths */
        CHECK(in.events[10].cnode != in.events[3].cnode);
        CHECK_EQ_U64(in.path_location[in.events[10].cnode], 1);
        CHECK_EQ_U64(in.path_location[in.events[3].cnode], 0);
    }
    /* The communicators, in the order first used: MPI_Init's group, the pair, the world,
     * the window (the pair's members under its own key). */
    CHECK_EQ_U64(in.comm_count, 4);
    if (in.comm_count == 4) {
        CHECK_EQ_U64(in.comms[0].key, UINT64_MAX - 1);
        CHECK_EQ_U64(in.comms[0].size, 3);
        CHECK_EQ_U64(in.comms[0].members[2], 2);
        CHECK_EQ_U64(in.comms[1].key, 200);
        CHECK_EQ_U64(in.comms[1].members[0], 2);
        CHECK_EQ_U64(in.comms[1].members[1], 0);
        CHECK_EQ_U64(in.comms[2].key, 100);
        CHECK_EQ_U64(in.comms[3].key, WINDOW_KEY);
        CHECK_EQ_U64(in.comms[3].size, 2);
        CHECK_EQ_U64(in.comms[3].members[0], 2);
    }
    /* The arrays hold what they were filled with and no spare room (grown by doubling: 64
     * operations, pieces and paths at first) before the replay allocates its own. */
    CHECK_EQ_U64(in.capacity, 11);
    CHECK_EQ_U64(in.piece_capacity, in.piece_count);
    CHECK_EQ_U64(in.path_capacity, in.path_count);
    CHECK(in.piece_count > 0 && in.path_count > 0);
    CHECK_EQ_U64(malloc_usable_size(in.events) < 12 * sizeof *in.events, 1);
    sp_ws_input_free(&in);
}

CTEST_MAIN(test_operations_of_two_locations)
