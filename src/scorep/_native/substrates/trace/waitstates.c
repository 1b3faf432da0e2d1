/* The trace's part of the wait-state analysis at the end of a run (core/waitstates.h): the
 * MPI operations of this process, read from the raw records still in memory (and spilled
 * to disk) before they are encoded, with the call path of each MPI call. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/tables.h"
#include "core/waitstates.h"
#include "substrates/trace/trace.h"
#include "substrates/trace/trace_internal.h"

/* A frame of the location's stack while its records are read. */
typedef struct {
    uint32_t region;
    uint32_t path; /* interned call path, SP_WS_NO_PATH until an MPI event needs it */
    int64_t enter;
    uint32_t completion; /* the receives this frame completed share it */
} ws_frame;

/* What MPI regions mean to the analysis beyond their events. */
enum { REGION_PLAIN = 1, REGION_PROBE, REGION_RECEIVE, REGION_INIT, REGION_FINALIZE,
       REGION_BLOCKING_SEND, REGION_FENCE };

typedef struct {
    sp_measurement *m;
    sp_ws_input *in;
    sp_u64map paths; /* (location << 40 | (parent + 1) << 20 ... ) see path_key */
    uint8_t *region_class; /* per region: 0 unknown yet, REGION_* */
    ws_frame *stack;
    uint32_t depth, stack_capacity;
    uint32_t location;
    /* events waiting for their frame's leave: index into in->events, frame depth */
    struct { size_t event; uint32_t depth; } *pending;
    size_t pending_count, pending_capacity;
    /* the last probe's frame (MPI_Probe, MPI_Mprobe): the receive after it waited there */
    bool probe_open;
    int64_t probe_enter;
    uint32_t probe_path;
    uint32_t next_completion;
    double ns_per_tick;
    bool failed;
    int64_t *comm_of; /* per local communicator id: index into in->comms + 1, or -1 unusable */
    int64_t *win_of;  /* per local window id: the same for the window's own entry */
    /* When each pending MPI_Irecv was posted (the enter of its call), by request id: the
     * receive completed later in MPI_Wait* was ready from then on (Late Receiver) */
    sp_u64map irecv_posted; /* request -> index into posted_at */
    int64_t *posted_at;
    size_t posted_count, posted_capacity;
} ws_reader;

static int64_t to_common_ns(const ws_reader *rd, uint64_t ticks)
{
    const sp_measurement *m = rd->m;
    int64_t ns;
    if (sp_clock_timer == SP_TIMER_CLOCK_GETTIME)
        ns = (int64_t)ticks;
    else
        ns = (int64_t)m->start.monotonic_ns +
             (int64_t)((double)(int64_t)(ticks - m->start.ticks) * rd->ns_per_tick + 0.5);
    /* The root's clock: the offsets measured at the start and the end, interpolated. */
    const sp_clock_sync *s = &m->clock_sync;
    int64_t offset = s->offset_begin_ns;
    if (s->sync_end_ns > s->sync_begin_ns) {
        double f = ((double)ns - (double)s->sync_begin_ns) /
                   (double)(s->sync_end_ns - s->sync_begin_ns);
        if (f > 1)
            f = 1;
        if (f > 0)
            offset += (int64_t)(f * (double)(s->offset_end_ns - s->offset_begin_ns));
    }
    return ns + offset;
}

static uint8_t region_class(ws_reader *rd, uint32_t region)
{
    if (region >= rd->m->defs.region_count)
        return REGION_PLAIN;
    if (!rd->region_class[region]) {
        const sp_region *r = &rd->m->defs.regions[region];
        const char *name = sp_defs_str(&rd->m->defs, r->name);
        uint8_t c = REGION_PLAIN;
        if (name && (!strcmp(name, "MPI_Probe") || !strcmp(name, "MPI_Mprobe")))
            c = REGION_PROBE;
        else if (name && (!strcmp(name, "MPI_Recv") || !strcmp(name, "MPI_Mrecv") ||
                          !strcmp(name, "MPI_Imrecv")))
            c = REGION_RECEIVE;
        else if (name && (!strcmp(name, "MPI_Init") || !strcmp(name, "MPI_Init_thread")))
            c = REGION_INIT;
        else if (name && !strcmp(name, "MPI_Finalize"))
            c = REGION_FINALIZE;
        else if (name && (!strcmp(name, "MPI_Send") || !strcmp(name, "MPI_Ssend") ||
                          !strcmp(name, "MPI_Rsend")))
            c = REGION_BLOCKING_SEND; /* may wait for the receive: Late Receiver */
        else if (name && !strcmp(name, "MPI_Win_fence"))
            c = REGION_FENCE;
        rd->region_class[region] = c;
    }
    return rd->region_class[region];
}

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

/* The call path of the innermost open frame, interned with those of its callers. */
static uint32_t current_path(ws_reader *rd)
{
    sp_ws_input *in = rd->in;
    uint32_t parent = SP_WS_NO_PATH;
    for (uint32_t d = 0; d < rd->depth; d++) {
        ws_frame *f = &rd->stack[d];
        if (f->path == SP_WS_NO_PATH) {
            /* Paths of different locations never share a parent, except the root: the
             * location goes into the key of top-level paths. */
            uint64_t key = parent == SP_WS_NO_PATH
                               ? (1ull << 63) | (uint64_t)rd->location << 32 | f->region
                               : (uint64_t)parent << 32 | f->region;
            uint32_t id = sp_u64map_get(&rd->paths, key);
            if (id == SP_NO_ID) {
                size_t cap = in->path_capacity;
                id = in->path_count;
                size_t cap2 = cap, cap3 = cap;
                if (!grow((void **)&in->path_parent, sizeof(uint32_t), &cap, id + 1) ||
                    !grow((void **)&in->path_region, sizeof(uint32_t), &cap2, id + 1) ||
                    !grow((void **)&in->path_location, sizeof(uint32_t), &cap3, id + 1) ||
                    sp_u64map_put(&rd->paths, key, id) != 0) {
                    rd->failed = true;
                    return 0;
                }
                in->path_capacity = (uint32_t)cap;
                in->path_parent[id] = parent;
                in->path_region[id] = f->region;
                in->path_location[id] = rd->location;
                in->path_count++;
            }
            f->path = id;
        }
        parent = f->path;
    }
    return parent;
}

/* The communicator's index in in->comms, defined from the definitions on first use; -1
 * when its members are not all in this group (another world, an inter-communicator). */
static int64_t comm_index(ws_reader *rd, uint32_t comm)
{
    sp_defs *defs = &rd->m->defs;
    if (comm >= defs->comm_count)
        return -1;
    if (rd->comm_of[comm])
        return rd->comm_of[comm] - 1;
    const sp_comm *c = &defs->comms[comm];
    if (c->kind == SP_COMM_INTER || c->kind == SP_COMM_GROUP || !c->size)
        return rd->comm_of[comm] = -1, -1;
    uint32_t *members = malloc(c->size * sizeof *members);
    sp_ws_comm *grown = realloc(rd->in->comms, (rd->in->comm_count + 1) * sizeof *grown);
    if (!members || !grown) {
        free(members);
        if (grown)
            rd->in->comms = grown;
        rd->failed = true;
        return -1;
    }
    rd->in->comms = grown;
    for (uint32_t i = 0; i < c->size; i++) {
        if (SP_PROCESS_WORLD(c->members[i]) != 0 ||
            SP_PROCESS_RANK(c->members[i]) >= rd->m->ipc.size) {
            free(members);
            rd->comm_of[comm] = -1;
            return -1;
        }
        members[i] = SP_PROCESS_RANK(c->members[i]);
    }
    grown[rd->in->comm_count] = (sp_ws_comm){c->key, c->size, members};
    rd->comm_of[comm] = ++rd->in->comm_count;
    return rd->comm_of[comm] - 1;
}

/* A window's fences are collectives of its communicator's members, replayed under the
 * window's key (the same on every member): their order need not agree with that of the
 * communicator's own collectives. */
static int64_t window_index(ws_reader *rd, uint32_t win)
{
    sp_defs *defs = &rd->m->defs;
    if (win >= defs->win_count)
        return -1;
    if (rd->win_of[win])
        return rd->win_of[win] - 1;
    int64_t c = comm_index(rd, defs->wins[win].comm);
    if (c < 0)
        return rd->win_of[win] = -1, -1;
    uint32_t size = rd->in->comms[c].size;
    uint32_t *members = malloc(size * sizeof *members);
    sp_ws_comm *grown = realloc(rd->in->comms, (rd->in->comm_count + 1) * sizeof *grown);
    if (grown)
        rd->in->comms = grown;
    if (!members || !grown) {
        free(members);
        rd->failed = true;
        return -1;
    }
    memcpy(members, rd->in->comms[c].members, size * sizeof *members);
    rd->in->comms[rd->in->comm_count] = (sp_ws_comm){defs->wins[win].key, size, members};
    rd->win_of[win] = ++rd->in->comm_count;
    return rd->win_of[win] - 1;
}

static sp_ws_event *add_event(ws_reader *rd, uint8_t kind, bool wait_for_leave)
{
    sp_ws_input *in = rd->in;
    if (!grow((void **)&in->events, sizeof *in->events, &in->capacity, in->count + 1) ||
        (wait_for_leave && !grow((void **)&rd->pending, sizeof *rd->pending,
                                 &rd->pending_capacity, rd->pending_count + 1))) {
        rd->failed = true;
        return NULL;
    }
    sp_ws_event *e = &in->events[in->count];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->root = SP_NO_ROOT;
    if (wait_for_leave) {
        rd->pending[rd->pending_count].event = in->count;
        rd->pending[rd->pending_count++].depth = rd->depth;
    }
    in->count++;
    return e;
}

/* A point-to-point record: peer << 32 | tag in payload b. */
static void p2p(ws_reader *rd, const sp_trace_record *r, bool send)
{
    if (rd->depth == 0)
        return;
    const sp_trace_payload *p = (const sp_trace_payload *)(r + 1);
    int64_t c = comm_index(rd, r->ref);
    uint32_t peer = (uint32_t)(p->b >> 32);
    if (c < 0 || peer >= rd->in->comms[c].size)
        return;
    ws_frame *f = &rd->stack[rd->depth - 1];
    uint32_t path = current_path(rd);
    /* a send waits for its leave too: a blocking send's duration tells Late Receiver */
    sp_ws_event *e = add_event(rd, send ? SP_WS_SEND : SP_WS_RECV, true);
    if (!e)
        return;
    if (p->a == 0)
        e->op |= SP_WS_EMPTY;
    if (send && r->kind == SP_REC_MPI_SEND &&
        region_class(rd, f->region) == REGION_BLOCKING_SEND)
        e->op |= SP_WS_BLOCKING;
    if (r->kind == SP_REC_MPI_IRECV) {
        const sp_trace_payload *q = (const sp_trace_payload *)(r + 2);
        uint32_t at = sp_u64map_get(&rd->irecv_posted, q->a);
        if (at != SP_NO_ID && at < rd->posted_count && rd->posted_at[at] < f->enter) {
            e->op |= SP_WS_POSTED;
            e->posted = rd->posted_at[at];
        }
    }
    e->peer = rd->in->comms[c].members[peer];
    e->tag = (uint32_t)p->b;
    e->comm = rd->in->comms[c].key;
    e->enter = f->enter;
    e->cnode = path;
    if (!send) {
        if (!f->completion)
            f->completion = ++rd->next_completion;
        e->completion = f->completion;
        if (rd->probe_open) {
            /* mpi4py's comm.recv(): the waiting happened in the probe before the receive */
            e->enter = rd->probe_enter;
            e->cnode = rd->probe_path;
            rd->probe_open = false;
        }
    }
}

static void collective(ws_reader *rd, const sp_trace_record *r, uint64_t op, uint64_t root)
{
    if (rd->depth == 0)
        return;
    int64_t c = comm_index(rd, r->ref);
    if (c < 0)
        return;
    ws_frame *f = &rd->stack[rd->depth - 1];
    uint32_t path = current_path(rd);
    sp_ws_event *e = add_event(rd, SP_WS_COLL, true);
    if (!e)
        return;
    e->op = (uint8_t)op;
    e->comm = rd->in->comms[c].key;
    e->root = root == SP_NO_ROOT || root >= rd->in->comms[c].size
                  ? SP_NO_ROOT
                  : rd->in->comms[c].members[root];
    e->enter = f->enter;
    e->cnode = path;
}

/* MPI_Win_fence: its RMA collective record (ref: the window). */
static void fence(ws_reader *rd, const sp_trace_record *r)
{
    if (rd->depth == 0 || region_class(rd, rd->stack[rd->depth - 1].region) != REGION_FENCE)
        return;
    int64_t c = window_index(rd, r->ref);
    if (c < 0)
        return;
    ws_frame *f = &rd->stack[rd->depth - 1];
    uint32_t path = current_path(rd);
    sp_ws_event *e = add_event(rd, SP_WS_COLL, true);
    if (!e)
        return;
    e->op = SP_WS_OP_FENCE;
    e->comm = rd->in->comms[c].key;
    e->enter = f->enter;
    e->cnode = path;
}

/* MPI_Init and MPI_Finalize: collectives of the world, on keys of their own so that a rank
 * that did not record them cannot spoil the world's real collectives. */
#define KEY_INIT (UINT64_MAX - 1)
#define KEY_FINALIZE (UINT64_MAX - 2)

static void init_or_finalize(ws_reader *rd, uint8_t klass)
{
    sp_ws_input *in = rd->in;
    uint64_t key = klass == REGION_INIT ? KEY_INIT : KEY_FINALIZE;
    bool known = false;
    for (uint32_t c = 0; c < in->comm_count; c++)
        known |= in->comms[c].key == key;
    if (!known) {
        uint32_t size = rd->m->ipc.size;
        uint32_t *members = malloc(size * sizeof *members);
        sp_ws_comm *grown = realloc(in->comms, (in->comm_count + 1) * sizeof *grown);
        if (grown)
            in->comms = grown;
        if (!members || !grown) {
            free(members);
            rd->failed = true;
            return;
        }
        for (uint32_t i = 0; i < size; i++)
            members[i] = i;
        in->comms[in->comm_count++] = (sp_ws_comm){key, size, members};
    }
    ws_frame *f = &rd->stack[rd->depth - 1];
    uint32_t path = current_path(rd);
    sp_ws_event *e = add_event(rd, SP_WS_COLL, true);
    if (!e)
        return;
    e->op = klass == REGION_INIT ? SP_WS_OP_INIT : SP_WS_OP_FINALIZE;
    e->comm = key;
    e->enter = f->enter;
    e->cnode = path;
}

static void read_records(ws_reader *rd, const sp_trace_record *r, const sp_trace_record *end)
{
    while (r < end && !rd->failed) {
        unsigned len = sp_trace_record_length(r);
        switch (r->kind) {
        case SP_REC_ENTER: {
            size_t cap = rd->stack_capacity;
            if (!grow((void **)&rd->stack, sizeof *rd->stack, &cap, rd->depth + 1)) {
                rd->failed = true;
                break;
            }
            rd->stack_capacity = (uint32_t)cap;
            rd->stack[rd->depth++] = (ws_frame){r->ref, SP_WS_NO_PATH, to_common_ns(rd, r->time), 0};
            uint8_t klass = region_class(rd, r->ref);
            /* A probe's waiting belongs to the receive right after it, no other */
            if (klass != REGION_RECEIVE)
                rd->probe_open = false;
            if (klass == REGION_INIT || klass == REGION_FINALIZE)
                init_or_finalize(rd, klass);
            break;
        }
        case SP_REC_LEAVE:
            if (rd->depth == 0)
                break;
            if (region_class(rd, rd->stack[rd->depth - 1].region) == REGION_PROBE) {
                rd->probe_open = true;
                rd->probe_enter = rd->stack[rd->depth - 1].enter;
                rd->probe_path = current_path(rd);
            }
            {
                int64_t t = to_common_ns(rd, r->time);
                while (rd->pending_count && rd->pending[rd->pending_count - 1].depth >= rd->depth)
                    rd->in->events[rd->pending[--rd->pending_count].event].leave = t;
            }
            rd->depth--;
            break;
        case SP_REC_MPI_SEND:
        case SP_REC_MPI_ISEND:
            p2p(rd, r, true);
            break;
        case SP_REC_MPI_RECV:
        case SP_REC_MPI_IRECV:
            p2p(rd, r, false);
            break;
        case SP_REC_RMA_COLLECTIVE_END:
            fence(rd, r);
            break;
        case SP_REC_MPI_IRECV_REQUEST:
            if (rd->depth) {
                const sp_trace_payload *q = (const sp_trace_payload *)(r + 1);
                if (!grow((void **)&rd->posted_at, sizeof *rd->posted_at, &rd->posted_capacity,
                          rd->posted_count + 1) ||
                    sp_u64map_put(&rd->irecv_posted, q->a, (uint32_t)rd->posted_count) != 0) {
                    rd->failed = true;
                    break;
                }
                rd->posted_at[rd->posted_count++] = rd->stack[rd->depth - 1].enter;
            }
            break;
        case SP_REC_MPI_COLLECTIVE_END: {
            const sp_trace_payload *q = (const sp_trace_payload *)(r + 2);
            collective(rd, r, q->a, q->b);
            break;
        }
        default:
            break;
        }
        r += len ? len : 1;
    }
}

static void read_spill(ws_reader *rd, sp_trace_location *tl, void *buffer)
{
    char path[4200];
    sp_trace_spill_path(tl, path, sizeof path);
    FILE *f = tl->spill ? tl->spill : tl->spill_closed ? fopen(path, "rb") : NULL;
    if (!f)
        return;
    rewind(f);
    uint64_t bytes;
    while (!rd->failed && fread(&bytes, sizeof bytes, 1, f) == 1) {
        if (bytes > SP_TRACE_CHUNK_SIZE || fread(buffer, 1, bytes, f) != bytes) {
            rd->failed = true;
            break;
        }
        read_records(rd, buffer, (const sp_trace_record *)((char *)buffer + bytes));
    }
    if (f != tl->spill)
        fclose(f);
    else
        fseek(f, 0, SEEK_END); /* the encoder reads it again from the start */
}

int sp_trace_wait_state_input(sp_measurement *m, sp_ws_input *in, char *err, size_t errlen)
{
    memset(in, 0, sizeof *in);
    ws_reader rd;
    memset(&rd, 0, sizeof rd);
    rd.m = m;
    rd.in = in;
    uint64_t ticks = m->end.ticks - m->start.ticks;
    uint64_t ns = m->end.monotonic_ns - m->start.monotonic_ns;
    rd.ns_per_tick = ticks ? (double)ns / (double)ticks : 1.0;
    rd.region_class = calloc(m->defs.region_count + 1, 1);
    rd.comm_of = calloc(m->defs.comm_count + 1, sizeof *rd.comm_of);
    rd.win_of = calloc(m->defs.win_count + 1, sizeof *rd.win_of);
    void *buffer = malloc(SP_TRACE_CHUNK_SIZE);
    if (!rd.region_class || !rd.comm_of || !rd.win_of || !buffer ||
        sp_u64map_init(&rd.paths, 256) != 0 || sp_u64map_init(&rd.irecv_posted, 64) != 0)
        rd.failed = true;
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t l = 0; l < nlocs && !rd.failed; l++) {
        sp_trace_location *tl = trace_location(m->locations[l]);
        if (!tl)
            continue;
        rd.location = l;
        rd.depth = 0;
        rd.pending_count = 0;
        rd.probe_open = false;
        /* request ids are per location: forget the previous location's */
        sp_u64map_free(&rd.irecv_posted);
        if (sp_u64map_init(&rd.irecv_posted, 64) != 0) {
            rd.failed = true;
            break;
        }
        rd.posted_count = 0;
        read_spill(&rd, tl, buffer);
        sp_trace_retire_current_chunk(tl);
        for (raw_chunk *c = tl->full_first; c && !rd.failed; c = c->next)
            read_records(&rd, CHUNK_RECORDS(c), c->used_end);
        /* Frames still open (none after the end closed them) leave at the last event. */
        for (size_t i = 0; i < rd.pending_count; i++)
            if (!in->events[rd.pending[i].event].leave)
                in->events[rd.pending[i].event].leave = in->events[rd.pending[i].event].enter;
    }
    free(rd.region_class);
    free(rd.comm_of);
    free(rd.win_of);
    free(rd.stack);
    free(rd.pending);
    free(buffer);
    sp_u64map_free(&rd.paths);
    sp_u64map_free(&rd.irecv_posted);
    free(rd.posted_at);
    if (rd.failed) {
        sp_ws_input_free(in);
        return sp_error(err, errlen, "out of memory or unreadable records in the wait-state analysis");
    }
    return 0;
}
