/* The ranks' call trees reduced along the group's binomial tree (the unification's tree,
 * core/unify.c), instead of every rank's trees gathered at the root.
 *
 * A rank holds its subtree's profile as one call tree, the union of the call paths of every
 * location below it (each path once: parent, region, kind, parameter, value, all global
 * ids), and per location a row per node it visited: the union node's index and the node's
 * values. A parent merges each child's union tree into its own by call path (a map from the
 * child's node ids to its own), rewrites the child's rows with its own ids and sends the
 * result up. The identity of a call path, 24 bytes, then travels once per subtree instead of
 * once per location, and a call path all ranks share costs the root one node, not P.
 *
 * The root turns the rows back into each rank's trees in the layout sp_profile_serialize_trees
 * writes, in rank order, byte for byte what the gather to the root would have given it:
 * the CUBE file is written from them as before (write.c), with the same values per location.
 *
 * The reduced layout: [u32 nodes] per node [u32 parent][u32 region][u32 kind][u32 parameter]
 * [u64 value]; [u32 chunks] per chunk (one rank's report) [u32 locations] per location
 * [u32 group][u32 name][u32 count] per row [u32 node] and the node's values (put_values),
 * then [u64 length] and the location's I/O, metric and folded sections, copied unchanged
 * (their node numbers are the location's own row numbers, which the rows keep in order). */
#include "substrates/profile/profile_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/tables.h"
#include "core/waitstates.h"

/* The values of a node after its identity: visits, bytes sent/received/put/get, hits and
 * three times (write.c's sp_profile_serialize_trees). */
enum { IDENTITY_BYTES = 24, VALUE_BYTES = 72, FLAT_NODE_BYTES = IDENTITY_BYTES + VALUE_BYTES };

typedef struct {
    uint32_t parent, region, kind, parameter;
    uint64_t value;
} path_node;

typedef struct {
    path_node *nodes;
    uint32_t count, capacity;
    sp_u64map index; /* hash of a call path -> node (probing past collisions) */
    sp_buffer chunks; /* the chunks, in the reduced layout */
    uint32_t nchunks;
    bool failed;
} reduction;

static uint64_t path_hash(const path_node *n)
{
    uint64_t h = sp_hash_mix(((uint64_t)n->parent << 32 | n->region) ^ 0x9e3779b97f4a7c15ULL);
    h = sp_hash_mix(h ^ ((uint64_t)n->kind << 40) ^ n->parameter);
    return sp_hash_mix(h ^ n->value);
}

/* The union node of call path `n` (its parent already a union node), added when new. */
static uint32_t path_of(reduction *t, const path_node *n)
{
    uint64_t key = path_hash(n);
    for (;; key++) {
        uint32_t c = sp_u64map_get(&t->index, key);
        if (c == SP_NO_ID)
            break;
        const path_node *x = &t->nodes[c];
        if (x->parent == n->parent && x->region == n->region && x->kind == n->kind &&
            x->parameter == n->parameter && x->value == n->value)
            return c;
    }
    if (t->count == t->capacity) {
        uint32_t cap = t->capacity ? t->capacity * 2 : 1024;
        path_node *grown = realloc(t->nodes, (size_t)cap * sizeof *grown);
        if (!grown)
            return SP_NO_ID;
        t->nodes = grown;
        t->capacity = cap;
    }
    if (sp_u64map_put(&t->index, key, t->count) != 0)
        return SP_NO_ID;
    t->nodes[t->count] = *n;
    return t->count++;
}

/* Node `i` of a tree being read (parent, region, kind, parameter, value; `no_parent` marks
 * a root: the flat layout and the reduced one spell it differently) into the union:
 * node_of[i] is its union node. Parents come before their children, as both layouts write
 * them; -1 when that fails, the reader ran out or memory did. */
static int read_path(reduction *t, sp_reader *r, uint32_t i, uint32_t no_parent,
                     uint32_t *node_of)
{
    path_node n;
    uint32_t parent = sp_reader_u32(r);
    if (parent != no_parent && parent >= i)
        return -1;
    n.parent = parent == no_parent ? SP_NO_ID : node_of[parent];
    n.region = sp_reader_u32(r);
    n.kind = sp_reader_u32(r);
    n.parameter = sp_reader_u32(r);
    n.value = sp_reader_u64(r);
    node_of[i] = path_of(t, &n);
    return r->failed || node_of[i] == SP_NO_ID ? -1 : 0;
}

/* Skips a location's I/O, metric, folded and wait-state sections (write.c's layout),
 * checking their counts; their length in *length. */
static int tail_length(sp_reader *r, uint32_t count, uint64_t *length)
{
    size_t start = r->pos;
    uint32_t nio = sp_reader_u32(r);
    if (r->failed || nio > count)
        return -1;
    r->pos += (size_t)nio * (4 + 2 * SP_IO_PARADIGM_COUNT * 8);
    uint32_t stride = sp_reader_u32(r), rows = sp_reader_u32(r);
    if (r->failed || stride > SP_MAX_METRICS || rows > count)
        return -1;
    r->pos += (size_t)stride * rows * 8;
    uint32_t nf = sp_reader_u32(r);
    if (r->failed || nf > r->size / 40)
        return -1;
    r->pos += (size_t)nf * 40;
    uint32_t np = sp_reader_u32(r);
    if (r->failed || np > r->size / 48)
        return -1;
    r->pos += (size_t)np * 48;
    uint32_t nwait = sp_reader_u32(r);
    if (r->failed || nwait > count)
        return -1;
    r->pos += (size_t)nwait * SP_WS_METRIC_COUNT * 8;
    if (r->pos > r->size) {
        r->failed = true;
        return -1;
    }
    *length = r->pos - start;
    return 0;
}

/* A row's values, sparse: [u16 mask] and the 8-byte values whose bit is set (a default run
 * has no MPI bytes and no samples: 5 of the 9 values are 0, and a row takes 32 bytes
 * instead of 72). */
enum { VALUES = VALUE_BYTES / 8 };

static void put_values(sp_buffer *b, const unsigned char *values)
{
    static const unsigned char zero[8];
    uint16_t mask = 0;
    for (int k = 0; k < VALUES; k++)
        if (memcmp(values + 8 * k, zero, 8) != 0)
            mask |= (uint16_t)(1u << k);
    sp_buffer_put(b, &mask, sizeof mask);
    for (int k = 0; k < VALUES; k++)
        if (mask & (1u << k))
            sp_buffer_put(b, values + 8 * k, 8);
}

/* Reads the mask and returns the length of the values after it (the reader is left after
 * the mask, before the values). */
static uint64_t values_length(sp_reader *r)
{
    uint16_t mask = 0;
    if (r->pos + sizeof mask > r->size) {
        r->failed = true;
        return 0;
    }
    memcpy(&mask, r->data + r->pos, sizeof mask);
    r->pos += sizeof mask;
    uint64_t length = 8 * (uint64_t)__builtin_popcount(mask & ((1u << VALUES) - 1));
    if (mask >> VALUES || length > r->size - r->pos) {
        r->failed = true;
        return 0;
    }
    return length;
}

/* A row's values back in full (72 bytes). */
static int get_values(sp_reader *r, sp_buffer *b)
{
    size_t start = r->pos;
    (void)values_length(r); /* checks the mask and the length */
    if (r->failed)
        return -1;
    uint16_t mask;
    memcpy(&mask, r->data + start, sizeof mask);
    static const unsigned char zero[8];
    for (int k = 0; k < VALUES; k++) {
        if (mask & (1u << k)) {
            sp_buffer_put(b, r->data + r->pos, 8);
            r->pos += 8;
        } else {
            sp_buffer_put(b, zero, 8);
        }
    }
    return 0;
}

/* One rank's report (sp_profile_serialize_trees' layout) added as a chunk. */
static int add_flat(reduction *t, const void *data, uint64_t size)
{
    sp_reader r;
    sp_reader_init(&r, data, size);
    uint32_t nlocs = sp_reader_u32(&r);
    if (r.failed || nlocs > SP_MAX_LOCATIONS)
        return -1;
    sp_buffer *b = &t->chunks;
    sp_buffer_u32(b, nlocs);
    uint32_t *node_of = NULL; /* the location's node -> union node */
    for (uint32_t l = 0; l < nlocs; l++) {
        sp_buffer_u32(b, sp_reader_u32(&r)); /* group */
        sp_buffer_u32(b, sp_reader_u32(&r)); /* name */
        uint32_t count = sp_reader_u32(&r);
        if (r.failed || count > (r.size - r.pos) / FLAT_NODE_BYTES)
            goto failed;
        sp_buffer_u32(b, count);
        free(node_of);
        node_of = malloc((count ? count : 1) * sizeof *node_of);
        if (!node_of)
            goto failed;
        for (uint32_t i = 0; i < count; i++) {
            if (read_path(t, &r, i, SP_PROFILE_NO_NODE, node_of) != 0)
                goto failed;
            sp_buffer_u32(b, node_of[i]);
            if (r.pos + VALUE_BYTES > r.size)
                goto failed;
            put_values(b, r.data + r.pos);
            r.pos += VALUE_BYTES;
        }
        size_t tail = r.pos;
        uint64_t length;
        if (tail_length(&r, count, &length) != 0)
            goto failed;
        sp_buffer_u64(b, length);
        sp_buffer_put(b, r.data + tail, length);
    }
    free(node_of);
    t->nchunks++;
    return r.failed || b->failed ? -1 : 0;
failed:
    free(node_of);
    return -1;
}

/* A child's reduced subtree merged: its union tree into ours, its chunks after ours. */
static int add_reduced(reduction *t, const void *data, uint64_t size)
{
    sp_reader r;
    sp_reader_init(&r, data, size);
    uint32_t nnodes = sp_reader_u32(&r);
    if (r.failed || nnodes > (r.size - r.pos) / IDENTITY_BYTES)
        return -1;
    uint32_t *node_of = malloc((nnodes ? nnodes : 1) * sizeof *node_of);
    if (!node_of)
        return -1;
    for (uint32_t i = 0; i < nnodes; i++) {
        if (read_path(t, &r, i, SP_NO_ID, node_of) != 0)
            goto failed;
    }
    uint32_t nchunks = sp_reader_u32(&r);
    if (r.failed || nchunks > r.size / 4)
        goto failed;
    sp_buffer *b = &t->chunks;
    for (uint32_t c = 0; c < nchunks; c++) {
        uint32_t nlocs = sp_reader_u32(&r);
        if (r.failed || nlocs > SP_MAX_LOCATIONS)
            goto failed;
        sp_buffer_u32(b, nlocs);
        for (uint32_t l = 0; l < nlocs; l++) {
            sp_buffer_u32(b, sp_reader_u32(&r));
            sp_buffer_u32(b, sp_reader_u32(&r));
            uint32_t count = sp_reader_u32(&r);
            if (r.failed || count > (r.size - r.pos) / (4 + 2))
                goto failed;
            sp_buffer_u32(b, count);
            for (uint32_t i = 0; i < count; i++) {
                uint32_t node = sp_reader_u32(&r);
                if (node >= nnodes)
                    goto failed;
                sp_buffer_u32(b, node_of[node]);
                uint64_t length = values_length(&r);
                if (r.failed)
                    goto failed;
                sp_buffer_put(b, r.data + r.pos - 2, length + 2);
                r.pos += length;
            }
            uint64_t length = sp_reader_u64(&r);
            if (r.failed || length > r.size - r.pos)
                goto failed;
            sp_buffer_u64(b, length);
            sp_buffer_put(b, r.data + r.pos, length);
            r.pos += length;
        }
        t->nchunks++;
    }
    free(node_of);
    return r.failed || b->failed ? -1 : 0;
failed:
    free(node_of);
    return -1;
}

static void serialize_reduced(const reduction *t, sp_buffer *b)
{
    sp_buffer_u32(b, t->count);
    for (uint32_t i = 0; i < t->count; i++) {
        const path_node *n = &t->nodes[i];
        sp_buffer_u32(b, n->parent);
        sp_buffer_u32(b, n->region);
        sp_buffer_u32(b, n->kind);
        sp_buffer_u32(b, n->parameter);
        sp_buffer_u64(b, n->value);
    }
    sp_buffer_u32(b, t->nchunks);
    sp_buffer_put(b, t->chunks.data, t->chunks.size);
}

/* At the root: every chunk back in sp_profile_serialize_trees' layout, concatenated into
 * *all, sizes[c] bytes each. */
static int expand(const reduction *t, void **all, uint64_t **sizes_out)
{
    uint64_t *sizes = calloc(t->nchunks ? t->nchunks : 1, sizeof *sizes);
    uint32_t *local_of = malloc((t->count ? t->count : 1) * sizeof *local_of);
    sp_buffer b;
    sp_buffer_init(&b);
    if (!sizes || !local_of)
        goto failed;
    /* The union node -> the location's row (SP_NO_ID: none), reset after each location. */
    memset(local_of, 0xff, (t->count ? t->count : 1) * sizeof *local_of);
    sp_reader r;
    sp_reader_init(&r, t->chunks.data, t->chunks.size);
    for (uint32_t c = 0; c < t->nchunks; c++) {
        size_t at = b.size;
        uint32_t nlocs = sp_reader_u32(&r);
        sp_buffer_u32(&b, nlocs);
        for (uint32_t l = 0; l < nlocs && !r.failed; l++) {
            sp_buffer_u32(&b, sp_reader_u32(&r));
            sp_buffer_u32(&b, sp_reader_u32(&r));
            uint32_t count = sp_reader_u32(&r);
            sp_buffer_u32(&b, count);
            size_t rows = r.pos;
            for (uint32_t i = 0; i < count && !r.failed; i++) {
                uint32_t node = sp_reader_u32(&r);
                if (node >= t->count)
                    goto failed;
                const path_node *n = &t->nodes[node];
                uint32_t parent = n->parent == SP_NO_ID ? SP_PROFILE_NO_NODE : local_of[n->parent];
                if (n->parent != SP_NO_ID && parent == SP_NO_ID)
                    goto failed; /* every row's parent is a row of the same location */
                local_of[node] = i;
                sp_buffer_u32(&b, parent);
                sp_buffer_u32(&b, n->region);
                sp_buffer_u32(&b, n->kind);
                sp_buffer_u32(&b, n->parameter);
                sp_buffer_u64(&b, n->value);
                if (get_values(&r, &b) != 0)
                    goto failed;
            }
            /* reset what this location set */
            size_t end = r.pos;
            r.pos = rows;
            for (uint32_t i = 0; i < count; i++) {
                local_of[sp_reader_u32(&r)] = SP_NO_ID;
                r.pos += values_length(&r);
            }
            r.pos = end;
            uint64_t length = sp_reader_u64(&r);
            if (r.failed || length > r.size - r.pos)
                goto failed;
            sp_buffer_put(&b, r.data + r.pos, length);
            r.pos += length;
        }
        sizes[c] = b.size - at;
    }
    if (r.failed || b.failed)
        goto failed;
    free(local_of);
    *all = b.data;
    *sizes_out = sizes;
    return 0;
failed:
    free(sizes);
    free(local_of);
    sp_buffer_free(&b);
    return -1;
}

enum { REDUCE_OK = 0, REDUCE_FAILED = 1 };

/* A message: a status word, then the subtree's reduced profile. */
static int send_up(const sp_ipc *ipc, uint32_t parent, const reduction *t, bool ok)
{
    sp_buffer b;
    sp_buffer_init(&b);
    sp_buffer_u32(&b, ok ? REDUCE_OK : REDUCE_FAILED);
    if (ok)
        serialize_reduced(t, &b);
    if (b.failed) {
        sp_buffer_free(&b);
        sp_buffer_init(&b);
        sp_buffer_u32(&b, REDUCE_FAILED);
    }
    int status = b.failed ? -1 : ipc->ops->send(ipc->ctx, b.data, b.size, parent);
    sp_buffer_free(&b);
    return status;
}

int sp_profile_reduce(const sp_ipc *ipc, const void *mine, uint64_t size, void **all,
                      uint64_t **sizes, uint32_t *nchunks)
{
    *all = NULL;
    *sizes = NULL;
    *nchunks = 0;
    reduction t;
    memset(&t, 0, sizeof t);
    sp_buffer_init(&t.chunks);
    bool ok = sp_u64map_init(&t.index, 1024) == 0;
    ok = ok && add_flat(&t, mine, size) == 0;
    int status = 0;
    uint32_t rank = ipc->rank;
    for (uint32_t step = 1; step < ipc->size; step <<= 1) {
        if (rank & step) {
            status = send_up(ipc, rank - step, &t, ok);
            break;
        }
        if (rank + step >= ipc->size)
            continue;
        void *data = NULL;
        uint64_t bytes = 0;
        uint32_t word = REDUCE_FAILED;
        if (ipc->ops->recv(ipc->ctx, &data, &bytes, rank + step) != 0 || bytes < 4)
            ok = false;
        else
            memcpy(&word, data, sizeof word);
        ok = ok && word == REDUCE_OK &&
             add_reduced(&t, (const unsigned char *)data + 4, bytes - 4) == 0;
        free(data);
    }
    if (rank == 0) {
        ok = ok && expand(&t, all, sizes) == 0;
        if (ok)
            *nchunks = t.nchunks;
        status = ok ? 0 : -1;
    }
    free(t.nodes);
    if (t.index.keys)
        sp_u64map_free(&t.index);
    sp_buffer_free(&t.chunks);
    return status;
}
