/* profile.cubex written while the rows arrive (groups with point-to-point messages: MPI).
 *
 * A CUBE4 <metric>.data member is one row per call path holding every location's value; the
 * flat writer (write.c) therefore needs every location's trees at the root. Here the root
 * never holds them:
 *
 *  1. Up the binomial tree (the unification's): each rank's union of its subtree's call paths
 *     (identities only: parent, region, kind, parameter, value), its locations' names and
 *     what decides the metrics (flags). A parent keeps, per child, the map from the child's
 *     path ids to its own.
 *  2. The root makes the call tree from the union (write.c's identity of a node, in the order
 *     of first appearance over the locations in rank order, which is the order the union
 *     keeps: the cnodes come out as the flat writer numbers them), chooses the metrics and
 *     broadcasts their kinds, the block size and both row orders.
 *  3. Down the tree: each rank's path ids -> cnodes, each parent composing its own with its
 *     maps of the children; every rank then knows its own locations' nodes per cnode.
 *  4. Folded calls (rare, per location) are gathered at the root as cnodes.
 *  5. Per metric, in the file's row order, blocks of B rows: each rank fills B rows of its own
 *     locations (column-major: a location's B values together), appends its children's blocks
 *     in the order of their steps (a binomial subtree is a contiguous range of ranks, so that
 *     is location order) and sends the block up. The root's row callback (cube_writer.h)
 *     reads the rows across its own part and its children's blocks and drops them when the
 *     next block is due. A failed block is a status word that travels up like the values;
 *     the root, whatever happened, receives every block the others send.
 *
 * Rank 0 holds the call tree, the locations' names and one block: B x locations x 8 bytes,
 * B chosen so that this stays within sp_profile_stream_block_bytes.
 *
 * With many locations the rows are written by several ranks (6.): every member's size and
 * offset in the archive follow from the call tree, the metrics and the locations, so rank 0
 * writes the archive with a hole where each .data member's rows go (cube_writer.h's
 * fill_rows) and the ranks that are multiples of G (the "writers": G a power of two, so each
 * owns the binomial subtrees of ranks [w, w + G), a contiguous range of locations) collect
 * their range's blocks as rank 0 does and pwrite each row's slice at its offset into the one
 * file. G is the least power of two whose ranks' slice of a row is on average at least
 * SCOREP_PROFILING_WRITE_SLICE (64 KB): below that no write is large enough to pay on a
 * parallel file system, and with one writer (G >= ranks) rank 0 writes through the row
 * callback as before. Whether the file system is shared is asked, not assumed: rank 0 writes
 * a random word into the hole, every writer opens the file and reads it back; if any cannot,
 * rank 0 writes every row itself (the blocks come up the whole tree, as above). */
#define _FILE_OFFSET_BITS 64 /* a .data member of a big run passes 2 GiB */

#include "substrates/profile/columns.h"
#include "substrates/profile/profile_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/ipc.h"

uint64_t sp_profile_stream_block_bytes = 0; /* see profile_internal.h */
uint64_t sp_profile_stream_write_bytes = 0;  /* see profile_internal.h */
uint32_t sp_profile_stream_unshared_rank = UINT32_MAX; /* see profile_internal.h */

enum { STREAM_OK = 0, STREAM_FAILED = 1 };
enum { DEFAULT_BLOCK_BYTES = 32u << 20, DEFAULT_WRITE_BYTES = 64u << 10 };
/* The temporary file's path travels in a fixed field of the broadcast (PATH_MAX). */
enum { PATH_FIELD = 4096 };
/* A block message: the status word (padded to 8 bytes), then the values. */
enum { BLOCK_HEADER = 8 };

typedef struct {
    uint32_t parent, region, kind, parameter; /* parent: SP_NO_ID for a root */
    uint64_t value;
} path_node;

typedef struct {
    uint32_t rank;
    uint32_t nnodes;  /* the child's union */
    uint32_t *node_of; /* its path id -> ours (freed once the maps went down) */
    uint32_t nlocs;   /* the locations of its subtree */
} child;

typedef struct {
    const sp_ipc *ipc;
    bool ok;
    /* this rank's locations (the root's spawned parts after them: `ntail`), read back */
    column *cols;
    uint32_t ncols, nown;
    uint32_t **union_of; /* per column: its node -> our path id */
    /* the union of the subtree's call paths */
    path_node *nodes;
    uint32_t count, capacity;
    sp_u64map index;
    child children[32];
    uint32_t nchildren;
    /* the subtree's locations: (group id, name) in location order */
    sp_buffer locs;
    uint32_t nlocs;
    uint32_t flags;
    /* from the root */
    uint32_t ncnodes, nmetrics, block_rows;
    uint32_t group;      /* ranks per writer of the rows (0: rank 0 alone, the row callback) */
    uint32_t total_locs; /* the file's locations (a row's values) */
    uint32_t first_loc;  /* the file's index of this rank's first location */
    bool parallel_called; /* the root: the archive around the rows was written */
    bool folded;
    uint32_t *kinds, *inclusive, *deep, *wide;
    uint32_t *cnode_of;  /* our path id -> cnode */
    uint32_t *first;     /* [cnode * ncols + column]: the column's first node there */
    uint32_t **next;     /* per column: [node] -> its next node of the same cnode */
} stream;

/* ---- the union of call paths (as reduce.c merges it) ------------------------------------ */

static uint64_t path_hash(const path_node *n)
{
    uint64_t h = sp_hash_mix(((uint64_t)n->parent << 32 | n->region) ^ 0x9e3779b97f4a7c15ULL);
    h = sp_hash_mix(h ^ ((uint64_t)n->kind << 40) ^ n->parameter);
    return sp_hash_mix(h ^ n->value);
}

static uint32_t path_of(stream *s, const path_node *n)
{
    uint64_t key = path_hash(n);
    for (;; key++) {
        uint32_t c = sp_u64map_get(&s->index, key);
        if (c == SP_NO_ID)
            break;
        const path_node *x = &s->nodes[c];
        if (x->parent == n->parent && x->region == n->region && x->kind == n->kind &&
            x->parameter == n->parameter && x->value == n->value)
            return c;
    }
    if (s->count == s->capacity) {
        uint32_t cap = s->capacity ? s->capacity * 2 : 1024;
        path_node *grown = realloc(s->nodes, (size_t)cap * sizeof *grown);
        if (!grown)
            return SP_NO_ID;
        s->nodes = grown;
        s->capacity = cap;
    }
    if (sp_u64map_put(&s->index, key, s->count) != 0)
        return SP_NO_ID;
    s->nodes[s->count] = *n;
    return s->count++;
}

enum { FLAG_COMMUNICATION = 1, FLAG_ONE_SIDED = 2, FLAG_WAIT_STATES = 4, FLAG_FOLDED = 8,
       FLAG_IO = 16 /* << paradigm */ };

static uint32_t flags_of(const profile_flags *f)
{
    uint32_t bits = (f->communication ? FLAG_COMMUNICATION : 0) |
                    (f->one_sided ? FLAG_ONE_SIDED : 0) |
                    (f->wait_states ? FLAG_WAIT_STATES : 0) | (f->folded ? FLAG_FOLDED : 0);
    for (int p = 0; p < SP_IO_PARADIGM_COUNT; p++)
        if (f->io_moved[p])
            bits |= (uint32_t)FLAG_IO << p;
    return bits;
}

static void flags_to(uint32_t bits, profile_flags *f)
{
    f->communication = bits & FLAG_COMMUNICATION;
    f->one_sided = bits & FLAG_ONE_SIDED;
    f->wait_states = bits & FLAG_WAIT_STATES;
    f->folded = bits & FLAG_FOLDED;
    for (int p = 0; p < SP_IO_PARADIGM_COUNT; p++)
        f->io_moved[p] = bits & ((uint32_t)FLAG_IO << p);
}

/* Columns cols[from..ncols) into the union, their locations into the list. */
static int add_columns(stream *s, uint32_t from)
{
    profile_flags f;
    memset(&f, 0, sizeof f);
    for (uint32_t l = from; l < s->ncols; l++) {
        const column *col = &s->cols[l];
        s->union_of[l] = malloc((col->count ? col->count : 1) * sizeof *s->union_of[l]);
        if (!s->union_of[l])
            return -1;
        for (uint32_t i = 0; i < col->count; i++) {
            const flat_node *n = &col->nodes[i];
            path_node p = {n->parent == SP_PROFILE_NO_NODE ? SP_NO_ID : s->union_of[l][n->parent],
                           n->region, n->kind, n->parameter, (uint64_t)n->value};
            s->union_of[l][i] = path_of(s, &p);
            if (s->union_of[l][i] == SP_NO_ID)
                return -1;
        }
        sp_profile_column_flags(col, &f);
        sp_buffer_u32(&s->locs, col->rank_index); /* the group's id: read without `u` */
        sp_buffer_u32(&s->locs, col->name);
        s->nlocs++;
    }
    s->flags |= flags_of(&f);
    return s->locs.failed ? -1 : 0;
}

/* Reads a report (sp_profile_serialize_trees' layout, one chunk per rank) into columns. */
static int read_chunks(stream *s, const void *data, const uint64_t *sizes, uint32_t nchunks)
{
    uint32_t before = s->ncols;
    if (sp_profile_read_columns(&s->cols, &s->ncols, NULL, data, sizes, nchunks) != 0)
        return -1;
    uint32_t **grown = realloc(s->union_of, (s->ncols ? s->ncols : 1) * sizeof *grown);
    if (!grown)
        return -1;
    s->union_of = grown;
    for (uint32_t l = before; l < s->ncols; l++)
        s->union_of[l] = NULL;
    return add_columns(s, before);
}

/* ---- 1. the call paths up the tree ------------------------------------------------------ */

static int add_child(stream *s, uint32_t rank, const unsigned char *data, uint64_t size)
{
    sp_reader r;
    sp_reader_init(&r, data, size);
    uint32_t status = sp_reader_u32(&r);
    uint32_t flags = sp_reader_u32(&r);
    uint32_t nnodes = sp_reader_u32(&r);
    if (r.failed || status != STREAM_OK || nnodes > (r.size - r.pos) / 24 ||
        s->nchildren == sizeof s->children / sizeof s->children[0])
        return -1;
    child *c = &s->children[s->nchildren++];
    *c = (child){.rank = rank, .nnodes = nnodes};
    c->node_of = malloc((nnodes ? nnodes : 1) * sizeof *c->node_of);
    if (!c->node_of)
        return -1;
    for (uint32_t i = 0; i < nnodes; i++) {
        path_node n;
        uint32_t parent = sp_reader_u32(&r);
        if (parent != SP_NO_ID && parent >= i)
            return -1;
        n.parent = parent == SP_NO_ID ? SP_NO_ID : c->node_of[parent];
        n.region = sp_reader_u32(&r);
        n.kind = sp_reader_u32(&r);
        n.parameter = sp_reader_u32(&r);
        n.value = sp_reader_u64(&r);
        c->node_of[i] = path_of(s, &n);
        if (r.failed || c->node_of[i] == SP_NO_ID)
            return -1;
    }
    uint32_t nlocs = sp_reader_u32(&r);
    if (r.failed || nlocs > (r.size - r.pos) / 8)
        return -1;
    sp_buffer_put(&s->locs, r.data + r.pos, (size_t)nlocs * 8);
    r.pos += (size_t)nlocs * 8;
    c->nlocs = nlocs;
    s->nlocs += nlocs;
    s->flags |= flags;
    return s->locs.failed ? -1 : 0;
}

static int send_status(const sp_ipc *ipc, uint32_t dest, uint32_t status)
{
    return ipc->ops->send(ipc->ctx, &status, sizeof status, dest);
}

static int paths_up(stream *s)
{
    const sp_ipc *ipc = s->ipc;
    uint32_t rank = ipc->rank;
    for (uint32_t step = 1; step < ipc->size; step <<= 1) {
        if (rank & step) {
            sp_buffer b;
            sp_buffer_init(&b);
            sp_buffer_u32(&b, s->ok ? STREAM_OK : STREAM_FAILED);
            sp_buffer_u32(&b, s->flags);
            sp_buffer_u32(&b, s->count);
            for (uint32_t i = 0; i < s->count; i++) {
                const path_node *n = &s->nodes[i];
                sp_buffer_u32(&b, n->parent);
                sp_buffer_u32(&b, n->region);
                sp_buffer_u32(&b, n->kind);
                sp_buffer_u32(&b, n->parameter);
                sp_buffer_u64(&b, n->value);
            }
            sp_buffer_u32(&b, s->nlocs);
            sp_buffer_put(&b, s->locs.data, s->locs.size);
            int status = b.failed || !s->ok ? send_status(ipc, rank - step, STREAM_FAILED)
                                            : ipc->ops->send(ipc->ctx, b.data, b.size, rank - step);
            sp_buffer_free(&b);
            /* the locations' names are the root's alone from here on */
            sp_buffer_free(&s->locs);
            sp_buffer_init(&s->locs);
            return status;
        }
        if (rank + step >= ipc->size)
            continue;
        void *data = NULL;
        uint64_t bytes = 0;
        if (ipc->ops->recv(ipc->ctx, &data, &bytes, rank + step) != 0)
            s->ok = false;
        else if (s->ok && add_child(s, rank + step, data, bytes) != 0)
            s->ok = false;
        free(data);
    }
    return 0;
}

/* ---- 2. the call tree, the metrics and the row orders from the root ---------------------- */

enum { HEADER_STATUS, HEADER_CNODES, HEADER_METRICS, HEADER_ROWS, HEADER_FOLDED, HEADER_GROUP,
       HEADER_LOCS, HEADER_WORDS };

/* At the root: the cnodes of the union (t->cnodes), the metrics, the block size. */
static int root_plan(stream *s, sp_measurement *m, const sp_unified *u, unified_tree *t,
                     metric_choice *mc, profile_flags *f)
{
    s->cnode_of = malloc((s->count ? s->count : 1) * sizeof *s->cnode_of);
    if (!s->cnode_of)
        return -1;
    for (uint32_t i = 0; i < s->count; i++) {
        const path_node *p = &s->nodes[i];
        flat_node n;
        memset(&n, 0, sizeof n);
        n.region = p->region;
        n.kind = p->kind;
        n.parameter = p->parameter;
        n.value = (int64_t)p->value;
        int64_t parent = p->parent == SP_NO_ID ? -1 : (int64_t)s->cnode_of[p->parent];
        int64_t c = sp_profile_unify_node(t, parent, &n);
        if (c < 0)
            return -1;
        s->cnode_of[i] = (uint32_t)c;
    }
    flags_to(s->flags, f);
    sp_profile_choose_metrics(m, &u->global, f, mc);
    s->ncnodes = (uint32_t)t->count;
    s->nmetrics = (uint32_t)mc->count;
    uint64_t budget = sp_profile_stream_block_bytes ? sp_profile_stream_block_bytes
                                                    : DEFAULT_BLOCK_BYTES;
    uint64_t rows = budget / ((uint64_t)(s->nlocs ? s->nlocs : 1) * 8);
    s->block_rows = rows < 1 ? 1 : rows > s->ncnodes ? s->ncnodes : (uint32_t)rows;
    /* ranks per writer: the least power of two whose slice of a row is on average at least
     * `slice` bytes (doubles: the product may pass 64 bits when the size is set huge) */
    uint64_t asked = sp_profile_stream_write_bytes ? sp_profile_stream_write_bytes
                                                   : m->config.profile_write_slice;
    double slice = (double)(asked ? asked : DEFAULT_WRITE_BYTES);
    uint32_t size = s->ipc->size, group = 1;
    while (group < size && (double)group * s->nlocs * 8 < slice * size)
        group <<= 1;
    s->group = group < size && s->nmetrics ? group : 0;
    s->total_locs = s->nlocs;
    s->folded = f->folded;
    s->kinds = malloc((2 * (size_t)s->nmetrics + 2 * (size_t)s->ncnodes + 1) * sizeof *s->kinds);
    if (!s->kinds)
        return -1;
    s->inclusive = s->kinds + s->nmetrics;
    s->deep = s->inclusive + s->nmetrics;
    s->wide = s->deep + s->ncnodes;
    for (uint32_t k = 0; k < s->nmetrics; k++) {
        s->kinds[k] = mc->kind[k];
        s->inclusive[k] = mc->metrics[k].type == CUBE_INCLUSIVE;
    }
    return cube_row_orders(t->cnodes, t->count, s->deep, s->wide, NULL, 0);
}

/* Everyone: the header, then the kinds and orders (one buffer). */
static int plan_bcast(stream *s)
{
    const sp_ipc *ipc = s->ipc;
    uint32_t header[HEADER_WORDS] = {s->ok ? STREAM_OK : STREAM_FAILED, s->ncnodes, s->nmetrics,
                                     s->block_rows, s->folded, s->group, s->total_locs};
    if (ipc->ops->bcast(ipc->ctx, header, sizeof header, 0) != 0)
        return -1;
    if (header[HEADER_STATUS] != STREAM_OK)
        return -1;
    if (ipc->rank != 0) {
        s->ncnodes = header[HEADER_CNODES];
        s->nmetrics = header[HEADER_METRICS];
        s->block_rows = header[HEADER_ROWS];
        s->folded = header[HEADER_FOLDED];
        s->group = header[HEADER_GROUP];
        s->total_locs = header[HEADER_LOCS];
        s->kinds = malloc((2 * (size_t)s->nmetrics + 2 * (size_t)s->ncnodes + 1) *
                          sizeof *s->kinds);
        /* a rank without the memory for them cannot take part: the others would wait for it
         * (MPI ends such a job) */
        if (!s->kinds)
            return -1;
        s->inclusive = s->kinds + s->nmetrics;
        s->deep = s->inclusive + s->nmetrics;
        s->wide = s->deep + s->ncnodes;
    }
    return ipc->ops->bcast(ipc->ctx, s->kinds,
                           (2 * (uint64_t)s->nmetrics + 2 * (uint64_t)s->ncnodes) * 4, 0);
}

/* ---- 3. path ids -> cnodes down the tree ------------------------------------------------- */

static int maps_down(stream *s)
{
    const sp_ipc *ipc = s->ipc;
    uint32_t rank = ipc->rank;
    if (rank != 0) {
        uint32_t step = 1;
        while (!(rank & step))
            step <<= 1;
        void *data = NULL;
        uint64_t bytes = 0;
        if (ipc->ops->recv(ipc->ctx, &data, &bytes, rank - step) != 0)
            s->ok = false;
        uint32_t status = STREAM_FAILED;
        if (data && bytes >= 4)
            memcpy(&status, data, 4);
        if (status != STREAM_OK || bytes != 8 + (uint64_t)s->count * 4)
            s->ok = false;
        if (s->ok) {
            memcpy(&s->first_loc, (char *)data + 4, 4);
            s->cnode_of = malloc((s->count ? s->count : 1) * sizeof *s->cnode_of);
            if (!s->cnode_of)
                s->ok = false;
            else if (s->count)
                memcpy(s->cnode_of, (char *)data + 8, (size_t)s->count * 4);
        }
        free(data);
    }
    /* a child's first location: after ours (the root's spawned parts are the file's last) and
     * its earlier siblings' subtrees */
    uint32_t at = s->first_loc + s->nown;
    for (uint32_t k = 0; k < s->nchildren; k++) {
        child *c = &s->children[k];
        uint32_t *map = s->ok ? malloc(8 + (size_t)c->nnodes * 4) : NULL;
        int sent;
        if (!map) {
            s->ok = false;
            sent = send_status(ipc, c->rank, STREAM_FAILED);
        } else {
            map[0] = STREAM_OK;
            map[1] = at;
            for (uint32_t i = 0; i < c->nnodes; i++) {
                uint32_t cnode = s->cnode_of[c->node_of[i]];
                map[2 + i] = cnode < s->ncnodes ? cnode : 0;
            }
            sent = ipc->ops->send(ipc->ctx, map, 8 + (uint64_t)c->nnodes * 4, c->rank);
        }
        at += c->nlocs;
        free(map);
        free(c->node_of);
        c->node_of = NULL;
        if (sent != 0)
            s->ok = false;
    }
    if (!s->ok)
        return -1;
    /* our locations' nodes per cnode, as write.c's unify_columns chains them */
    s->first = malloc(((size_t)s->ncnodes * s->ncols + 1) * sizeof *s->first);
    s->next = calloc(s->ncols ? s->ncols : 1, sizeof *s->next);
    if (!s->first || !s->next)
        return -1;
    memset(s->first, 0xff, (size_t)s->ncnodes * s->ncols * sizeof *s->first);
    for (uint32_t l = 0; l < s->ncols; l++) {
        uint32_t count = s->cols[l].count;
        s->next[l] = malloc((count ? count : 1) * sizeof *s->next[l]);
        if (!s->next[l])
            return -1;
        for (uint32_t i = count; i-- > 0;) {
            uint32_t cnode = s->cnode_of[s->union_of[l][i]];
            if (cnode >= s->ncnodes)
                return -1;
            uint32_t *first = &s->first[(size_t)cnode * s->ncols + l];
            s->next[l][i] = *first;
            *first = i;
        }
    }
    return 0;
}

/* ---- 4. folded calls gathered as cnodes ---------------------------------------------------- */

/* [u32 own locations][u32 functions] per function [u32 cnode][u32 location] and the
 * function, [u32 pairs] per pair [u32 cnode][u32 location][u32 callee] and the pair, of
 * columns [from, to). */
static void folded_report(const stream *s, uint32_t from, uint32_t to, sp_buffer *b)
{
    sp_buffer_u32(b, to - from);
    uint32_t n = 0;
    for (uint32_t l = from; l < to; l++)
        n += s->cols[l].nfolded_functions;
    sp_buffer_u32(b, n);
    for (uint32_t l = from; l < to; l++) {
        const column *col = &s->cols[l];
        for (uint32_t i = 0; i < col->nfolded_functions; i++) {
            const folded_function *f = &col->folded_functions[i];
            sp_buffer_u32(b, s->cnode_of[s->union_of[l][f->collapse]]);
            sp_buffer_u32(b, l - from);
            sp_buffer_put(b, f, sizeof *f);
        }
    }
    n = 0;
    for (uint32_t l = from; l < to; l++)
        n += s->cols[l].nfolded_pairs;
    sp_buffer_u32(b, n);
    for (uint32_t l = from; l < to; l++) {
        const column *col = &s->cols[l];
        for (uint32_t i = 0; i < col->nfolded_pairs; i++) {
            const folded_pair *e = &col->folded_pairs[i];
            const folded_function *f = &col->folded_functions[e->function];
            sp_buffer_u32(b, s->cnode_of[s->union_of[l][f->collapse]]);
            sp_buffer_u32(b, l - from);
            sp_buffer_u32(b, f->region);
            sp_buffer_put(b, e, sizeof *e);
        }
    }
}

static void reader_bytes(sp_reader *r, void *out, size_t n)
{
    if (r->failed || n > r->size - r->pos) {
        r->failed = true;
        memset(out, 0, n);
        return;
    }
    memcpy(out, r->data + r->pos, n);
    r->pos += n;
}

typedef struct {
    void *all;      /* every rank's folded_report, then the root's spawned parts' */
    uint64_t *sizes;
    uint32_t nchunks;
    uint32_t ncnodes;
} folded_reports;

/* folded_calls.json from the reports, as write.c's folded_json prints it. */
static char *folded_text(void *user, const uint32_t *id_of, size_t *len)
{
    const folded_reports *fr = user;
    sp_buffer b;
    sp_buffer_init(&b);
    sp_profile_json_printf(&b, "{\"format\": \"scorep folded calls 1\", \"functions\": [");
    for (int pass = 0; pass < 2; pass++) {
        const char *sep = "\n";
        uint64_t offset = 0;
        uint32_t base = 0;
        if (pass == 1)
            sp_profile_json_printf(&b, "],\n\"pairs\": [");
        for (uint32_t c = 0; c < fr->nchunks; c++) {
            sp_reader r;
            sp_reader_init(&r, (const unsigned char *)fr->all + offset, fr->sizes[c]);
            offset += fr->sizes[c];
            uint32_t nlocs = sp_reader_u32(&r);
            uint32_t nf = sp_reader_u32(&r);
            for (uint32_t i = 0; i < nf && !r.failed; i++) {
                uint32_t cnode = sp_reader_u32(&r), l = sp_reader_u32(&r);
                folded_function f;
                reader_bytes(&r, &f, sizeof f);
                if (pass == 0 && !r.failed && cnode < fr->ncnodes) {
                    sp_profile_json_function(&b, sep, id_of[cnode], base + l, &f);
                    sep = ",\n";
                }
            }
            uint32_t np = sp_reader_u32(&r);
            for (uint32_t i = 0; i < np && !r.failed && pass == 1; i++) {
                uint32_t cnode = sp_reader_u32(&r), l = sp_reader_u32(&r);
                uint32_t callee = sp_reader_u32(&r);
                folded_pair e;
                reader_bytes(&r, &e, sizeof e);
                if (!r.failed && cnode < fr->ncnodes) {
                    sp_profile_json_pair(&b, sep, id_of[cnode], base + l, &e, callee);
                    sep = ",\n";
                }
            }
            base += nlocs;
        }
    }
    sp_profile_json_printf(&b, "]}\n");
    if (b.failed) {
        sp_buffer_free(&b);
        return NULL;
    }
    *len = b.size;
    return (char *)b.data;
}

/* ---- 5. blocks of rows ------------------------------------------------------------------------ */

/* This rank's columns [from, to) for rows k0 .. k0 + rows of metric m: column l's value of
 * row k at out + ((l - from) x col_step + k x row_step) x 8. */
static void fill_values(const stream *s, uint32_t m, uint32_t k0, uint32_t rows, uint32_t from,
                        uint32_t to, unsigned char *out, size_t col_step, size_t row_step)
{
    const uint32_t *order = s->inclusive[m] ? s->wide : s->deep;
    for (uint32_t l = from; l < to; l++)
        for (uint32_t k = 0; k < rows; k++) {
            uint32_t cnode = order[k0 + k];
            sp_profile_chain_value(&s->cols[l], s->next[l],
                                   s->first[(size_t)cnode * s->ncols + l], s->kinds[m],
                                   out + ((size_t)(l - from) * col_step + k * row_step) * 8);
        }
}

/* The same, column-major (a block's layout). */
static void fill_own(const stream *s, uint32_t m, uint32_t k0, uint32_t rows, uint32_t from,
                     uint32_t to, unsigned char *out)
{
    fill_values(s, m, k0, rows, from, to, out, rows, 1);
}

/* A child's block of `rows` rows: NULL (and its message freed) when it failed. */
static unsigned char *recv_block(stream *s, const child *c, uint32_t rows, void **message)
{
    const sp_ipc *ipc = s->ipc;
    void *data = NULL;
    uint64_t bytes = 0;
    *message = NULL;
    if (ipc->ops->recv(ipc->ctx, &data, &bytes, c->rank) != 0)
        return NULL;
    uint32_t status = STREAM_FAILED;
    if (bytes >= 4)
        memcpy(&status, data, 4);
    if (status != STREAM_OK || bytes != BLOCK_HEADER + (uint64_t)c->nlocs * rows * 8) {
        free(data);
        return NULL;
    }
    *message = data;
    return (unsigned char *)data + BLOCK_HEADER;
}

/* A rank other than the root: its subtree's block sent up. */
static int block_up(stream *s, uint32_t m, uint32_t k0, uint32_t rows)
{
    const sp_ipc *ipc = s->ipc;
    uint32_t step = 1;
    while (!(ipc->rank & step))
        step <<= 1;
    uint64_t values = (uint64_t)s->nlocs * rows * 8;
    unsigned char *block = s->ok ? malloc(BLOCK_HEADER + values) : NULL;
    if (!block)
        s->ok = false;
    else
        fill_own(s, m, k0, rows, 0, s->ncols, block + BLOCK_HEADER);
    uint64_t at = BLOCK_HEADER + (uint64_t)s->ncols * rows * 8;
    for (uint32_t k = 0; k < s->nchildren; k++) {
        void *message;
        const unsigned char *part = recv_block(s, &s->children[k], rows, &message);
        if (!part)
            s->ok = false;
        else if (block)
            memcpy(block + at, part, (size_t)s->children[k].nlocs * rows * 8);
        at += (uint64_t)s->children[k].nlocs * rows * 8;
        free(message);
    }
    int sent;
    if (s->ok) {
        uint32_t word[2] = {STREAM_OK, 0};
        memcpy(block, word, sizeof word);
        sent = ipc->ops->send(ipc->ctx, block, BLOCK_HEADER + values, ipc->rank - step);
    } else {
        sent = send_status(ipc, ipc->rank - step, STREAM_FAILED);
    }
    free(block);
    return sent;
}

/* The root's side: the block being written and where the next one starts. */
typedef struct {
    stream *s;
    uint32_t m, k0, rows;  /* the block held */
    uint32_t k;            /* the row the file asks for next */
    bool held;
    uint32_t next_m, next_k0; /* the next block of the sequence (next_m == nmetrics: none) */
    unsigned char *own;    /* the root's columns, then its spawned parts' */
    void *messages[32];    /* per child its message */
    const unsigned char *parts[32];
} root_blocks;

static void drop_block(root_blocks *rb)
{
    free(rb->own);
    rb->own = NULL;
    for (uint32_t k = 0; k < rb->s->nchildren; k++) {
        free(rb->messages[k]);
        rb->messages[k] = NULL;
        rb->parts[k] = NULL;
    }
    rb->held = false;
}

/* Receives the next block of the sequence (computes the root's part unless `discard`);
 * -1 when a part failed (the block is still taken off the wire). */
static int next_block(root_blocks *rb, bool discard)
{
    stream *s = rb->s;
    drop_block(rb);
    rb->m = rb->next_m;
    rb->k0 = rb->next_k0;
    rb->rows = s->ncnodes - rb->k0 < s->block_rows ? s->ncnodes - rb->k0 : s->block_rows;
    rb->next_k0 = rb->k0 + rb->rows;
    if (rb->next_k0 >= s->ncnodes) {
        rb->next_m++;
        rb->next_k0 = 0;
    }
    int status = 0;
    if (!discard) {
        rb->own = malloc((size_t)s->ncols * rb->rows * 8 + 1);
        if (!rb->own)
            status = -1;
        else
            fill_own(s, rb->m, rb->k0, rb->rows, 0, s->ncols, rb->own);
    }
    for (uint32_t k = 0; k < s->nchildren; k++) {
        rb->parts[k] = recv_block(s, &s->children[k], rb->rows, &rb->messages[k]);
        if (!rb->parts[k])
            status = -1;
    }
    rb->held = status == 0 && !discard;
    return status;
}

/* cube_writer.h's row callback at the root. */
static int root_row(void *user, uint32_t metric, uint32_t cnode, void *out)
{
    root_blocks *rb = user;
    stream *s = rb->s;
    /* the file asks for the rows in its order: the one after the last, or the next block's
     * first */
    if (!rb->held || metric != rb->m || rb->k == rb->k0 + rb->rows) {
        if (rb->next_m != metric || rb->next_m >= s->nmetrics || next_block(rb, false) != 0)
            return -1;
        rb->k = rb->k0;
    }
    const uint32_t *order = s->inclusive[metric] ? s->wide : s->deep;
    if (order[rb->k] != cnode)
        return -1;
    uint32_t r = rb->k++ - rb->k0, rows = rb->rows;
    unsigned char *o = out;
    /* own columns first (the root's trees), then the children's subtrees, then the spawned
     * parts, which are the last locations */
    for (uint32_t l = 0; l < s->nown; l++)
        memcpy(o + (size_t)l * 8, rb->own + ((size_t)l * rows + r) * 8, 8);
    size_t at = s->nown;
    for (uint32_t c = 0; c < s->nchildren; c++) {
        for (uint32_t l = 0; l < s->children[c].nlocs; l++)
            memcpy(o + (at + l) * 8, rb->parts[c] + ((size_t)l * rows + r) * 8, 8);
        at += s->children[c].nlocs;
    }
    for (uint32_t l = s->nown; l < s->ncols; l++)
        memcpy(o + (at + l - s->nown) * 8, rb->own + ((size_t)l * rows + r) * 8, 8);
    return 0;
}

/* ---- 6. the rows written by several ranks ------------------------------------------------ */

/* The parent of a rank other than the root. */
static uint32_t parent_of(uint32_t rank)
{
    return rank - (rank & (0u - rank));
}

/* The lowest rank of the subtree that failed and its errno (UINT32_MAX: none), reduced up the
 * tree: at the root the whole group's, elsewhere the subtree's (and sent on). */
static void reduce_failure(stream *s, uint32_t *rank, uint32_t *code)
{
    const sp_ipc *ipc = s->ipc;
    for (uint32_t k = 0; k < s->nchildren; k++) {
        void *data = NULL;
        uint64_t bytes = 0;
        uint32_t word[2] = {s->children[k].rank, EIO};
        if (ipc->ops->recv(ipc->ctx, &data, &bytes, s->children[k].rank) == 0 && bytes == 8)
            memcpy(word, data, 8);
        free(data);
        if (word[0] < *rank) {
            *rank = word[0];
            *code = word[1];
        }
    }
    if (ipc->rank != 0) {
        uint32_t word[2] = {*rank, *code};
        if (ipc->ops->send(ipc->ctx, word, sizeof word, parent_of(ipc->rank)) != 0)
            s->ok = false;
    }
}

static int pwrite_all(int fd, const unsigned char *p, size_t n, uint64_t offset)
{
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, (off_t)offset);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
        offset += (uint64_t)w;
    }
    return 0;
}

/* A writer's rows: per metric and block, its own columns and the blocks of its children below
 * `group` (the ranks it writes for), each row's slice written at its offset. Every child's
 * block is taken off the wire whatever happened; *code: the first errno of a write. */
static int write_slices(stream *s, int fd, const uint64_t *offsets, uint32_t group,
                        uint32_t *code)
{
    const sp_ipc *ipc = s->ipc;
    uint32_t nin = 0, width = s->nown;
    while (nin < s->nchildren && s->children[nin].rank - ipc->rank < group)
        width += s->children[nin++].nlocs;
    uint32_t ntail = s->ncols - s->nown, row_locs = width + ntail, all = s->total_locs;
    /* one write per block when this rank writes whole rows (the root alone) */
    bool whole = s->first_loc == 0 && row_locs == all;
    unsigned char *rows_buf = malloc((size_t)s->block_rows * row_locs * 8 + 1);
    /* a slice beyond the row would write into the next rows or members */
    bool failed = !rows_buf || !s->ok || fd < 0 ||
                  (uint64_t)s->first_loc + width + ntail > all;
    for (uint32_t m = 0; m < s->nmetrics; m++)
        for (uint32_t k0 = 0; k0 < s->ncnodes; k0 += s->block_rows) {
            uint32_t rows = s->ncnodes - k0 < s->block_rows ? s->ncnodes - k0 : s->block_rows;
            if (!failed) {
                fill_values(s, m, k0, rows, 0, s->nown, rows_buf, 1, row_locs);
                fill_values(s, m, k0, rows, s->nown, s->ncols, rows_buf + (size_t)width * 8, 1,
                            row_locs);
            }
            size_t at = s->nown;
            for (uint32_t c = 0; c < nin; c++) {
                void *message;
                const child *ch = &s->children[c];
                const unsigned char *part = recv_block(s, ch, rows, &message);
                if (!part)
                    failed = true;
                for (uint32_t l = 0; !failed && l < ch->nlocs; l++)
                    for (uint32_t k = 0; k < rows; k++)
                        memcpy(rows_buf + ((size_t)k * row_locs + at + l) * 8,
                               part + ((size_t)l * rows + k) * 8, 8);
                at += ch->nlocs;
                free(message);
            }
            if (failed)
                continue;
            uint64_t base = offsets[m] + (uint64_t)k0 * all * 8;
            int w = 0;
            if (whole) {
                w = pwrite_all(fd, rows_buf, (size_t)rows * all * 8, base);
            } else {
                for (uint32_t k = 0; k < rows && w == 0; k++) {
                    uint64_t row = base + (uint64_t)k * all * 8;
                    const unsigned char *from = rows_buf + (size_t)k * row_locs * 8;
                    w = pwrite_all(fd, from, (size_t)width * 8, row + (uint64_t)s->first_loc * 8);
                    if (w == 0 && ntail)
                        w = pwrite_all(fd, from + (size_t)width * 8, (size_t)ntail * 8,
                                       row + (uint64_t)(all - ntail) * 8);
                }
            }
            if (w != 0) {
                *code = (uint32_t)errno;
                failed = true;
            }
        }
    free(rows_buf);
    if (failed)
        s->ok = false;
    return failed ? -1 : 0;
}

/* Every rank, once the root wrote the archive around the rows (`tmp`, `offsets`; NULL at the
 * root when it failed before, and elsewhere): is the file system shared (every writer reads
 * the root's word back from the file), then the rows written by the writers, or by the root
 * alone when it is not. Returns 0 when every row was written (at the root: by everyone). */
static int rows_parallel(stream *s, const char *tmp, const uint64_t *offsets, char *err,
                         size_t errlen)
{
    const sp_ipc *ipc = s->ipc;
    uint32_t rank = ipc->rank;
    size_t go_bytes = 16 + (size_t)s->nmetrics * 8 + PATH_FIELD;
    unsigned char *go = calloc(1, go_bytes);
    int fd = -1;
    uint32_t status = STREAM_FAILED;
    uint64_t word = 0;
    if (rank == 0 && go && tmp && strlen(tmp) < PATH_FIELD) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        word = sp_hash_mix((uint64_t)now.tv_nsec ^ ((uint64_t)now.tv_sec << 30) ^
                           ((uint64_t)getpid() << 16) ^ (uint64_t)(uintptr_t)s) | 1;
        fd = open(tmp, O_RDWR | O_CLOEXEC);
        if (fd < 0 || pwrite_all(fd, (const unsigned char *)&word, 8, offsets[0]) != 0) {
            sp_error(err, errlen, "%s: cannot write: %s", tmp, strerror(errno));
        } else {
            status = STREAM_OK;
            memcpy(go + 8, &word, 8);
            memcpy(go + 16, offsets, (size_t)s->nmetrics * 8);
            memcpy(go + 16 + (size_t)s->nmetrics * 8, tmp, strlen(tmp));
        }
    } else if (rank == 0 && go && tmp) {
        sp_error(err, errlen, "%s: the path is too long", tmp);
    }
    if (go && rank == 0)
        memcpy(go, &status, 4);
    /* a rank without the memory for the broadcast cannot take part: the others would wait
     * for it (MPI ends such a job) */
    if (!go || ipc->ops->bcast(ipc->ctx, go, go_bytes, 0) != 0) {
        free(go);
        if (fd >= 0)
            close(fd);
        s->ok = false;
        return -1;
    }
    memcpy(&status, go, 4);
    if (status != STREAM_OK) {
        free(go);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    uint64_t *at = malloc((size_t)s->nmetrics * 8 + 8);
    if (at)
        memcpy(at, go + 16, (size_t)s->nmetrics * 8);
    bool writer = rank % s->group == 0;
    uint32_t failed_rank = UINT32_MAX, code = 0;
    if (rank != 0 && writer) {
        /* the same file? (a file system of this node alone has none, or another) */
        uint64_t theirs = 0;
        memcpy(&word, go + 8, 8);
        fd = open((const char *)go + 16 + (size_t)s->nmetrics * 8, O_RDWR | O_CLOEXEC);
        if (fd < 0 || !at || pread(fd, &theirs, 8, (off_t)at[0]) != 8 || theirs != word ||
            rank == sp_profile_stream_unshared_rank) {
            failed_rank = rank;
            code = fd < 0 ? (uint32_t)errno : 0;
        }
    }
    free(go);
    reduce_failure(s, &failed_rank, &code);
    uint32_t shared = failed_rank == UINT32_MAX;
    if (ipc->ops->bcast(ipc->ctx, &shared, sizeof shared, 0) != 0)
        s->ok = false;
    failed_rank = UINT32_MAX;
    code = 0;
    if (!shared && rank != 0 && fd >= 0) {
        close(fd);
        fd = -1;
    }
    if (!at)
        s->ok = false;
    if (shared ? writer : rank == 0) {
        if (write_slices(s, fd, at, shared ? s->group : ipc->size, &code) != 0)
            failed_rank = rank;
    } else {
        for (uint32_t m = 0; m < s->nmetrics; m++)
            for (uint32_t k0 = 0; k0 < s->ncnodes; k0 += s->block_rows) {
                uint32_t rows = s->ncnodes - k0 < s->block_rows ? s->ncnodes - k0
                                                                 : s->block_rows;
                if (block_up(s, m, k0, rows) != 0)
                    s->ok = false;
            }
    }
    /* delayed write errors (NFS, a full disk) surface here */
    if (fd >= 0 && close(fd) != 0 && failed_rank == UINT32_MAX) {
        failed_rank = rank;
        code = (uint32_t)errno;
    }
    if (!s->ok && failed_rank == UINT32_MAX) {
        failed_rank = rank;
        code = 0;
    }
    free(at);
    reduce_failure(s, &failed_rank, &code);
    if (rank == 0 && failed_rank != UINT32_MAX)
        sp_error(err, errlen, "%s: rank %u could not write its rows%s%s", tmp, failed_rank,
                 code ? ": " : "", code ? strerror((int)code) : "");
    return failed_rank == UINT32_MAX ? 0 : -1;
}

/* cube_writer.h's fill_rows at the root. */
static int root_fill(void *user, const char *tmp, const uint64_t *offsets, char *err,
                     size_t errlen)
{
    stream *s = user;
    s->parallel_called = true;
    return rows_parallel(s, tmp, offsets, err, errlen);
}

/* ---- the whole ------------------------------------------------------------------------------ */

static void stream_free(stream *s)
{
    sp_profile_columns_free(s->cols, s->ncols);
    for (uint32_t l = 0; s->union_of && l < s->ncols; l++)
        free(s->union_of[l]);
    free(s->union_of);
    for (uint32_t l = 0; s->next && l < s->ncols; l++)
        free(s->next[l]);
    free(s->next);
    free(s->first);
    free(s->nodes);
    if (s->index.keys)
        sp_u64map_free(&s->index);
    for (uint32_t k = 0; k < s->nchildren; k++)
        free(s->children[k].node_of);
    sp_buffer_free(&s->locs);
    free(s->kinds);
    free(s->cnode_of);
}

/* The root, from the call tree on: plan, broadcast, maps, folded calls, the file. */
static int root_write(stream *s, sp_measurement *m, const sp_unified *u, const char *dir,
                      char *err, size_t errlen)
{
    unified_tree t = {.global = &u->global};
    metric_choice *mc = calloc(1, sizeof *mc);
    uint32_t *names = NULL;
    folded_reports fr = {0};
    root_blocks rb = {.s = s};
    int status = -1;
    profile_flags f;
    memset(&f, 0, sizeof f);
    /* the folded calls' sizes per rank: allocated now, so that a root without them stops
     * everyone at the broadcast instead of failing a gather the others are in */
    fr.sizes = calloc(s->ipc->size + 1, sizeof *fr.sizes);
    if (s->ok && (!mc || !fr.sizes || sp_u64map_init(&t.index, 256) != 0 ||
                  root_plan(s, m, u, &t, mc, &f) != 0)) {
        sp_error(err, errlen, "out of memory while writing the profile");
        s->ok = false;
    } else if (!s->ok) {
        sp_error(err, errlen, "collecting the profiles of all ranks failed");
    }
    if (plan_bcast(s) != 0) {
        s->ok = false;
        goto out; /* everyone stops here */
    }
    if (maps_down(s) != 0) {
        sp_error(err, errlen, "collecting the profiles of all ranks failed");
        s->ok = false;
    }
    if (s->folded) {
        sp_buffer b;
        sp_buffer_init(&b);
        if (s->ok)
            folded_report(s, 0, s->nown, &b);
        fr.ncnodes = s->ncnodes;
        if (sp_ipc_gather_bytes(s->ipc, b.data ? (const void *)b.data : (const void *)s,
                                b.failed ? 0 : b.size, &fr.all, fr.sizes) != 0 ||
            b.failed || !s->ok) {
            s->ok = false;
        } else if (s->ncols > s->nown) {
            /* the spawned parts' folded calls after every rank's */
            sp_buffer all;
            sp_buffer_init(&all);
            uint64_t total = 0;
            for (uint32_t r = 0; r < s->ipc->size; r++)
                total += fr.sizes[r];
            sp_buffer_put(&all, fr.all, total);
            size_t at = all.size;
            folded_report(s, s->nown, s->ncols, &all);
            fr.sizes[s->ipc->size] = all.size - at;
            free(fr.all);
            fr.all = all.data;
            fr.nchunks = s->ipc->size + 1;
            s->ok = s->ok && !all.failed;
        } else {
            fr.nchunks = s->ipc->size;
        }
        sp_buffer_free(&b);
    }
    names = malloc(2 * ((size_t)s->nlocs + 1) * sizeof *names);
    if (s->ok && names) {
        sp_reader r;
        sp_reader_init(&r, s->locs.data, s->locs.size);
        uint32_t last = UINT32_MAX;
        int64_t index = -1;
        for (uint32_t l = 0; l < s->nlocs; l++) {
            uint32_t group = sp_reader_u32(&r);
            names[l] = sp_reader_u32(&r);
            if (group != last) {
                last = group;
                index = sp_profile_group_index(u, group);
            }
            names[s->nlocs + l] = index < 0 ? 0 : (uint32_t)index;
            if (index < 0)
                s->ok = false;
        }
        if (!s->ok)
            sp_error(err, errlen, "the profiles of the ranks arrived damaged");
    } else if (s->ok) {
        sp_error(err, errlen, "out of memory while writing the profile");
        s->ok = false;
    }
    rb.next_m = 0;
    rb.next_k0 = 0;
    if (s->ok) {
        profile_source in = {.cnodes = t.cnodes, .ncnodes = t.count, .location_names = names,
                             .location_groups = names + s->nlocs, .nlocations = s->nlocs,
                             .flags = f, .row = root_row, .row_user = &rb,
                             .extra_text = folded_text, .extra_user = &fr,
                             .fill_rows = s->group ? root_fill : NULL, .fill_user = s};
        status = sp_profile_write_cube(m, u, &in, mc, dir, err, errlen);
    }
    if (s->group) {
        /* the archive failed before its rows: the others learn it and stop */
        if (!s->parallel_called)
            (void)rows_parallel(s, NULL, NULL, err, errlen);
    } else {
        /* every block the ranks send is taken off the wire, whatever happened here */
        while (rb.next_m < s->nmetrics)
            (void)next_block(&rb, true);
    }
    drop_block(&rb);
out:
    free(names);
    free(fr.all);
    free(fr.sizes);
    free(mc);
    free(t.cnodes);
    if (t.index.keys)
        sp_u64map_free(&t.index);
    return s->ok ? status : -1;
}

int sp_profile_stream_write(sp_measurement *m, const sp_unified *u, const sp_ipc *ipc,
                            const void *mine, uint64_t size, const char *dir, char *err,
                            size_t errlen)
{
    stream s;
    memset(&s, 0, sizeof s);
    s.ipc = ipc;
    sp_buffer_init(&s.locs);
    s.ok = mine != NULL && sp_u64map_init(&s.index, 1024) == 0;
    s.ok = s.ok && read_chunks(&s, mine, &size, 1) == 0;
    s.nown = s.ncols;
    int status = 0;
    if (paths_up(&s) != 0)
        s.ok = false;
    if (ipc->rank == 0) {
        if (s.ok && m->part_count) {
            sp_buffer b;
            sp_buffer_init(&b);
            uint64_t *sizes = calloc(m->part_count, sizeof *sizes);
            if (!sizes)
                s.ok = false;
            else
                sp_profile_parts_chunks(m, u, &b, sizes);
            s.ok = s.ok && !b.failed && read_chunks(&s, b.data, sizes, m->part_count) == 0;
            free(sizes);
            sp_buffer_free(&b);
        }
        status = root_write(&s, m, u, dir, err, errlen);
    } else if (plan_bcast(&s) != 0) {
        status = -1;
    } else {
        if (maps_down(&s) != 0)
            s.ok = false;
        if (s.folded) {
            sp_buffer b;
            sp_buffer_init(&b);
            if (s.ok)
                folded_report(&s, 0, s.nown, &b);
            void *all = NULL;
            /* the gather of a rank that failed carries no report: the root notices */
            if (sp_ipc_gather_bytes(ipc, b.data ? (const void *)b.data : (const void *)&s,
                                    b.failed || !s.ok ? 0 : b.size, &all, NULL) != 0)
                s.ok = false;
            free(all);
            sp_buffer_free(&b);
        }
        if (s.group) {
            (void)rows_parallel(&s, NULL, NULL, NULL, 0);
        } else {
            for (uint32_t mi = 0; mi < s.nmetrics; mi++)
                for (uint32_t k0 = 0; k0 < s.ncnodes; k0 += s.block_rows) {
                    uint32_t rows =
                        s.ncnodes - k0 < s.block_rows ? s.ncnodes - k0 : s.block_rows;
                    if (block_up(&s, mi, k0, rows) != 0)
                        s.ok = false;
                }
        }
        status = s.ok ? 0 : -1;
    }
    stream_free(&s);
    return status;
}
