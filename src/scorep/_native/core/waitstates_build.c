/* One rank's operations for the wait-state engine from its MPI events (waitstates_build.h).
 * Runs after the measurement (at its end, or offline): it allocates as it goes. */
#include "core/waitstates_build.h"

#include <stdlib.h>
#include <string.h>

#include "core/events.h"
#include "core/tables.h"

/* A frame of the location's stack. */
typedef struct {
    uint32_t region;
    uint32_t path; /* interned call path, SP_WS_NO_PATH until an MPI event needs it */
    int64_t enter;
    uint32_t completion; /* the receives this frame completed share it */
} ws_frame;

/* What MPI regions mean to the analysis beyond their events. */
enum { REGION_PLAIN = 1, REGION_PROBE, REGION_RECEIVE, REGION_INIT, REGION_FINALIZE,
       REGION_BLOCKING_SEND, REGION_FENCE, REGION_WAIT, REGION_WAIT_MULTI, REGION_WIN_POST,
       REGION_WIN_START, REGION_WIN_COMPLETE, REGION_WIN_WAIT, REGION_WIN_TEST };

/* MPI_Init and MPI_Finalize: collectives of the world, on keys of their own so that a rank
 * that did not record them cannot spoil the world's real collectives. */
#define KEY_INIT (UINT64_MAX - 1)
#define KEY_FINALIZE (UINT64_MAX - 2)

struct sp_ws_builder {
    const sp_ws_source *src;
    sp_ws_input *in;
    sp_u64map paths;       /* see current_path */
    uint8_t *region_class; /* per region: 0 unknown yet, REGION_* */
    int64_t *comm_of; /* per communicator: index into in->comms + 1, -1 unusable, 0 unknown */
    int64_t *win_of;  /* per window: the same for the window's own entry */
    ws_frame *stack;
    size_t depth, stack_capacity;
    uint32_t location;
    bool in_location;
    /* events waiting for their frame's leave: index into in->events, frame depth */
    struct { size_t event; size_t depth; } *pending;
    size_t pending_count, pending_capacity;
    /* the last probe's frame (MPI_Probe, MPI_Mprobe): the receive after it waited there */
    bool probe_open;
    int64_t probe_enter;
    uint32_t probe_path;
    uint32_t next_completion;
    int64_t last_ns; /* the location's latest time: its timeline ends there */
    /* The timeline's last piece, not encoded yet: a piece of no length is replaced by the
     * next, and a return into the same path is not repeated (add_piece). */
    bool piece_pending;
    int64_t pending_time;
    uint32_t pending_path;
    bool new_block;        /* the next piece encoded begins a block (a location's first) */
    int64_t encoded_time;  /* the time of the last piece encoded */
    size_t encoded, block_pieces; /* pieces encoded; in the current block */
    /* When each pending MPI_Irecv was posted (the enter of its call), by request id: the
     * receive completed later in MPI_Wait* was ready from then on (Late Receiver). Request
     * ids are per location. */
    sp_u64map irecv_posted; /* request -> index into posted_at */
    int64_t *posted_at;
    size_t posted_count, posted_capacity;
    /* Each pending MPI_Isend's operation, by request id (per location): the MPI_Wait* that
     * completes it is where it waits for a late receiver. */
    sp_u64map isend_event; /* request -> index into in->events */
    bool failed;
};

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

static int status(const sp_ws_builder *b)
{
    return b->failed ? -1 : 0;
}

sp_ws_builder *sp_ws_builder_new(const sp_ws_source *source, sp_ws_input *in)
{
    sp_ws_builder *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->src = source;
    b->in = in;
    b->region_class = calloc((size_t)source->region_count + 1, 1);
    b->comm_of = calloc((size_t)source->comm_count + 1, sizeof *b->comm_of);
    b->win_of = calloc((size_t)source->win_count + 1, sizeof *b->win_of);
    bool paths = sp_u64map_init(&b->paths, 256) == 0;
    bool posted = sp_u64map_init(&b->irecv_posted, 64) == 0;
    bool isends = sp_u64map_init(&b->isend_event, 64) == 0;
    if (!b->region_class || !b->comm_of || !b->win_of || !paths || !posted || !isends) {
        if (paths)
            sp_u64map_free(&b->paths);
        if (posted)
            sp_u64map_free(&b->irecv_posted);
        if (isends)
            sp_u64map_free(&b->isend_event);
        free(b->region_class);
        free(b->comm_of);
        free(b->win_of);
        free(b);
        return NULL;
    }
    return b;
}

static void add_piece(sp_ws_builder *b, int64_t ns, uint32_t path);

static void flush_piece(sp_ws_builder *b);

/* Calls still open at the end of a location's events leave at their enter. */
static void end_location(sp_ws_builder *b)
{
    for (size_t i = 0; i < b->pending_count; i++) {
        sp_ws_event *e = &b->in->events[b->pending[i].event];
        if (!e->leave)
            e->leave = e->enter;
    }
    b->pending_count = 0;
    b->depth = 0;
    b->probe_open = false;
    b->in_location = false;
    add_piece(b, b->last_ns, SP_WS_NO_PATH); /* the end marker */
    flush_piece(b);
}

/* The location's timeline begins (after the previous one's end marker). */
static void begin_timeline(sp_ws_builder *b, uint32_t location)
{
    sp_ws_input *in = b->in;
    sp_ws_timeline *grown =
        realloc(in->timelines, ((size_t)in->timeline_count + 1) * sizeof *grown);
    if (!grown) {
        b->failed = true;
        return;
    }
    in->timelines = grown;
    grown[in->timeline_count++] = (sp_ws_timeline){location, in->piece_count, in->piece_count};
    b->piece_pending = false;
    b->new_block = true;
}

/* `*array` of `capacity` items cut to `count` (a failed cut leaves it larger, which is
 * harmless: the capacity below is set to the count either way). */
static void fit(void **array, size_t item, size_t count, size_t capacity)
{
    if (!*array || count >= capacity)
        return;
    void *p = realloc(*array, (count ? count : 1) * item);
    if (p)
        *array = p;
}

/* The arrays grew by doubling: up to half of each is unused. The replay and the critical
 * path allocate their working memory on top of what the input holds, so the input gives
 * back its spare room first (a rank of 10^6 trace events, benchmarks/wait_states.py:
 * 19.0 -> 14.9 MB). Nothing is appended after this. */
static void fit_input(sp_ws_input *in)
{
    fit((void **)&in->events, sizeof *in->events, in->count, in->capacity);
    fit((void **)&in->piece_bytes, 1, in->piece_bytes_size, in->piece_bytes_capacity);
    fit((void **)&in->piece_blocks, sizeof *in->piece_blocks, in->piece_block_count,
        in->piece_block_capacity);
    fit((void **)&in->path_parent, sizeof *in->path_parent, in->path_count, in->path_capacity);
    fit((void **)&in->path_region, sizeof *in->path_region, in->path_count, in->path_capacity);
    fit((void **)&in->path_location, sizeof *in->path_location, in->path_count,
        in->path_capacity);
    fit((void **)&in->path_hash, sizeof *in->path_hash, in->path_count, in->path_capacity);
    if (in->count < in->capacity)
        in->capacity = in->count;
    in->piece_capacity = in->piece_count; /* the pieces it holds room for: no more */
    if (in->piece_bytes_size < in->piece_bytes_capacity)
        in->piece_bytes_capacity = in->piece_bytes_size;
    if (in->piece_block_count < in->piece_block_capacity)
        in->piece_block_capacity = in->piece_block_count;
    if (in->path_count < in->path_capacity)
        in->path_capacity = in->path_count;
}

int sp_ws_builder_finish(sp_ws_builder *b)
{
    if (!b)
        return -1;
    if (b->in_location)
        end_location(b);
    int result = status(b);
    if (result == 0)
        fit_input(b->in);
    sp_u64map_free(&b->paths);
    sp_u64map_free(&b->irecv_posted);
    sp_u64map_free(&b->isend_event);
    free(b->region_class);
    free(b->comm_of);
    free(b->win_of);
    free(b->stack);
    free(b->pending);
    free(b->posted_at);
    free(b);
    return result;
}

int sp_ws_builder_location(sp_ws_builder *b, uint32_t location)
{
    if (b->failed)
        return -1;
    if (b->in_location)
        end_location(b);
    b->location = location;
    b->in_location = true;
    b->last_ns = 0;
    begin_timeline(b, location);
    sp_u64map_free(&b->irecv_posted);
    sp_u64map_free(&b->isend_event);
    if (sp_u64map_init(&b->irecv_posted, 64) != 0) {
        memset(&b->irecv_posted, 0, sizeof b->irecv_posted);
        b->failed = true;
    }
    if (sp_u64map_init(&b->isend_event, 64) != 0) {
        memset(&b->isend_event, 0, sizeof b->isend_event);
        b->failed = true;
    }
    b->posted_count = 0;
    return status(b);
}

static uint8_t region_class(sp_ws_builder *b, uint32_t region)
{
    if (region >= b->src->region_count)
        return REGION_PLAIN;
    if (!b->region_class[region]) {
        const char *name = b->src->region_name(b->src->ctx, region);
        uint8_t c = REGION_PLAIN;
        if (!name)
            c = REGION_PLAIN;
        else if (!strcmp(name, "MPI_Probe") || !strcmp(name, "MPI_Mprobe"))
            c = REGION_PROBE;
        else if (!strcmp(name, "MPI_Recv") || !strcmp(name, "MPI_Mrecv") ||
                 !strcmp(name, "MPI_Imrecv"))
            c = REGION_RECEIVE;
        else if (!strcmp(name, "MPI_Init") || !strcmp(name, "MPI_Init_thread"))
            c = REGION_INIT;
        else if (!strcmp(name, "MPI_Finalize"))
            c = REGION_FINALIZE;
        else if (!strcmp(name, "MPI_Send") || !strcmp(name, "MPI_Ssend") ||
                 !strcmp(name, "MPI_Rsend"))
            c = REGION_BLOCKING_SEND; /* may wait for the receive: Late Receiver */
        else if (!strcmp(name, "MPI_Win_fence"))
            c = REGION_FENCE;
        else if (!strcmp(name, "MPI_Wait"))
            c = REGION_WAIT;
        else if (!strcmp(name, "MPI_Waitall") || !strcmp(name, "MPI_Waitany") ||
                 !strcmp(name, "MPI_Waitsome"))
            c = REGION_WAIT_MULTI;
        else if (!strcmp(name, "MPI_Win_post"))
            c = REGION_WIN_POST;
        else if (!strcmp(name, "MPI_Win_start"))
            c = REGION_WIN_START;
        else if (!strcmp(name, "MPI_Win_complete"))
            c = REGION_WIN_COMPLETE;
        else if (!strcmp(name, "MPI_Win_wait"))
            c = REGION_WIN_WAIT;
        else if (!strcmp(name, "MPI_Win_test"))
            c = REGION_WIN_TEST;
        b->region_class[region] = c;
    }
    return b->region_class[region];
}

/* The call path `region` called from `parent` (SP_WS_NO_PATH: the location's root),
 * interned. Every frame has its path from its enter on: the timeline charges them all. */
static uint32_t intern_path(sp_ws_builder *b, uint32_t parent, uint32_t region)
{
    sp_ws_input *in = b->in;
    /* Paths of different locations never share a parent, except the root: the location
     * goes into the key of top-level paths. */
    uint64_t key = parent == SP_WS_NO_PATH
                       ? (1ull << 63) | (uint64_t)b->location << 32 | region
                       : (uint64_t)parent << 32 | region;
    uint32_t id = sp_u64map_get(&b->paths, key);
    if (id != SP_NO_ID)
        return id;
    id = in->path_count;
    size_t cap = in->path_capacity, cap2 = cap, cap3 = cap, cap4 = cap;
    if (!grow((void **)&in->path_parent, sizeof(uint32_t), &cap, (size_t)id + 1) ||
        !grow((void **)&in->path_region, sizeof(uint32_t), &cap2, (size_t)id + 1) ||
        !grow((void **)&in->path_location, sizeof(uint32_t), &cap3, (size_t)id + 1) ||
        !grow((void **)&in->path_hash, sizeof(uint64_t), &cap4, (size_t)id + 1) ||
        sp_u64map_put(&b->paths, key, id) != 0) {
        b->failed = true;
        return 0;
    }
    /* FNV-1a over the region names from the root: ranks name the same call path alike
     * (their region ids differ before unification) */
    uint64_t h = parent == SP_WS_NO_PATH ? 14695981039346656037ull : in->path_hash[parent];
    const char *name = region < b->src->region_count ? b->src->region_name(b->src->ctx, region)
                                                     : NULL;
    if (name)
        for (const char *c = name; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
    else
        h = (h ^ region) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull; /* the separator: "a" > "bc" is not "ab" > "c" */
    in->path_capacity = (uint32_t)cap;
    in->path_parent[id] = parent;
    in->path_region[id] = region;
    in->path_location[id] = b->location;
    in->path_hash[id] = h;
    in->path_count++;
    return id;
}

/* The call path of the innermost open frame. */
static uint32_t current_path(sp_ws_builder *b)
{
    return b->depth ? b->stack[b->depth - 1].path : SP_WS_NO_PATH;
}

static bool put_varint(sp_ws_builder *b, uint64_t v)
{
    sp_ws_input *in = b->in;
    if (!grow((void **)&in->piece_bytes, 1, &in->piece_bytes_capacity,
              in->piece_bytes_size + 10))
        return false;
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        in->piece_bytes[in->piece_bytes_size++] = byte | (v ? 0x80 : 0);
    } while (v);
    return true;
}

/* The pending piece into the compact bytes (waitstates.h). */
static void flush_piece(sp_ws_builder *b)
{
    sp_ws_input *in = b->in;
    if (b->failed || !b->piece_pending)
        return;
    b->piece_pending = false;
    int64_t t = b->pending_time;
    uint64_t path = b->pending_path == SP_WS_NO_PATH ? 0 : (uint64_t)b->pending_path + 1;
    bool ok;
    if (b->new_block || b->block_pieces == SP_WS_PIECE_BLOCK || t <= b->encoded_time) {
        ok = grow((void **)&in->piece_blocks, sizeof *in->piece_blocks,
                  &in->piece_block_capacity, in->piece_block_count + 1);
        if (ok)
            in->piece_blocks[in->piece_block_count++] =
                (sp_ws_piece_block){t, b->encoded, in->piece_bytes_size};
        ok = ok && put_varint(b, path);
        b->new_block = false;
        b->block_pieces = 0;
    } else {
        ok = put_varint(b, (uint64_t)(t - b->encoded_time)) && put_varint(b, path);
    }
    if (!ok) {
        b->failed = true;
        return;
    }
    b->encoded_time = t;
    b->encoded++;
    b->block_pieces++;
}

/* The location's timeline goes on in `path` from `ns` (a zero-length piece is replaced,
 * a piece that goes on in its own path is not repeated). */
static void add_piece(sp_ws_builder *b, int64_t ns, uint32_t path)
{
    sp_ws_input *in = b->in;
    if (b->failed || !in->timeline_count)
        return;
    if (b->piece_pending) {
        if (b->pending_path == path)
            return;
        if (b->pending_time >= ns) {
            b->pending_path = path;
            return;
        }
        flush_piece(b);
    }
    b->piece_pending = true;
    b->pending_time = ns;
    b->pending_path = path;
    in->piece_count++;
    in->timelines[in->timeline_count - 1].end = in->piece_count;
}

/* A new entry at the end of in->comms: its members' array to fill, NULL when out of
 * memory. */
static uint32_t *add_comm(sp_ws_builder *b, uint64_t key, uint32_t size)
{
    sp_ws_input *in = b->in;
    uint32_t *members = malloc((size ? size : 1) * sizeof *members);
    sp_ws_comm *grown = members ? realloc(in->comms, ((size_t)in->comm_count + 1) * sizeof *grown)
                                : NULL;
    if (!grown) {
        free(members);
        b->failed = true;
        return NULL;
    }
    in->comms = grown;
    grown[in->comm_count++] = (sp_ws_comm){key, size, members};
    return members;
}

/* The index in in->comms of communicator `id`, or with `window` of window `id`, made on
 * first use; -1 when unusable: its members are not all ranks of the group (another world,
 * an inter-communicator). A window's fences are collectives of its communicator's members,
 * replayed under the window's key (the same on every member): their order need not agree
 * with that of the communicator's own collectives. */
static int64_t entry_index(sp_ws_builder *b, uint32_t id, bool window)
{
    const sp_ws_source *s = b->src;
    int64_t *index_of = window ? b->win_of : b->comm_of;
    if (id >= (window ? s->win_count : s->comm_count))
        return -1;
    if (index_of[id])
        return index_of[id] - 1;
    index_of[id] = -1; /* until its entry is made */
    uint64_t key;
    uint32_t size, comm = id;
    int64_t of_comm = -1; /* a window's: its communicator's entry */
    if (window) {
        if (!s->window(s->ctx, id, &key, &comm) || (of_comm = entry_index(b, comm, false)) < 0)
            return -1;
        size = b->in->comms[of_comm].size;
    } else {
        if (!s->comm(s->ctx, comm, &key, &size) || !size)
            return -1;
        for (uint32_t i = 0; i < size; i++)
            if (s->member(s->ctx, comm, i) >= s->group_size)
                return -1;
    }
    uint32_t *members = add_comm(b, key, size);
    if (!members)
        return -1;
    for (uint32_t i = 0; i < size; i++)
        members[i] = window ? b->in->comms[of_comm].members[i] : s->member(s->ctx, comm, i);
    index_of[id] = b->in->comm_count;
    return index_of[id] - 1;
}

/* A new operation of the innermost call (b->depth > 0), waiting for that call's leave. */
static sp_ws_event *add_event(sp_ws_builder *b, uint8_t kind, uint64_t comm_key)
{
    sp_ws_input *in = b->in;
    uint32_t path = current_path(b);
    if (b->failed ||
        !grow((void **)&in->events, sizeof *in->events, &in->capacity, in->count + 1) ||
        !grow((void **)&b->pending, sizeof *b->pending, &b->pending_capacity,
              b->pending_count + 1)) {
        b->failed = true;
        return NULL;
    }
    sp_ws_event *e = &in->events[in->count];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->root = SP_NO_ROOT;
    e->comm = comm_key;
    e->enter = b->stack[b->depth - 1].enter;
    e->cnode = path;
    b->pending[b->pending_count].event = in->count;
    b->pending[b->pending_count++].depth = b->depth;
    in->count++;
    return e;
}

static void init_or_finalize(sp_ws_builder *b, uint8_t klass)
{
    sp_ws_input *in = b->in;
    uint64_t key = klass == REGION_INIT ? KEY_INIT : KEY_FINALIZE;
    bool known = false;
    for (uint32_t c = 0; c < in->comm_count; c++)
        known |= in->comms[c].key == key;
    if (!known) {
        uint32_t size = b->src->group_size;
        uint32_t *members = add_comm(b, key, size);
        if (!members)
            return;
        for (uint32_t i = 0; i < size; i++)
            members[i] = i;
    }
    sp_ws_event *e = add_event(b, SP_WS_COLL, key);
    if (e)
        e->op = klass == REGION_INIT ? SP_WS_OP_INIT : SP_WS_OP_FINALIZE;
}

int sp_ws_builder_enter(sp_ws_builder *b, uint32_t region, int64_t ns)
{
    if (b->failed)
        return -1;
    if (!grow((void **)&b->stack, sizeof *b->stack, &b->stack_capacity, b->depth + 1)) {
        b->failed = true;
        return -1;
    }
    uint32_t path = intern_path(b, current_path(b), region);
    b->stack[b->depth++] = (ws_frame){region, path, ns, 0};
    add_piece(b, ns, path);
    b->last_ns = ns;
    uint8_t klass = region_class(b, region);
    if (klass != REGION_RECEIVE) /* a probe's waiting belongs to the receive right after it */
        b->probe_open = false;
    if (klass == REGION_INIT || klass == REGION_FINALIZE)
        init_or_finalize(b, klass);
    return status(b);
}

int sp_ws_builder_leave(sp_ws_builder *b, int64_t ns)
{
    if (b->failed || b->depth == 0)
        return status(b);
    if (region_class(b, b->stack[b->depth - 1].region) == REGION_PROBE) {
        b->probe_open = true;
        b->probe_enter = b->stack[b->depth - 1].enter;
        b->probe_path = current_path(b);
    }
    while (b->pending_count && b->pending[b->pending_count - 1].depth >= b->depth)
        b->in->events[b->pending[--b->pending_count].event].leave = ns;
    b->depth--;
    add_piece(b, ns, current_path(b));
    b->last_ns = ns;
    return status(b);
}

/* A message: the send waits for its leave too (a blocking send's duration tells Late
 * Receiver), the receive for the leave of the call that completed it. */
static sp_ws_event *message(sp_ws_builder *b, bool send, uint32_t comm, uint32_t peer,
                            uint32_t tag, uint64_t bytes)
{
    if (b->failed || b->depth == 0)
        return NULL;
    int64_t c = entry_index(b, comm, false);
    if (c < 0 || peer >= b->in->comms[c].size)
        return NULL;
    uint32_t peer_rank = b->in->comms[c].members[peer];
    sp_ws_event *e = add_event(b, send ? SP_WS_SEND : SP_WS_RECV, b->in->comms[c].key);
    if (!e)
        return NULL;
    e->peer = peer_rank;
    e->tag = tag;
    if (bytes == 0)
        e->op |= SP_WS_EMPTY;
    return e;
}

int sp_ws_builder_send(sp_ws_builder *b, uint32_t comm, uint32_t peer, uint32_t tag,
                       uint64_t bytes, bool blocking_record, uint64_t request)
{
    sp_ws_event *e = message(b, true, comm, peer, tag, bytes);
    if (e && blocking_record &&
        region_class(b, b->stack[b->depth - 1].region) == REGION_BLOCKING_SEND)
        e->op |= SP_WS_BLOCKING;
    if (e && request != SP_WS_NO_REQUEST && b->in->count - 1 < SP_NO_ID &&
        sp_u64map_put(&b->isend_event, request, (uint32_t)(b->in->count - 1)) != 0)
        b->failed = true;
    return status(b);
}

/* The id the operations one call completed share: the Late Sender (and Late Receiver)
 * instances of an MPI_Waitall count once. */
static uint32_t call_completion(sp_ws_builder *b)
{
    ws_frame *f = &b->stack[b->depth - 1];
    if (!f->completion)
        f->completion = ++b->next_completion;
    return f->completion;
}

int sp_ws_builder_isend_complete(sp_ws_builder *b, uint64_t request)
{
    if (b->failed || b->depth == 0)
        return status(b);
    uint8_t klass = region_class(b, b->stack[b->depth - 1].region);
    uint32_t at = sp_u64map_get(&b->isend_event, request);
    if ((klass != REGION_WAIT && klass != REGION_WAIT_MULTI) || at == SP_NO_ID ||
        at >= b->in->count || b->in->events[at].kind != SP_WS_SEND)
        return status(b);
    if (!grow((void **)&b->pending, sizeof *b->pending, &b->pending_capacity,
              b->pending_count + 1)) {
        b->failed = true;
        return -1;
    }
    sp_ws_event *e = &b->in->events[at];
    e->op |= SP_WS_WAITED | (klass == REGION_WAIT_MULTI ? SP_WS_MULTI : 0);
    e->posted = b->stack[b->depth - 1].enter;
    e->leave = e->posted; /* until the call leaves */
    e->cnode = current_path(b);
    e->completion = call_completion(b);
    b->pending[b->pending_count].event = at;
    b->pending[b->pending_count++].depth = b->depth;
    /* request ids may come again: this one is done */
    if (sp_u64map_put(&b->isend_event, request, SP_NO_ID - 1) != 0)
        b->failed = true;
    return status(b);
}

int sp_ws_builder_rma_group_sync(sp_ws_builder *b, uint32_t win, uint32_t group)
{
    if (b->failed || b->depth == 0)
        return status(b);
    const sp_ws_source *s = b->src;
    uint8_t klass = region_class(b, b->stack[b->depth - 1].region);
    uint8_t kind = klass == REGION_WIN_POST       ? SP_WS_GATS_POST
                   : klass == REGION_WIN_START    ? SP_WS_GATS_START
                   : klass == REGION_WIN_COMPLETE ? SP_WS_GATS_COMPLETE
                   : klass == REGION_WIN_WAIT || klass == REGION_WIN_TEST ? SP_WS_GATS_WAIT
                                                                          : SP_WS_COLL;
    uint32_t size = 0;
    if (kind == SP_WS_COLL || !s->group || group >= s->group_count ||
        !s->group(s->ctx, group, &size))
        return status(b);
    int64_t c = entry_index(b, win, true);
    if (c < 0)
        return status(b);
    uint64_t key = b->in->comms[c].key;
    uint32_t call = call_completion(b);
    for (uint32_t i = 0; i < size && !b->failed; i++) {
        uint32_t rank = s->group_member(s->ctx, group, i);
        if (rank >= s->group_size)
            continue;
        sp_ws_event *e = add_event(b, kind, key);
        if (!e)
            break;
        e->peer = rank;
        e->completion = call;
        if (klass == REGION_WIN_TEST)
            e->op |= SP_WS_TESTED;
    }
    return status(b);
}

int sp_ws_builder_recv(sp_ws_builder *b, uint32_t comm, uint32_t peer, uint32_t tag,
                       uint64_t bytes, uint64_t request)
{
    sp_ws_event *e = message(b, false, comm, peer, tag, bytes);
    if (!e)
        return status(b);
    ws_frame *f = &b->stack[b->depth - 1];
    if (request != SP_WS_NO_REQUEST) {
        uint32_t at = sp_u64map_get(&b->irecv_posted, request);
        if (at != SP_NO_ID && at < b->posted_count && b->posted_at[at] < f->enter) {
            e->op |= SP_WS_POSTED;
            e->posted = b->posted_at[at];
        }
    }
    e->completion = call_completion(b);
    if (region_class(b, f->region) == REGION_WAIT_MULTI)
        e->op |= SP_WS_MULTI; /* sends it completed are no Late Receiver if this waited */
    if (b->probe_open) {
        /* mpi4py's comm.recv(): the waiting happened in the probe before the receive */
        e->enter = b->probe_enter;
        e->cnode = b->probe_path;
        b->probe_open = false;
    }
    return status(b);
}

int sp_ws_builder_irecv_request(sp_ws_builder *b, uint64_t request)
{
    if (b->failed || b->depth == 0)
        return status(b);
    if (!grow((void **)&b->posted_at, sizeof *b->posted_at, &b->posted_capacity,
              b->posted_count + 1) ||
        sp_u64map_put(&b->irecv_posted, request, (uint32_t)b->posted_count) != 0) {
        b->failed = true;
        return -1;
    }
    b->posted_at[b->posted_count++] = b->stack[b->depth - 1].enter;
    return 0;
}

int sp_ws_builder_collective(sp_ws_builder *b, uint32_t comm, uint8_t op, uint64_t root)
{
    if (b->failed || b->depth == 0)
        return status(b);
    int64_t c = entry_index(b, comm, false);
    if (c < 0)
        return status(b);
    uint32_t size = b->in->comms[c].size;
    uint32_t root_rank = root < size ? b->in->comms[c].members[root] : SP_NO_ROOT;
    sp_ws_event *e = add_event(b, SP_WS_COLL, b->in->comms[c].key);
    if (e) {
        e->op = op;
        e->root = root_rank;
    }
    return status(b);
}

int sp_ws_builder_rma_collective(sp_ws_builder *b, uint32_t win)
{
    if (b->failed || b->depth == 0 ||
        region_class(b, b->stack[b->depth - 1].region) != REGION_FENCE)
        return status(b);
    int64_t c = entry_index(b, win, true);
    if (c < 0)
        return status(b);
    sp_ws_event *e = add_event(b, SP_WS_COLL, b->in->comms[c].key);
    if (e)
        e->op = SP_WS_OP_FENCE;
    return status(b);
}
