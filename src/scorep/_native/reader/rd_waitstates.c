/* The wait-state analysis offline (scorep-report EXP --wait-states): the MPI operations of
 * every rank read from an OTF2 archive, on one clock (OTF2 applies the clock offsets the
 * ranks measured, read with the local definitions), turned into the engine's neutral
 * operations (core/waitstates.h) exactly as the trace substrate turns its raw records into
 * them at the end of a run (substrates/trace/waitstates.c), and replayed by the same engine
 * with one thread per rank over an in-process group (core/ipc_threads.h). The same code on
 * the same events gives the same waiting, online or offline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#include "core/events.h"
#include "core/ipc_threads.h"
#include "core/waitstates.h"
#include "reader/rd.h"
#include "reader/rd_pass.h"

typedef struct {
    uint32_t region;
    uint32_t path;
    int64_t enter;
    uint32_t completion;
} wr_frame;

enum { REGION_PLAIN = 1, REGION_PROBE, REGION_RECEIVE, REGION_INIT, REGION_FINALIZE,
       REGION_BLOCKING_SEND, REGION_FENCE };

/* MPI_Init and MPI_Finalize: collectives of the world, on keys of their own (as online). */
#define KEY_INIT (UINT64_MAX - 1)
#define KEY_FINALIZE (UINT64_MAX - 2)

/* Interned call paths of one rank: (parent, region) -> path, open addressing. */
typedef struct {
    uint64_t *keys; /* key + 1, 0 = empty */
    uint32_t *vals;
    uint64_t cap, used;
} wr_map;

typedef struct {
    const rd_trace *trace;
    const rd_defs *d;
    const uint32_t *rank_of_group; /* per location group ref: rank, RD_NONE */
    uint32_t nranks;
    uint8_t *region_class;
    sp_ws_input *in; /* the rank being read */
    int64_t *comm_of; /* per comm ref: index into in->comms + 1, -1 unusable, 0 unknown yet */
    int64_t *win_of;  /* per window ref: the same for the window's own entry */
    wr_map paths;
    wr_frame *stack;
    uint32_t depth, stack_cap;
    uint32_t location;
    struct { size_t event; uint32_t depth; } *pending;
    size_t pending_count, pending_cap;
    bool probe_open;
    int64_t probe_enter;
    uint32_t probe_path;
    uint32_t next_completion;
    /* When each pending MPI_Irecv was posted (the enter of its call), by request id: the
     * receive completed later in MPI_Wait* was ready from then on (Late Receiver) */
    wr_map irecv_posted; /* request -> index into posted_at */
    int64_t *posted_at;
    size_t posted_count, posted_cap;
    bool failed;
} wr_ctx;

static bool grow(void **array, size_t item, size_t *capacity, size_t need)
{
    if (need <= *capacity)
        return true;
    size_t cap = *capacity ? *capacity : 64;
    while (cap < need)
        cap *= 2;
    void *p = realloc(*array, cap * item);
    if (!p)
        return false;
    *array = p;
    *capacity = cap;
    return true;
}

static uint32_t map_get(const wr_map *m, uint64_t key)
{
    if (!m->cap)
        return RD_NONE;
    for (uint64_t i = rd_hash64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->keys[i])
            return RD_NONE;
        if (m->keys[i] == key + 1)
            return m->vals[i];
    }
}

static bool map_put(wr_map *m, uint64_t key, uint32_t val)
{
    if (m->cap)
        for (uint64_t i = rd_hash64(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
            if (m->keys[i] == key + 1) { /* a request id used again: its newest posting */
                m->vals[i] = val;
                return true;
            }
    if ((m->used + 1) * 2 > m->cap) {
        wr_map bigger = {0};
        bigger.cap = m->cap ? m->cap * 2 : 256;
        bigger.keys = calloc(bigger.cap, sizeof *bigger.keys);
        bigger.vals = malloc(bigger.cap * sizeof *bigger.vals);
        if (!bigger.keys || !bigger.vals) {
            free(bigger.keys);
            free(bigger.vals);
            return false;
        }
        for (uint64_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                uint64_t j = rd_hash64(m->keys[i] - 1) & (bigger.cap - 1);
                while (bigger.keys[j])
                    j = (j + 1) & (bigger.cap - 1);
                bigger.keys[j] = m->keys[i];
                bigger.vals[j] = m->vals[i];
            }
        bigger.used = m->used;
        free(m->keys);
        free(m->vals);
        *m = bigger;
    }
    uint64_t i = rd_hash64(key) & (m->cap - 1);
    while (m->keys[i])
        i = (i + 1) & (m->cap - 1);
    m->keys[i] = key + 1;
    m->vals[i] = val;
    m->used++;
    return true;
}

static void map_free(wr_map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ns on the trace's clock (the ranks' clock offsets already applied by OTF2). */
static int64_t to_ns(const rd_defs *d, OTF2_TimeStamp time)
{
    int64_t t = (int64_t)(time - d->offset);
    if (d->resolution == 1000000000u || d->resolution == 0)
        return t;
    return (int64_t)((double)t * (1e9 / (double)d->resolution) + (t < 0 ? -0.5 : 0.5));
}

static uint8_t region_class(wr_ctx *c, uint32_t region)
{
    if (region >= c->d->nregions)
        return REGION_PLAIN;
    if (!c->region_class[region]) {
        const char *name = rd_string(c->d, c->d->regions[region].name);
        uint8_t k = REGION_PLAIN;
        if (!strcmp(name, "MPI_Probe") || !strcmp(name, "MPI_Mprobe"))
            k = REGION_PROBE;
        else if (!strcmp(name, "MPI_Recv") || !strcmp(name, "MPI_Mrecv") ||
                 !strcmp(name, "MPI_Imrecv"))
            k = REGION_RECEIVE;
        else if (!strcmp(name, "MPI_Init") || !strcmp(name, "MPI_Init_thread"))
            k = REGION_INIT;
        else if (!strcmp(name, "MPI_Finalize"))
            k = REGION_FINALIZE;
        else if (!strcmp(name, "MPI_Send") || !strcmp(name, "MPI_Ssend") ||
                 !strcmp(name, "MPI_Rsend"))
            k = REGION_BLOCKING_SEND; /* may wait for the receive: Late Receiver */
        else if (!strcmp(name, "MPI_Win_fence"))
            k = REGION_FENCE;
        c->region_class[region] = k;
    }
    return c->region_class[region];
}

static uint32_t current_path(wr_ctx *c)
{
    sp_ws_input *in = c->in;
    uint32_t parent = SP_WS_NO_PATH;
    for (uint32_t d = 0; d < c->depth; d++) {
        wr_frame *f = &c->stack[d];
        if (f->path == SP_WS_NO_PATH) {
            uint64_t key = parent == SP_WS_NO_PATH
                               ? (1ull << 63) | (uint64_t)c->location << 32 | f->region
                               : (uint64_t)parent << 32 | f->region;
            uint32_t id = map_get(&c->paths, key);
            if (id == RD_NONE) {
                id = in->path_count;
                size_t cap = in->path_capacity, cap2 = cap, cap3 = cap;
                if (!grow((void **)&in->path_parent, sizeof(uint32_t), &cap, id + 1) ||
                    !grow((void **)&in->path_region, sizeof(uint32_t), &cap2, id + 1) ||
                    !grow((void **)&in->path_location, sizeof(uint32_t), &cap3, id + 1) ||
                    !map_put(&c->paths, key, id)) {
                    c->failed = true;
                    return 0;
                }
                in->path_capacity = (uint32_t)cap;
                in->path_parent[id] = parent;
                in->path_region[id] = f->region;
                in->path_location[id] = c->location;
                in->path_count++;
            }
            f->path = id;
        }
        parent = f->path;
    }
    return parent;
}

static int64_t add_comm(wr_ctx *c, uint64_t key, uint32_t size, uint32_t *members)
{
    sp_ws_comm *grown = realloc(c->in->comms, (c->in->comm_count + 1) * sizeof *grown);
    if (!grown) {
        free(members);
        c->failed = true;
        return -1;
    }
    c->in->comms = grown;
    grown[c->in->comm_count] = (sp_ws_comm){key, size, members};
    return c->in->comm_count++;
}

/* The communicator's index in in->comms; -1 when its members are not all ranks of the
 * world (another world, an inter-communicator, MPI_COMM_SELF). */
static int64_t comm_index(wr_ctx *c, uint32_t comm)
{
    const rd_defs *d = c->d;
    if (comm >= d->ncomms)
        return -1;
    if (c->comm_of[comm])
        return c->comm_of[comm] - 1;
    const rd_comm *m = &d->comms[comm];
    c->comm_of[comm] = -1;
    if (!m->defined || m->inter || !m->rank_to_lgroup || !m->size)
        return -1;
    uint32_t *members = malloc(m->size * sizeof *members);
    if (!members) {
        c->failed = true;
        return -1;
    }
    for (uint32_t i = 0; i < m->size; i++) {
        uint32_t g = m->rank_to_lgroup[i];
        if (g == RD_NONE || g >= d->nlgroups || c->rank_of_group[g] == RD_NONE) {
            free(members);
            return -1;
        }
        members[i] = c->rank_of_group[g];
    }
    int64_t index = add_comm(c, comm, m->size, members);
    if (index >= 0)
        c->comm_of[comm] = index + 1;
    return index;
}

/* A window's fences are collectives of its communicator's members, replayed under a key of
 * the window's own (as online: their order need not agree with the communicator's own
 * collectives'). Window refs are the trace's unified ones, the same on every rank. */
#define KEY_WINDOW (1ull << 62)
static int64_t window_index(wr_ctx *c, uint32_t win)
{
    const rd_defs *d = c->d;
    if (win >= d->nwins || d->win_comm[win] == RD_NONE)
        return -1;
    if (c->win_of[win])
        return c->win_of[win] - 1;
    c->win_of[win] = -1;
    int64_t k = comm_index(c, d->win_comm[win]);
    if (k < 0)
        return -1;
    uint32_t size = c->in->comms[k].size;
    uint32_t *members = malloc(size * sizeof *members);
    if (!members) {
        c->failed = true;
        return -1;
    }
    memcpy(members, c->in->comms[k].members, size * sizeof *members);
    int64_t index = add_comm(c, KEY_WINDOW | win, size, members);
    if (index >= 0)
        c->win_of[win] = index + 1;
    return index;
}

static sp_ws_event *add_event(wr_ctx *c, uint8_t kind, bool wait_for_leave)
{
    sp_ws_input *in = c->in;
    if (!grow((void **)&in->events, sizeof *in->events, &in->capacity, in->count + 1) ||
        (wait_for_leave && !grow((void **)&c->pending, sizeof *c->pending, &c->pending_cap,
                                 c->pending_count + 1))) {
        c->failed = true;
        return NULL;
    }
    sp_ws_event *e = &in->events[in->count];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->root = SP_NO_ROOT;
    if (wait_for_leave) {
        c->pending[c->pending_count].event = in->count;
        c->pending[c->pending_count++].depth = c->depth;
    }
    in->count++;
    return e;
}

/* `blocking`: an MpiSend record (not MpiIsend); `request`: the MpiIrecv's request, or
 * UINT64_MAX for a blocking receive. */
static void p2p(wr_ctx *c, uint32_t peer, uint32_t comm, uint32_t tag, bool send,
                uint64_t length, bool blocking, uint64_t request)
{
    if (c->depth == 0)
        return;
    int64_t k = comm_index(c, comm);
    if (k < 0 || peer >= c->in->comms[k].size)
        return;
    wr_frame *f = &c->stack[c->depth - 1];
    uint32_t path = current_path(c);
    /* a send waits for its leave too: a blocking send's duration tells Late Receiver */
    sp_ws_event *e = add_event(c, send ? SP_WS_SEND : SP_WS_RECV, true);
    if (!e)
        return;
    if (length == 0)
        e->op |= SP_WS_EMPTY;
    if (send && blocking && region_class(c, f->region) == REGION_BLOCKING_SEND)
        e->op |= SP_WS_BLOCKING;
    if (!send && request != UINT64_MAX) {
        uint32_t at = map_get(&c->irecv_posted, request);
        if (at != RD_NONE && at < c->posted_count && c->posted_at[at] < f->enter) {
            e->op |= SP_WS_POSTED;
            e->posted = c->posted_at[at];
        }
    }
    e->peer = c->in->comms[k].members[peer];
    e->tag = tag;
    e->comm = c->in->comms[k].key;
    e->enter = f->enter;
    e->cnode = path;
    if (!send) {
        if (!f->completion)
            f->completion = ++c->next_completion;
        e->completion = f->completion;
        if (c->probe_open) {
            /* mpi4py's comm.recv(): the waiting happened in the probe before the receive */
            e->enter = c->probe_enter;
            e->cnode = c->probe_path;
            c->probe_open = false;
        }
    }
}

static uint8_t collective_op(OTF2_CollectiveOp op)
{
    switch (op) {
    case OTF2_COLLECTIVE_OP_BARRIER: return SP_COLL_BARRIER;
    case OTF2_COLLECTIVE_OP_BCAST: return SP_COLL_BCAST;
    case OTF2_COLLECTIVE_OP_GATHER: return SP_COLL_GATHER;
    case OTF2_COLLECTIVE_OP_GATHERV: return SP_COLL_GATHERV;
    case OTF2_COLLECTIVE_OP_SCATTER: return SP_COLL_SCATTER;
    case OTF2_COLLECTIVE_OP_SCATTERV: return SP_COLL_SCATTERV;
    case OTF2_COLLECTIVE_OP_ALLGATHER: return SP_COLL_ALLGATHER;
    case OTF2_COLLECTIVE_OP_ALLGATHERV: return SP_COLL_ALLGATHERV;
    case OTF2_COLLECTIVE_OP_ALLTOALL: return SP_COLL_ALLTOALL;
    case OTF2_COLLECTIVE_OP_ALLTOALLV: return SP_COLL_ALLTOALLV;
    case OTF2_COLLECTIVE_OP_ALLTOALLW: return SP_COLL_ALLTOALLW;
    case OTF2_COLLECTIVE_OP_ALLREDUCE: return SP_COLL_ALLREDUCE;
    case OTF2_COLLECTIVE_OP_REDUCE: return SP_COLL_REDUCE;
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER: return SP_COLL_REDUCE_SCATTER;
    case OTF2_COLLECTIVE_OP_SCAN: return SP_COLL_SCAN;
    case OTF2_COLLECTIVE_OP_EXSCAN: return SP_COLL_EXSCAN;
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK: return SP_COLL_REDUCE_SCATTER_BLOCK;
    case OTF2_COLLECTIVE_OP_CREATE_HANDLE: return SP_COLL_CREATE_HANDLE;
    case OTF2_COLLECTIVE_OP_DESTROY_HANDLE: return SP_COLL_DESTROY_HANDLE;
    case OTF2_COLLECTIVE_OP_ALLOCATE: return SP_COLL_ALLOCATE;
    case OTF2_COLLECTIVE_OP_DEALLOCATE: return SP_COLL_DEALLOCATE;
    case OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE: return SP_COLL_CREATE_HANDLE_AND_ALLOCATE;
    case OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE:
        return SP_COLL_DESTROY_HANDLE_AND_DEALLOCATE;
    default: return SP_COLL_CREATE_HANDLE; /* no data moves: the engine leaves it out */
    }
}

static void init_or_finalize(wr_ctx *c, uint8_t klass)
{
    sp_ws_input *in = c->in;
    uint64_t key = klass == REGION_INIT ? KEY_INIT : KEY_FINALIZE;
    bool known = false;
    for (uint32_t i = 0; i < in->comm_count; i++)
        known |= in->comms[i].key == key;
    if (!known) {
        uint32_t *members = malloc(c->nranks * sizeof *members);
        if (!members) {
            c->failed = true;
            return;
        }
        for (uint32_t i = 0; i < c->nranks; i++)
            members[i] = i;
        if (add_comm(c, key, c->nranks, members) < 0)
            return;
    }
    wr_frame *f = &c->stack[c->depth - 1];
    uint32_t path = current_path(c);
    sp_ws_event *e = add_event(c, SP_WS_COLL, true);
    if (!e)
        return;
    e->op = klass == REGION_INIT ? SP_WS_OP_INIT : SP_WS_OP_FINALIZE;
    e->comm = key;
    e->enter = f->enter;
    e->cnode = path;
}

static OTF2_CallbackCode on_enter(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                  void *ud, OTF2_AttributeList *attributes, OTF2_RegionRef region)
{
    (void)location, (void)pos, (void)attributes;
    wr_ctx *c = ud;
    size_t cap = c->stack_cap;
    if (!grow((void **)&c->stack, sizeof *c->stack, &cap, c->depth + 1)) {
        c->failed = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    c->stack_cap = (uint32_t)cap;
    c->stack[c->depth++] = (wr_frame){region, SP_WS_NO_PATH, to_ns(c->d, time), 0};
    uint8_t klass = region_class(c, region);
    if (klass != REGION_RECEIVE) /* a probe's waiting belongs to the receive right after it */
        c->probe_open = false;
    if (klass == REGION_INIT || klass == REGION_FINALIZE)
        init_or_finalize(c, klass);
    return c->failed ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_leave(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                  void *ud, OTF2_AttributeList *attributes, OTF2_RegionRef region)
{
    (void)location, (void)pos, (void)attributes, (void)region;
    wr_ctx *c = ud;
    if (c->depth == 0)
        return OTF2_CALLBACK_SUCCESS;
    if (region_class(c, c->stack[c->depth - 1].region) == REGION_PROBE) {
        c->probe_open = true;
        c->probe_enter = c->stack[c->depth - 1].enter;
        c->probe_path = current_path(c);
    }
    int64_t t = to_ns(c->d, time);
    while (c->pending_count && c->pending[c->pending_count - 1].depth >= c->depth)
        c->in->events[c->pending[--c->pending_count].event].leave = t;
    c->depth--;
    return c->failed ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_send(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                 void *ud, OTF2_AttributeList *attributes, uint32_t receiver,
                                 OTF2_CommRef comm, uint32_t tag, uint64_t length)
{
    (void)location, (void)time, (void)pos, (void)attributes;
    p2p(ud, receiver, comm, tag, true, length, true, UINT64_MAX);
    return ((wr_ctx *)ud)->failed ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_isend(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                  void *ud, OTF2_AttributeList *attributes, uint32_t receiver,
                                  OTF2_CommRef comm, uint32_t tag, uint64_t length,
                                  uint64_t request)
{
    (void)location, (void)time, (void)pos, (void)attributes, (void)request;
    p2p(ud, receiver, comm, tag, true, length, false, UINT64_MAX);
    return ((wr_ctx *)ud)->failed ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_recv(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                 void *ud, OTF2_AttributeList *attributes, uint32_t sender,
                                 OTF2_CommRef comm, uint32_t tag, uint64_t length)
{
    (void)location, (void)time, (void)pos, (void)attributes;
    p2p(ud, sender, comm, tag, false, length, true, UINT64_MAX);
    return ((wr_ctx *)ud)->failed ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_irecv(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                  void *ud, OTF2_AttributeList *attributes, uint32_t sender,
                                  OTF2_CommRef comm, uint32_t tag, uint64_t length,
                                  uint64_t request)
{
    (void)location, (void)time, (void)pos, (void)attributes;
    p2p(ud, sender, comm, tag, false, length, false, request);
    return ((wr_ctx *)ud)->failed ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_irecv_request(OTF2_LocationRef location, OTF2_TimeStamp time,
                                          uint64_t pos, void *ud, OTF2_AttributeList *attributes,
                                          uint64_t request)
{
    (void)location, (void)time, (void)pos, (void)attributes;
    wr_ctx *c = ud;
    if (!c->depth)
        return OTF2_CALLBACK_SUCCESS;
    if (!grow((void **)&c->posted_at, sizeof *c->posted_at, &c->posted_cap,
              c->posted_count + 1) ||
        !map_put(&c->irecv_posted, request, (uint32_t)c->posted_count)) {
        c->failed = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    c->posted_at[c->posted_count++] = c->stack[c->depth - 1].enter;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_collective_end(OTF2_LocationRef location, OTF2_TimeStamp time,
                                           uint64_t pos, void *ud, OTF2_AttributeList *attributes,
                                           OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root,
                                           uint64_t sent, uint64_t received)
{
    (void)location, (void)time, (void)pos, (void)attributes, (void)sent, (void)received;
    wr_ctx *c = ud;
    if (c->depth == 0)
        return OTF2_CALLBACK_SUCCESS;
    int64_t k = comm_index(c, comm);
    if (k < 0)
        return c->failed ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
    wr_frame *f = &c->stack[c->depth - 1];
    uint32_t path = current_path(c);
    sp_ws_event *e = add_event(c, SP_WS_COLL, true);
    if (!e)
        return OTF2_CALLBACK_INTERRUPT;
    e->op = collective_op(op);
    e->comm = c->in->comms[k].key;
    e->root = root == OTF2_UNDEFINED_UINT32 || root >= c->in->comms[k].size
                  ? SP_NO_ROOT
                  : c->in->comms[k].members[root];
    e->enter = f->enter;
    e->cnode = path;
    return c->failed ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

/* MPI_Win_fence: its RMA collective record (win: the window). */
static OTF2_CallbackCode on_rma_collective_end(OTF2_LocationRef location, OTF2_TimeStamp time,
                                               uint64_t pos, void *ud,
                                               OTF2_AttributeList *attributes,
                                               OTF2_CollectiveOp op, OTF2_RmaSyncLevel level,
                                               OTF2_RmaWinRef win, uint32_t root, uint64_t sent,
                                               uint64_t received)
{
    (void)location, (void)time, (void)pos, (void)attributes, (void)op, (void)level;
    (void)root, (void)sent, (void)received;
    wr_ctx *c = ud;
    if (c->depth == 0 || region_class(c, c->stack[c->depth - 1].region) != REGION_FENCE)
        return OTF2_CALLBACK_SUCCESS;
    int64_t k = window_index(c, win);
    if (k < 0)
        return c->failed ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
    wr_frame *f = &c->stack[c->depth - 1];
    uint32_t path = current_path(c);
    sp_ws_event *e = add_event(c, SP_WS_COLL, true);
    if (!e)
        return OTF2_CALLBACK_INTERRUPT;
    e->op = SP_WS_OP_FENCE;
    e->comm = c->in->comms[k].key;
    e->enter = f->enter;
    e->cnode = path;
    return c->failed ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}

/* The ranks of the world: MPI_COMM_WORLD's members (the first communicator of that name;
 * the worlds of MPI_Comm_spawn come after it). */
static const rd_comm *world_of(const rd_defs *d)
{
    for (uint32_t i = 0; i < d->ncomms; i++)
        if (d->comms[i].defined && !d->comms[i].inter && d->comms[i].rank_to_lgroup &&
            !strcmp(rd_string(d, d->comms[i].name), "MPI_COMM_WORLD"))
            return &d->comms[i];
    return NULL;
}

typedef struct {
    sp_ws_input in;
    sp_ws_result result;
    char err[256];
} wr_rank;

static int replay_rank(const sp_ipc *ipc, void *arg)
{
    wr_rank *w = arg;
    return sp_ws_run(ipc, true, &w->in, &w->result, w->err, sizeof w->err);
}

static int read_ranks(const rd_trace *t, wr_ctx *c, wr_rank *ranks, char *err, size_t errlen)
{
    const rd_defs *d = &t->defs;
    OTF2_Reader *r = rd_pass_open(t, err, errlen);
    if (!r)
        return -1;
    OTF2_EvtReaderCallbacks *cb = OTF2_EvtReaderCallbacks_New();
    if (!cb) {
        rd_pass_close(r);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    OTF2_EvtReaderCallbacks_SetEnterCallback(cb, on_enter);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, on_leave);
    OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, on_send);
    OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, on_isend);
    OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, on_recv);
    OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, on_irecv);
    OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, on_irecv_request);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, on_collective_end);
    OTF2_EvtReaderCallbacks_SetRmaCollectiveEndCallback(cb, on_rma_collective_end);
    int status = 0;
    /* Rank by rank, each rank's locations in definition order (as a rank reads its own
     * locations at the end of a run): call paths and communicators are per rank. */
    for (uint32_t rank = 0; rank < c->nranks && status == 0; rank++) {
        c->in = &ranks[rank].in;
        memset(c->comm_of, 0, (d->ncomms + 1) * sizeof *c->comm_of);
        memset(c->win_of, 0, (d->nwins + 1) * sizeof *c->win_of);
        map_free(&c->paths);
        c->next_completion = 0;
        for (uint32_t li = 0; li < d->nlocations && status == 0; li++) {
            uint32_t g = d->locations[li].group;
            if (g >= d->nlgroups || c->rank_of_group[g] != rank)
                continue;
            c->location = li;
            c->depth = 0;
            c->pending_count = 0;
            c->probe_open = false;
            map_free(&c->irecv_posted); /* request ids are per location */
            c->posted_count = 0;
            if (rd_pass_location(r, t, li, cb, c, err, errlen) < 0)
                status = -1;
            else if (c->failed)
                status = -1, snprintf(err, errlen, "out of memory reading the MPI events");
            for (size_t i = 0; i < c->pending_count; i++)
                if (!c->in->events[c->pending[i].event].leave)
                    c->in->events[c->pending[i].event].leave =
                        c->in->events[c->pending[i].event].enter;
        }
    }
    OTF2_EvtReaderCallbacks_Delete(cb);
    rd_pass_close(r);
    return status;
}

int rd_wait_states(const rd_trace *t, rd_ws *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const rd_defs *d = &t->defs;
    const rd_comm *world = world_of(d);
    if (!world) {
        snprintf(err, errlen, "%s: not a trace of an MPI run (no MPI_COMM_WORLD); wait states "
                 "are times ranks wait for each other", t->path);
        return -1;
    }
    out->ranks = world->size;
    out->nmetrics = SP_WS_METRIC_COUNT;
    out->names = sp_ws_metric_names;
    out->parents = sp_ws_metric_parent;
    if (world->size < 2)
        return 0; /* one rank waits for nobody */
    wr_ctx c;
    memset(&c, 0, sizeof c);
    c.trace = t;
    c.d = d;
    c.nranks = world->size;
    uint32_t *rank_of_group = malloc((d->nlgroups + 1) * sizeof *rank_of_group);
    c.region_class = calloc(d->nregions + 1, 1);
    c.comm_of = calloc(d->ncomms + 1, sizeof *c.comm_of);
    c.win_of = calloc(d->nwins + 1, sizeof *c.win_of);
    wr_rank *ranks = calloc(world->size, sizeof *ranks);
    void **args = calloc(world->size, sizeof *args);
    int status = 0;
    if (!rank_of_group || !c.region_class || !c.comm_of || !c.win_of || !ranks || !args) {
        snprintf(err, errlen, "out of memory for the wait-state analysis");
        status = -1;
    } else {
        for (uint32_t g = 0; g < d->nlgroups; g++)
            rank_of_group[g] = RD_NONE;
        for (uint32_t r = 0; r < world->size; r++)
            if (world->rank_to_lgroup[r] < d->nlgroups)
                rank_of_group[world->rank_to_lgroup[r]] = r;
        c.rank_of_group = rank_of_group;
        status = read_ranks(t, &c, ranks, err, errlen);
    }
    for (uint32_t r = 0; status == 0 && r < world->size; r++) {
        args[r] = &ranks[r];
        if (sp_ws_result_init(&ranks[r].result, ranks[r].in.path_count) != 0) {
            snprintf(err, errlen, "out of memory for the wait-state analysis");
            status = -1;
        }
    }
    if (status == 0 && sp_ipc_threads_run(world->size, replay_rank, args, err, errlen) != 0) {
        for (uint32_t r = 0; r < world->size; r++)
            if (ranks[r].err[0]) {
                snprintf(err, errlen, "the wait-state replay failed on rank %u: %s", r,
                         ranks[r].err);
                break;
            }
        status = -1;
    }
    /* The rows: every call path with any waiting, as its regions from the root. */
    for (uint32_t r = 0; status == 0 && ranks && r < world->size; r++) {
        const sp_ws_input *in = &ranks[r].in;
        const sp_ws_result *res = &ranks[r].result;
        out->violations += res->clock_violations;
        out->unmatched += res->unmatched;
        out->skipped += res->collectives_skipped;
        for (uint32_t p = 0; p < in->path_count && status == 0; p++) {
            const double *ns = res->time + (size_t)p * SP_WS_METRIC_COUNT;
            const uint64_t *n = res->count + (size_t)p * SP_WS_METRIC_COUNT;
            bool any = false;
            for (int k = 0; k < SP_WS_METRIC_COUNT; k++)
                any |= ns[k] > 0 || n[k] > 0;
            if (!any)
                continue;
            uint32_t depth = 0;
            for (uint32_t q = p; q != SP_WS_NO_PATH; q = in->path_parent[q])
                depth++;
            rd_ws_row row = {in->path_location[p], r, depth,
                             malloc(depth * sizeof(uint32_t)),
                             calloc(SP_WS_METRIC_COUNT, sizeof(double)),
                             calloc(SP_WS_METRIC_COUNT, sizeof(uint64_t))};
            size_t cap = out->cap;
            if (!row.regions || !row.time || !row.count ||
                !grow((void **)&out->rows, sizeof *out->rows, &cap, out->nrows + 1)) {
                free(row.regions), free(row.time), free(row.count);
                snprintf(err, errlen, "out of memory for the wait-state results");
                status = -1;
                break;
            }
            out->cap = cap;
            uint32_t i = depth;
            for (uint32_t q = p; q != SP_WS_NO_PATH; q = in->path_parent[q])
                row.regions[--i] = in->path_region[q];
            for (int k = 0; k < SP_WS_METRIC_COUNT; k++) {
                /* seconds, or for a count metric ("occ") the number of instances */
                row.time[k] = strcmp(sp_ws_metric_unit[k], "occ") ? ns[k] * 1e-9 : ns[k];
                row.count[k] = n[k];
            }
            out->rows[out->nrows++] = row;
        }
    }
    for (uint32_t r = 0; ranks && r < world->size; r++) {
        sp_ws_input_free(&ranks[r].in);
        sp_ws_result_free(&ranks[r].result);
    }
    free(ranks);
    free(args);
    free(rank_of_group);
    free(c.region_class);
    free(c.comm_of);
    free(c.win_of);
    free(c.stack);
    free(c.pending);
    map_free(&c.paths);
    map_free(&c.irecv_posted);
    free(c.posted_at);
    if (status != 0)
        rd_ws_free(out);
    return status;
}

void rd_ws_free(rd_ws *ws)
{
    for (size_t i = 0; i < ws->nrows; i++) {
        free(ws->rows[i].regions);
        free(ws->rows[i].time);
        free(ws->rows[i].count);
    }
    free(ws->rows);
    ws->rows = NULL;
    ws->nrows = ws->cap = 0;
}

uint32_t rd_ws_metrics(const char *const **names, const int **parents)
{
    *names = sp_ws_metric_names;
    *parents = sp_ws_metric_parent;
    return SP_WS_METRIC_COUNT;
}
