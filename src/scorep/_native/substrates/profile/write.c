/* The end: every process reports its locations' trees with unified ids; the group's root
 * (or the process alone) merges them by call path and writes profile.cubex. */
#include "core/waitstates.h"
#include "substrates/profile/profile_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "core/part.h"
#include "core/serial.h"
#include "substrates/profile/columns.h"
#include "substrates/profile/cube_writer.h"

static void finish_root(sp_location *loc, uint64_t duration)
{
    sp_profile_location *p = profile_location(loc);
    sp_profile_node *root = sp_profile_node_at(p, 0);
    if (loc->is_main) {
        /* The program's visit and duration on the location that ran it; other threads
         * have no visit of it and the time of their top-level calls. */
        root->visits = 1;
        root->time = root->min_time = root->max_time = duration;
        return;
    }
    root->visits = 0;
    root->time = 0;
    for (uint32_t c = root->first_child; c != SP_PROFILE_NO_NODE;
         c = sp_profile_node_at(p, c)->next_sibling)
        root->time += sp_profile_node_at(p, c)->time;
    root->min_time = UINT64_MAX;
    root->max_time = 0;
}

/* `id` through `map` (NULL: the identity, a member's own ids). */
static inline uint32_t mapped(const uint32_t *map, uint32_t count, uint32_t id)
{
    return !map ? id : id < count ? map[id] : 0;
}

/* Every location's tree, its ids through `maps` (NULL: local ids), each location tagged
 * with its location group's id `group`: [u32 count] then per location [u32 group][u32 name]
 * [u32 nodes] and the nodes. */
void sp_profile_serialize_trees(sp_measurement *m, const sp_unified_maps *maps, uint32_t group,
                                uint32_t extra_locations, double seconds_per_tick, sp_buffer *b)
{
    const sp_unified_maps none = {0};
    const sp_unified_maps *u = maps ? maps : &none;
    uint32_t nlocs = atomic_load(&m->location_count);
    sp_buffer_u32(b, nlocs + extra_locations);
    for (uint32_t l = 0; l < nlocs; l++) {
        sp_location *loc = m->locations[l];
        sp_profile_location *p = profile_location(loc);
        sp_buffer_u32(b, group);
        sp_buffer_u32(b, mapped(u->string_map, u->string_count,
                                sp_defs_string(&m->defs, loc->name)));
        sp_buffer_u32(b, p->count);
        for (uint32_t i = 0; i < p->count; i++) {
            const sp_profile_node *n = sp_profile_node_at(p, i);
            sp_buffer_u32(b, n->parent);
            sp_buffer_u32(b, mapped(u->region_map, u->region_count, n->region));
            sp_buffer_u32(b, n->kind);
            uint32_t parameter = 0;
            int64_t value = n->value;
            if (n->kind != SP_NODE_REGION) {
                parameter = mapped(u->parameter_map, u->parameter_count, n->parameter);
                if (n->kind == SP_NODE_PARAMETER_STRING)
                    value = mapped(u->string_map, u->string_count, (uint32_t)n->value);
            }
            sp_buffer_u32(b, parameter);
            sp_buffer_u64(b, (uint64_t)value);
            sp_buffer_u64(b, n->visits);
            sp_buffer_u64(b, n->bytes_sent);
            sp_buffer_u64(b, n->bytes_received);
            sp_buffer_u64(b, n->bytes_put);
            sp_buffer_u64(b, n->bytes_get);
            sp_buffer_u64(b, n->hits);
            bool visited = n->visits > 0;
            sp_buffer_f64(b, (double)n->time * seconds_per_tick);
            sp_buffer_f64(b, visited && n->min_time != UINT64_MAX ? (double)n->min_time * seconds_per_tick : 0.0);
            sp_buffer_f64(b, visited ? (double)n->max_time * seconds_per_tick : 0.0);
        }
        sp_profile_io_serialize(p, b);
        sp_profile_metrics_serialize(p, b);
        sp_profile_folded_serialize(p, u->region_map, u->region_count, seconds_per_tick, b);
        sp_profile_wait_states_serialize(p, b);
    }
}

/* Appends the locations of a part's trees (sp_profile_part: local ids) with the unified ids
 * of `maps`, tagged with location group `group`, in the layout sp_profile_serialize_trees
 * writes (without the count in front). `root` (SP_NO_ID: kept) replaces the region of each
 * tree's root: a spawned process's program becomes the experiment's (a CUBE call tree has
 * one root). A damaged section stops the copy; the count no longer matches, which the
 * root's reader reports. */
void sp_profile_remap_trees(const unsigned char *data, uint64_t size, const sp_unified_maps *u,
                            uint32_t group, uint32_t root, sp_buffer *b)
{
    sp_reader r;
    sp_reader_init(&r, data, size);
    uint32_t nlocs = sp_reader_u32(&r);
    for (uint32_t l = 0; l < nlocs && !r.failed; l++) {
        (void)sp_reader_u32(&r); /* the group the part's process gave itself */
        sp_buffer_u32(b, group);
        sp_buffer_u32(b, mapped(u->string_map, u->string_count, sp_reader_u32(&r)));
        uint32_t count = sp_reader_u32(&r);
        if (count > r.size / 8) {
            b->failed = true;
            break;
        }
        sp_buffer_u32(b, count);
        for (uint32_t i = 0; i < count && !r.failed; i++) {
            uint32_t parent = sp_reader_u32(&r);
            sp_buffer_u32(b, parent);
            uint32_t region = mapped(u->region_map, u->region_count, sp_reader_u32(&r));
            sp_buffer_u32(b, parent == SP_PROFILE_NO_NODE && root != SP_NO_ID ? root : region);
            uint32_t kind = sp_reader_u32(&r);
            sp_buffer_u32(b, kind);
            uint32_t parameter = sp_reader_u32(&r);
            uint64_t value = sp_reader_u64(&r);
            if (kind != SP_NODE_REGION) {
                parameter = mapped(u->parameter_map, u->parameter_count, parameter);
                if (kind == SP_NODE_PARAMETER_STRING)
                    value = mapped(u->string_map, u->string_count, (uint32_t)value);
            }
            sp_buffer_u32(b, parameter);
            sp_buffer_u64(b, value);
            for (int k = 0; k < 6; k++) /* visits, bytes and hits */
                sp_buffer_u64(b, sp_reader_u64(&r));
            for (int k = 0; k < 3; k++) /* times */
                sp_buffer_f64(b, sp_reader_f64(&r));
        }
        /* its I/O bytes (sp_profile_io_serialize): node numbers stay */
        uint32_t nio = sp_reader_u32(&r);
        if (nio > r.size / 8) {
            b->failed = true;
            break;
        }
        sp_buffer_u32(b, nio);
        for (uint32_t e = 0; e < nio && !r.failed; e++) {
            sp_buffer_u32(b, sp_reader_u32(&r));
            for (int k = 0; k < 2 * SP_IO_PARADIGM_COUNT; k++)
                sp_buffer_u64(b, sp_reader_u64(&r));
        }
        /* its metric sums (sp_profile_metrics_serialize): node numbers stay; a part runs
         * with its parent's configuration, so the metrics are the same */
        uint32_t stride = sp_reader_u32(&r), rows = sp_reader_u32(&r);
        if (stride > SP_MAX_METRICS || rows > count) {
            b->failed = true;
            break;
        }
        sp_buffer_u32(b, stride);
        sp_buffer_u32(b, rows);
        for (uint64_t k = 0; k < (uint64_t)stride * rows && !r.failed; k++)
            sp_buffer_u64(b, sp_reader_u64(&r));
        /* its folded calls (sp_profile_folded_serialize): node numbers stay, regions map */
        uint32_t nf = sp_reader_u32(&r);
        if (nf > r.size / 40) {
            b->failed = true;
            break;
        }
        sp_buffer_u32(b, nf);
        for (uint32_t e = 0; e < nf && !r.failed; e++) {
            sp_buffer_u32(b, sp_reader_u32(&r));
            sp_buffer_u32(b, mapped(u->region_map, u->region_count, sp_reader_u32(&r)));
            sp_buffer_u64(b, sp_reader_u64(&r));
            for (int k = 0; k < 3; k++)
                sp_buffer_f64(b, sp_reader_f64(&r));
        }
        uint32_t np = sp_reader_u32(&r);
        if (np > r.size / 48) {
            b->failed = true;
            break;
        }
        sp_buffer_u32(b, np);
        for (uint32_t e = 0; e < np && !r.failed; e++) {
            sp_buffer_u32(b, sp_reader_u32(&r));
            sp_buffer_u32(b, mapped(u->region_map, u->region_count, sp_reader_u32(&r)));
            for (int k = 0; k < 2; k++)
                sp_buffer_u64(b, sp_reader_u64(&r));
            for (int k = 0; k < 3; k++)
                sp_buffer_f64(b, sp_reader_f64(&r));
        }
        /* its wait states (sp_profile_wait_states_serialize): node numbers stay */
        uint32_t nw = sp_reader_u32(&r);
        if (nw > count) {
            b->failed = true;
            break;
        }
        sp_buffer_u32(b, nw);
        for (uint64_t k = 0; k < (uint64_t)nw * SP_WS_METRIC_COUNT && !r.failed; k++)
            sp_buffer_f64(b, sp_reader_f64(&r));
    }
    if (r.failed)
        b->failed = true;
}

uint32_t sp_profile_part_locations(const unsigned char *data, uint64_t size)
{
    uint32_t count = 0;
    if (data && size >= sizeof count)
        memcpy(&count, data, sizeof count);
    return count;
}


static uint64_t identity_hash(int64_t parent, const flat_node *n)
{
    uint64_t h = sp_hash_mix((uint64_t)(parent + 1) * 0x9e3779b97f4a7c15ULL ^ n->region);
    h = sp_hash_mix(h ^ ((uint64_t)n->kind << 56) ^ n->parameter);
    return sp_hash_mix(h ^ (uint64_t)n->value);
}

static bool same_identity(const unified_tree *u, uint32_t c, int64_t parent, const flat_node *n,
                          const char *param_name, const char *param_string)
{
    const cube_cnode *x = &u->cnodes[c];
    if (x->parent != parent || x->region != n->region)
        return false;
    cube_param_kind kind = n->kind == SP_NODE_PARAMETER_INT      ? CUBE_PARAM_INT
                           : n->kind == SP_NODE_PARAMETER_STRING ? CUBE_PARAM_STRING
                                                                 : CUBE_PARAM_NONE;
    if (x->param_kind != kind)
        return false;
    if (kind == CUBE_PARAM_NONE)
        return true;
    if (strcmp(x->param_name, param_name) != 0)
        return false;
    return kind == CUBE_PARAM_INT ? x->param_int == n->value
                                  : strcmp(x->param_string, param_string) == 0;
}

int64_t sp_profile_unify_node(unified_tree *u, int64_t parent, const flat_node *n)
{
    /* One root for all: the processes of one experiment may run different programs (a
     * child process started by subprocess), each its own program region; CUBE has one
     * root, the first process's program. */
    if (parent < 0 && u->count > 0)
        return 0;
    const sp_defs *g = u->global;
    const char *param_name = NULL, *param_string = NULL;
    if (n->kind != SP_NODE_REGION) {
        param_name = n->parameter < g->parameter_count
                         ? sp_defs_str(g, g->parameters[n->parameter].name) : "";
        if (n->kind == SP_NODE_PARAMETER_STRING)
            param_string = sp_defs_str(g, (uint32_t)n->value);
    }
    uint64_t key = identity_hash(parent, n);
    for (;; key++) {
        uint32_t c = sp_u64map_get(&u->index, key);
        if (c == SP_NO_ID)
            break;
        if (same_identity(u, c, parent, n, param_name, param_string))
            return c;
    }
    if (u->count == u->capacity) {
        size_t cap = u->capacity ? u->capacity * 2 : 256;
        cube_cnode *cnodes = realloc(u->cnodes, cap * sizeof *cnodes);
        if (!cnodes)
            return -1;
        u->cnodes = cnodes;
        u->capacity = cap;
    }
    cube_cnode *c = &u->cnodes[u->count];
    memset(c, 0, sizeof *c);
    c->region = n->region;
    c->parent = parent;
    if (n->kind == SP_NODE_PARAMETER_INT) {
        c->param_kind = CUBE_PARAM_INT;
        c->param_name = param_name;
        c->param_int = n->value;
    } else if (n->kind == SP_NODE_PARAMETER_STRING) {
        c->param_kind = CUBE_PARAM_STRING;
        c->param_name = param_name;
        c->param_string = param_string;
    }
    if (sp_u64map_put(&u->index, key, (uint32_t)u->count) != 0)
        return -1;
    return (int64_t)u->count++;
}


/* Score-P's io_bytes_* metric of `kind` (>= METRIC_IO) at a node. */
static uint64_t io_value(const column *col, uint32_t local, uint32_t kind)
{
    if (!col->io_of || col->io_of[local] == SP_NO_ID)
        return 0;
    const io_bytes *b = &col->io[col->io_of[local]];
    uint32_t k = kind - METRIC_IO;
    uint32_t mode = k % 2;
    if (k >= 2)
        return b->bytes[k / 2 - 1][mode];
    uint64_t sum = 0;
    for (int p = 0; p < SP_IO_PARADIGM_COUNT; p++)
        sum += b->bytes[p][mode];
    return sum;
}

/* One column's value of a metric at one of its nodes (fill_row adds them up). */
static uint64_t count_value(const column *col, uint32_t local, uint32_t metric)
{
    const flat_node *n = &col->nodes[local];
    if (metric >= METRIC_DENSE) {
        uint32_t i = metric - METRIC_DENSE;
        return local < col->metric_rows && i < col->metric_stride
                   ? col->metric_sums[(size_t)local * col->metric_stride + i]
                   : 0;
    }
    if (metric >= METRIC_IO)
        return io_value(col, local, metric);
    switch (metric) {
    case METRIC_VISITS: return n->visits;
    case METRIC_BYTES_SENT: return n->bytes_sent;
    case METRIC_BYTES_RECEIVED: return n->bytes_received;
    case METRIC_BYTES_PUT: return n->bytes_put;
    case METRIC_BYTES_GET: return n->bytes_get;
    default: return n->hits;
    }
}

void sp_profile_chain_value(const column *col, const uint32_t *next, uint32_t first,
                            uint32_t metric, void *out)
{
    bool seconds = metric == METRIC_TIME || metric == METRIC_MIN_TIME || metric == METRIC_MAX_TIME;
    bool waiting = metric >= METRIC_WAIT && metric < METRIC_DENSE;
    uint64_t count = 0;
    double time = 0.0;
    bool any = false;
    for (uint32_t local = first; local != SP_PROFILE_NO_NODE; local = next[local]) {
        const flat_node *n = &col->nodes[local];
        if (waiting) {
            if (local < col->wait_state_rows) {
                const double *w = col->wait_states + (size_t)local * SP_WS_METRIC_COUNT;
                uint32_t k = metric - METRIC_WAIT;
                /* Cube shows a metric with its children: Late Sender keeps only the
                 * time that is not Wrong Order (and its count, the instances) */
                time += w[k];
                for (int c = 0; c < SP_WS_METRIC_COUNT; c++)
                    if (sp_ws_metric_parent[c] == (int)k)
                        time -= w[c];
            }
        } else if (!seconds)
            count += count_value(col, local, metric);
        else if (metric == METRIC_TIME)
            time += n->time;
        else if (n->visits) /* min and max over the visits of every node */
            time = !any ? (metric == METRIC_MIN_TIME ? n->min_time : n->max_time)
                   : metric == METRIC_MIN_TIME ? (n->min_time < time ? n->min_time : time)
                                               : (n->max_time > time ? n->max_time : time);
        any = any || n->visits;
    }
    if (waiting && sp_ws_metric_unit[metric - METRIC_WAIT][0] == 'o') {
        uint64_t v = time > 0 ? (uint64_t)(time + 0.5) : 0;
        memcpy(out, &v, 8);
    } else if (seconds || waiting) {
        memcpy(out, &time, 8);
    } else {
        memcpy(out, &count, 8);
    }
}

static int fill_row(void *user, uint32_t metric_index, uint32_t cnode, void *out)
{
    unified_tree *u = user;
    uint32_t metric = u->metric_kind[metric_index];
    for (uint32_t l = 0; l < u->ncolumns; l++)
        sp_profile_chain_value(&u->columns[l], u->next_local[l],
                               u->unified_to_local[(size_t)cnode * u->ncolumns + l], metric,
                               (char *)out + (size_t)l * 8);
    return 0;
}

static const char *paradigm_name(uint8_t paradigm)
{
    switch ((sp_paradigm)paradigm) {
    case SP_PARADIGM_USER: return "user";
    case SP_PARADIGM_MEASUREMENT: return "measurement";
    case SP_PARADIGM_MPI: return "mpi";
    case SP_PARADIGM_IO: return "io";
    case SP_PARADIGM_COMPILER: return "compiler";
    }
    return "unknown";
}

static const char *role_name(uint8_t role)
{
    switch ((sp_role)role) {
    case SP_ROLE_FUNCTION: return "function";
    case SP_ROLE_ARTIFICIAL: return "artificial";
    case SP_ROLE_WRAPPER: return "wrapper";
    case SP_ROLE_POINT2POINT: return "point2point";
    case SP_ROLE_BARRIER: return "barrier";
    case SP_ROLE_COLL_ONE2ALL: return "one2all";
    case SP_ROLE_COLL_ALL2ONE: return "all2one";
    case SP_ROLE_COLL_ALL2ALL: return "all2all";
    case SP_ROLE_COLL_OTHER: return "other collective";
    case SP_ROLE_FILE_IO: return "file_io";             /* Score-P's spellings */
    case SP_ROLE_CODE: return "code";
    case SP_ROLE_FILE_IO_METADATA: return "file_io metadata";
    case SP_ROLE_UNKNOWN: return "unknown";
    }
    return "unknown";
}

/* The location group with id `group` (an index into u->ranks), or -1. */
int64_t sp_profile_group_index(const sp_unified *u, uint32_t group)
{
    for (uint32_t g = 0; g < u->rank_count; g++)
        if (u->ranks[g].rank == group)
            return g;
    return -1;
}

/* A column's I/O bytes (sp_profile_io_serialize wrote them). */
static int read_io(column *col, sp_reader *rd)
{
    uint32_t count = sp_reader_u32(rd);
    if (rd->failed || count > col->count)
        return -1;
    if (!count)
        return 0;
    col->io = calloc(count, sizeof *col->io);
    col->io_of = malloc((col->count ? col->count : 1) * sizeof *col->io_of);
    if (!col->io || !col->io_of)
        return -1;
    memset(col->io_of, 0xff, (col->count ? col->count : 1) * sizeof *col->io_of);
    for (uint32_t e = 0; e < count; e++) {
        uint32_t node = sp_reader_u32(rd);
        for (int p = 0; p < SP_IO_PARADIGM_COUNT; p++)
            for (int mode = 0; mode < 2; mode++)
                col->io[e].bytes[p][mode] = sp_reader_u64(rd);
        if (rd->failed || node >= col->count)
            return -1;
        col->io_of[node] = e;
    }
    return 0;
}

/* A column's metric sums (sp_profile_metrics_serialize wrote them). */
static int read_metrics(column *col, sp_reader *rd)
{
    uint32_t stride = sp_reader_u32(rd);
    uint32_t rows = sp_reader_u32(rd);
    if (rd->failed || stride > SP_MAX_METRICS || rows > col->count)
        return -1;
    col->metric_stride = stride;
    col->metric_rows = rows;
    if (!stride || !rows)
        return 0;
    col->metric_sums = malloc((size_t)rows * stride * sizeof *col->metric_sums);
    if (!col->metric_sums)
        return -1;
    for (size_t i = 0; i < (size_t)rows * stride; i++)
        col->metric_sums[i] = sp_reader_u64(rd);
    return rd->failed ? -1 : 0;
}

/* A column's wait states (sp_profile_wait_states_serialize wrote them). */
static int read_wait_states(column *col, sp_reader *rd)
{
    uint32_t rows = sp_reader_u32(rd);
    if (rd->failed || rows > col->count)
        return -1;
    col->wait_state_rows = rows;
    if (!rows)
        return 0;
    col->wait_states = malloc((size_t)rows * SP_WS_METRIC_COUNT * sizeof *col->wait_states);
    if (!col->wait_states)
        return -1;
    for (size_t i = 0; i < (size_t)rows * SP_WS_METRIC_COUNT; i++)
        col->wait_states[i] = sp_reader_f64(rd);
    return rd->failed ? -1 : 0;
}

/* A column's folded calls (sp_profile_folded_serialize wrote them). */
static int read_folded(column *col, sp_reader *rd)
{
    uint32_t nf = sp_reader_u32(rd);
    if (rd->failed || nf > rd->size / 40)
        return -1;
    col->folded_functions = calloc(nf ? nf : 1, sizeof *col->folded_functions);
    if (!col->folded_functions)
        return -1;
    col->nfolded_functions = nf;
    for (uint32_t i = 0; i < nf; i++) {
        folded_function *f = &col->folded_functions[i];
        f->collapse = sp_reader_u32(rd);
        f->region = sp_reader_u32(rd);
        f->primitive = sp_reader_u64(rd);
        f->once = sp_reader_f64(rd);
        f->min_time = sp_reader_f64(rd);
        f->max_time = sp_reader_f64(rd);
        if (rd->failed || f->collapse >= col->count)
            return -1;
    }
    uint32_t np = sp_reader_u32(rd);
    if (rd->failed || np > rd->size / 48)
        return -1;
    col->folded_pairs = calloc(np ? np : 1, sizeof *col->folded_pairs);
    if (!col->folded_pairs)
        return -1;
    col->nfolded_pairs = np;
    for (uint32_t i = 0; i < np; i++) {
        folded_pair *e = &col->folded_pairs[i];
        e->function = sp_reader_u32(rd);
        e->caller = sp_reader_u32(rd);
        e->visits = sp_reader_u64(rd);
        e->primitive = sp_reader_u64(rd);
        e->time = sp_reader_f64(rd);
        e->once = sp_reader_f64(rd);
        e->excl = sp_reader_f64(rd);
        if (rd->failed || e->function >= nf)
            return -1;
    }
    return 0;
}

/* Reads every rank's report into columns (rank-major, as the location ids go). */
int sp_profile_read_columns(column **columns, uint32_t *ncolumns, const sp_unified *u,
                            const void *all, const uint64_t *sizes, uint32_t nranks)
{
    uint64_t offset = 0;
    uint32_t last_group = UINT32_MAX;
    int64_t last_index = -1;
    for (uint32_t r = 0; r < nranks; r++) {
        sp_reader rd;
        sp_reader_init(&rd, (const unsigned char *)all + offset, sizes[r]);
        offset += sizes[r];
        uint32_t nlocs = sp_reader_u32(&rd);
        if (rd.failed || nlocs > SP_MAX_LOCATIONS)
            return -1;
        column *cols = realloc((*columns), ((*ncolumns) + nlocs + 1) * sizeof *cols);
        if (!cols)
            return -1;
        (*columns) = cols;
        for (uint32_t l = 0; l < nlocs; l++) {
            column *col = &(*columns)[(*ncolumns)];
            uint32_t group = sp_reader_u32(&rd);
            if (group != last_group) {
                last_group = group;
                last_index = u ? sp_profile_group_index(u, group) : group;
            }
            if (last_index < 0)
                return -1;
            col->rank_index = (uint32_t)last_index;
            col->io = NULL;
            col->io_of = NULL;
            col->metric_sums = NULL;
            col->metric_rows = col->metric_stride = 0;
            col->wait_states = NULL;
            col->wait_state_rows = 0;
            col->folded_functions = NULL;
            col->folded_pairs = NULL;
            col->nfolded_functions = col->nfolded_pairs = 0;
            col->name = sp_reader_u32(&rd);
            col->count = sp_reader_u32(&rd);
            if (rd.failed || col->count > rd.size / 8)
                return -1;
            col->nodes = calloc(col->count ? col->count : 1, sizeof *col->nodes);
            if (!col->nodes)
                return -1;
            (*ncolumns)++;
            for (uint32_t i = 0; i < col->count; i++) {
                flat_node *n = &col->nodes[i];
                n->parent = sp_reader_u32(&rd);
                n->region = sp_reader_u32(&rd);
                n->kind = sp_reader_u32(&rd);
                n->parameter = sp_reader_u32(&rd);
                n->value = (int64_t)sp_reader_u64(&rd);
                n->visits = sp_reader_u64(&rd);
                n->bytes_sent = sp_reader_u64(&rd);
                n->bytes_received = sp_reader_u64(&rd);
                n->bytes_put = sp_reader_u64(&rd);
                n->bytes_get = sp_reader_u64(&rd);
                n->hits = sp_reader_u64(&rd);
                n->time = sp_reader_f64(&rd);
                n->min_time = sp_reader_f64(&rd);
                n->max_time = sp_reader_f64(&rd);
                if (n->parent != SP_PROFILE_NO_NODE && n->parent >= i)
                    return -1; /* parents come before their children */
            }
            if (rd.failed || read_io(col, &rd) != 0 || read_metrics(col, &rd) != 0 ||
                read_folded(col, &rd) != 0 || read_wait_states(col, &rd) != 0)
                return -1;
        }
    }
    return 0;
}

void sp_profile_column_flags(const column *col, profile_flags *f)
{
    for (uint32_t i = 0; i < col->count; i++) {
        const flat_node *n = &col->nodes[i];
        f->communication = f->communication || n->bytes_sent || n->bytes_received;
        f->one_sided = f->one_sided || n->bytes_put || n->bytes_get;
    }
    for (uint32_t e = 0; col->io && col->io_of && e < col->count; e++) {
        if (col->io_of[e] == SP_NO_ID)
            continue;
        const io_bytes *b = &col->io[col->io_of[e]];
        for (int p = 0; p < SP_IO_PARADIGM_COUNT; p++)
            f->io_moved[p] = f->io_moved[p] || b->bytes[p][0] || b->bytes[p][1];
    }
    f->wait_states = f->wait_states || col->wait_state_rows > 0;
    f->folded = f->folded || col->nfolded_pairs > 0;
}

/* Score-P's I/O metrics when I/O was recorded: io_bytes_read and io_bytes_written (all
 * paradigms), each with a child metric per paradigm that moved bytes, named after the
 * paradigm ("POSIX I/O"; unique name "io_bytes_read::POSIX_I_O", as Score-P's CUBE writer
 * makes it). As in Score-P, a parent holds the total and each child its paradigm's part.
 * Returns the new number of metrics. */
static size_t add_io_metrics(const sp_defs *g, const profile_flags *f, cube_metric *metrics,
                             uint32_t *metric_kind, size_t n,
                             char names[2 * SP_IO_PARADIGM_COUNT][96])
{
    if (!g->io_paradigms_used)
        return n;
    const bool *moved = f->io_moved;
    static const char *const totals[2] = {"io_bytes_read", "io_bytes_written"};
    static const char *const descriptions[2] = {"I/O bytes read", "I/O bytes written"};
    for (uint32_t mode = 0; mode < 2; mode++) {
        size_t parent = n;
        metrics[n] = (cube_metric){totals[mode], totals[mode], "bytes", "", descriptions[mode],
                                   CUBE_DTYPE_UINT64, CUBE_EXCLUSIVE, 0};
        metric_kind[n++] = METRIC_IO + mode;
        for (uint32_t p = 0; p < SP_IO_PARADIGM_COUNT; p++) {
            if (!moved[p])
                continue;
            char *uniq = names[2 * p + mode];
            int len = snprintf(uniq, 96, "%s::%s", totals[mode], sp_io_paradigms[p].name);
            /* CubePL names: letters, digits, ':', '_' and '='; anything else becomes '_'. */
            for (int c = 0; c < len && c < 95; c++)
                if (!isalnum((unsigned char)uniq[c]) && !strchr(":_=", uniq[c]))
                    uniq[c] = '_';
            metrics[n] = (cube_metric){uniq, sp_io_paradigms[p].name, "bytes", "",
                                       descriptions[mode], CUBE_DTYPE_UINT64, CUBE_EXCLUSIVE,
                                       (uint32_t)parent + 1};
            metric_kind[n++] = METRIC_IO + 2 * (1 + p) + mode;
        }
    }
    return n;
}

/* Scalasca's wait-state metrics when the analysis ran (any column has them): its unique
 * names and descriptions, Wrong Order below Late Sender as in Scalasca's tree; each is the
 * waiting time of the MPI call on the waiting location, exclusive per call path.
 * Returns the new number of metrics. */
static size_t add_wait_state_metrics(const profile_flags *f, cube_metric *metrics,
                                     uint32_t *metric_kind, size_t n)
{
    if (!f->wait_states)
        return n;
    static const char *const display[SP_WS_METRIC_COUNT] = {
        [SP_WS_LATE_SENDER] = "Late Sender",
        [SP_WS_LATE_SENDER_WO] = "Late Sender, Wrong Order",
        [SP_WS_LATE_RECEIVER] = "Late Receiver",
        [SP_WS_BARRIER_WAIT] = "Wait at Barrier",
        [SP_WS_BARRIER_COMPLETION] = "Barrier Completion",
        [SP_WS_WAIT_NXN] = "Wait at N x N",
        [SP_WS_NXN_COMPLETION] = "N x N Completion",
        [SP_WS_LATE_BROADCAST] = "Late Broadcast",
        [SP_WS_EARLY_REDUCE] = "Early Reduce",
        [SP_WS_EARLY_SCAN] = "Early Scan",
        [SP_WS_INIT_COMPLETION] = "Initialization Completion",
        [SP_WS_FINALIZE_WAIT] = "Wait at Finalize",
        [SP_WS_RMA_WAIT_AT_FENCE] = "Wait at Fence",
        [SP_WS_RMA_LATE_POST] = "Late Post (Synchronization)",
        [SP_WS_RMA_EARLY_WAIT] = "Early Wait",
        [SP_WS_SLS_COUNT] = "Late Senders (synchronizations)",
        [SP_WS_SLSWO_COUNT] = "Messages in Wrong Order (synchronizations)",
        [SP_WS_SLR_COUNT] = "Late Receivers (synchronizations)",
        [SP_WS_CLS_COUNT] = "Late Senders (communications)",
        [SP_WS_CLSWO_COUNT] = "Messages in Wrong Order (communications)",
        [SP_WS_CLR_COUNT] = "Late Receivers (communications)",
        [SP_WS_CRITICAL_PATH] = "Critical path profile",
        [SP_WS_CRITICAL_PATH_IMBALANCE] = "Critical-path imbalance",
        [SP_WS_DELAY_LATESENDER] = "Short-term Late Sender delay costs",
        [SP_WS_DELAY_BARRIER] = "Short-term MPI Barrier delay costs",
        [SP_WS_DELAY_N2N] = "Short-term MPI N x N delay costs",
        [SP_WS_DELAY_LATESENDER_LONGTERM] = "Long-term Late Sender delay costs",
        [SP_WS_DELAY_BARRIER_LONGTERM] = "Long-term MPI Barrier delay costs",
        [SP_WS_DELAY_N2N_LONGTERM] = "Long-term MPI N x N delay costs",
        [SP_WS_DELAY_LATERECEIVER] = "Short-term Late Receiver delay costs",
        [SP_WS_DELAY_LATERECEIVER_LONGTERM] = "Long-term Late Receiver delay costs",
        [SP_WS_DELAY_12N] = "Short-term MPI 1-to-N delay costs",
        [SP_WS_DELAY_12N_LONGTERM] = "Long-term MPI 1-to-N delay costs",
        [SP_WS_DELAY_N21] = "Short-term MPI N-to-1 delay costs",
        [SP_WS_DELAY_N21_LONGTERM] = "Long-term MPI N-to-1 delay costs",
    };
    static const char *const description[SP_WS_METRIC_COUNT] = {
        [SP_WS_LATE_SENDER] = "Time in MPI point-to-point receive operations, waiting for a message",
        [SP_WS_LATE_SENDER_WO] = "Late Sender situations while an earlier sent message was waiting to be received",
        [SP_WS_LATE_RECEIVER] = "Time a sending process is waiting for the receiver to become ready",
        [SP_WS_BARRIER_WAIT] = "Waiting time in front of MPI barriers",
        [SP_WS_BARRIER_COMPLETION] = "Time spent in MPI barriers after the first process has left the operation",
        [SP_WS_WAIT_NXN] = "Time due to inherent synchronization in MPI n-to-n operations",
        [SP_WS_NXN_COMPLETION] = "Time needed to finish an n-to-n collective operation",
        [SP_WS_LATE_BROADCAST] = "Waiting time in MPI 1-to-n operations because the root entered late",
        [SP_WS_EARLY_REDUCE] = "Waiting time in MPI n-to-1 operations because the root entered early",
        [SP_WS_EARLY_SCAN] = "Waiting time in MPI scan operations for the processes before",
        [SP_WS_INIT_COMPLETION] = "Time needed to finish MPI initialization after the first process has left",
        [SP_WS_FINALIZE_WAIT] = "Waiting time in front of MPI_Finalize",
        [SP_WS_RMA_WAIT_AT_FENCE] = "Waiting time in MPI RMA due to inherent synchronization in MPI_Win_fence",
        [SP_WS_RMA_LATE_POST] = "Time spent in MPI one-sided active target synchronization waiting for exposure epoch to start",
        [SP_WS_RMA_EARLY_WAIT] = "Time spent in MPI_Win_wait waiting for last exposure epoch to finish",
        [SP_WS_SLS_COUNT] = "Number of Late Sender instances in synchronizations",
        [SP_WS_SLSWO_COUNT] = "Number of Late Sender instances in synchronizations where messages are received in wrong order",
        [SP_WS_SLR_COUNT] = "Number of Late Receiver instances in synchronizations",
        [SP_WS_CLS_COUNT] = "Number of Late Sender instances in communications",
        [SP_WS_CLSWO_COUNT] = "Number of Late Sender instances in communications where messages are received in wrong order",
        [SP_WS_CLR_COUNT] = "Number of Late Receiver instances in communications",
        [SP_WS_CRITICAL_PATH] = "Time of each call path on the critical path of the run",
        [SP_WS_CRITICAL_PATH_IMBALANCE] = "Critical-path time above the average time of the call path over the processes",
        [SP_WS_DELAY_LATESENDER] = "Late Sender waiting caused by the sender's call paths before the send",
        [SP_WS_DELAY_BARRIER] = "Barrier waiting caused by the last process's call paths before the barrier",
        [SP_WS_DELAY_N2N] = "N x N waiting caused by the last process's call paths before the collective",
        [SP_WS_DELAY_LATESENDER_LONGTERM] = "Waiting that the Late Sender waiting caused by the sender's call paths propagated into later",
        [SP_WS_DELAY_BARRIER_LONGTERM] = "Waiting that the barrier waiting caused by the last process's call paths propagated into later",
        [SP_WS_DELAY_N2N_LONGTERM] = "Waiting that the N x N waiting caused by the last process's call paths propagated into later",
        [SP_WS_DELAY_LATERECEIVER] = "Late Receiver waiting caused by the receiver's call paths before it posted the receive",
        [SP_WS_DELAY_LATERECEIVER_LONGTERM] = "Waiting that the Late Receiver waiting caused by the receiver's call paths propagated into later",
        [SP_WS_DELAY_12N] = "Late Broadcast waiting caused by the root's call paths before the collective",
        [SP_WS_DELAY_12N_LONGTERM] = "Waiting that the Late Broadcast waiting caused by the root's call paths propagated into later",
        [SP_WS_DELAY_N21] = "Early Reduce waiting caused by the first sender's call paths before the collective",
        [SP_WS_DELAY_N21_LONGTERM] = "Waiting that the Early Reduce waiting caused by the first sender's call paths propagated into later",
    };
    size_t first = n;
    for (int k = 0; k < SP_WS_METRIC_COUNT; k++) {
        int parent = sp_ws_metric_parent[k];
        bool count = sp_ws_metric_unit[k][0] == 'o';
        metrics[n] = (cube_metric){sp_ws_metric_names[k], display[k], sp_ws_metric_unit[k],
                                   "@mirror@scalasca_patterns.html", description[k],
                                   count ? CUBE_DTYPE_UINT64 : CUBE_DTYPE_DOUBLE, CUBE_EXCLUSIVE,
                                   parent < 0 ? 0 : (uint32_t)(first + (size_t)parent + 1)};
        metric_kind[n++] = METRIC_WAIT + (uint32_t)k;
    }
    return n;
}

/* The measurement's metrics as Score-P's CUBE writer defines them: the metric's name as
 * display name and (made a CubePL name) unique name, its unit with the exponent written
 * into it ("10^-6 s", "2^10 Bytes"), no URL, its description, UINT64 values, inclusive.
 * Returns the new number of metrics. */
static size_t add_dense_metrics(const sp_metric_set *set, cube_metric *metrics,
                                uint32_t *metric_kind, size_t n,
                                char uniq[SP_MAX_METRICS][96], char units[SP_MAX_METRICS][48])
{
    for (uint32_t i = 0; i < set->count; i++) {
        const sp_metric_def *d = &set->defs[i];
        int len = snprintf(uniq[i], 96, "%s", d->name);
        for (int c = 0; c < len && c < 95; c++)
            if (!isalnum((unsigned char)uniq[i][c]) && !strchr(":_=", uniq[i][c]))
                uniq[i][c] = '_';
        if (d->exponent)
            snprintf(units[i], 48, "%u^%d %s", d->binary ? 2u : 10u, d->exponent, d->unit);
        else
            snprintf(units[i], 48, "%s", d->unit);
        metrics[n] = (cube_metric){uniq[i], d->name, units[i], "", d->description,
                                   CUBE_DTYPE_UINT64, CUBE_INCLUSIVE, 0};
        metric_kind[n++] = METRIC_DENSE + i;
    }
    return n;
}

/* Where Cube finds the pages the metrics' "@mirror@" URLs name: Score-P's documentation of
 * its profile metrics (the metrics and derived metrics here are Score-P's). */
static const char *const mirrors[] = {
    "https://perftools.pages.jsc.fz-juelich.de/cicd/scorep/tags/latest/profile/",
};

/* The region's paradigm as Score-P's CUBE writer gives it: "<paradigm>:<group>" for a
 * region in a group other than its file (the Python bindings group by top-level package,
 * so "user:__main__", "user:numpy"), else the paradigm alone. NULL when out of memory. */
static char *cube_paradigm(const sp_defs *g, const sp_region *reg)
{
    const char *paradigm = paradigm_name(reg->paradigm);
    const char *group = sp_defs_str(g, reg->group);
    size_t len = strlen(paradigm) + strlen(group) + 2;
    char *text = malloc(len);
    if (!text)
        return NULL;
    if (reg->group && reg->group != reg->file && group[0])
        snprintf(text, len, "%s:%s", paradigm, group);
    else
        snprintf(text, len, "%s", paradigm);
    return text;
}

/* folded_calls.json, the calls COLLAPSE holds per function (folded.c), by the file's ids:
 * "functions" [cnode of the COLLAPSE node, location, region, primitive calls, inclusive s of
 * the outermost activations within the folded calls, min s, max s], "pairs" [cnode, location,
 * caller region, callee region, calls, primitive calls, inclusive s, inclusive s of the
 * outermost activations of the pair within the folded calls, exclusive s]. A run that
 * folded nothing has no such member (has_folded). */
void sp_profile_json_printf(sp_buffer *b, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n > 0)
        sp_buffer_put(b, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
}

void sp_profile_json_function(sp_buffer *b, const char *sep, uint32_t id, uint32_t location,
                              const folded_function *f)
{
    sp_profile_json_printf(b, "%s[%u, %u, %u, %llu, %.17g, %.17g, %.17g]", sep, id, location, f->region,
                (unsigned long long)f->primitive, f->once, f->min_time, f->max_time);
}

void sp_profile_json_pair(sp_buffer *b, const char *sep, uint32_t id, uint32_t location,
                          const folded_pair *e, uint32_t callee)
{
    sp_profile_json_printf(b, "%s[%u, %u, %u, %u, %llu, %llu, %.17g, %.17g, %.17g]", sep, id, location,
                e->caller, callee, (unsigned long long)e->visits,
                (unsigned long long)e->primitive, e->time, e->once, e->excl);
}

static char *folded_json(void *user, const uint32_t *id_of, size_t *len)
{
    const unified_tree *t = user;
    sp_buffer b;
    sp_buffer_init(&b);
    sp_profile_json_printf(&b, "{\"format\": \"scorep folded calls 1\", \"functions\": [");
    const char *sep = "\n";
    for (uint32_t l = 0; l < t->ncolumns; l++) {
        const column *col = &t->columns[l];
        for (uint32_t i = 0; i < col->nfolded_functions; i++) {
            sp_profile_json_function(&b, sep, id_of[t->maps[l][col->folded_functions[i].collapse]],
                                     l, &col->folded_functions[i]);
            sep = ",\n";
        }
    }
    sp_profile_json_printf(&b, "],\n\"pairs\": [");
    sep = "\n";
    for (uint32_t l = 0; l < t->ncolumns; l++) {
        const column *col = &t->columns[l];
        for (uint32_t i = 0; i < col->nfolded_pairs; i++) {
            const folded_pair *e = &col->folded_pairs[i];
            const folded_function *f = &col->folded_functions[e->function];
            sp_profile_json_pair(&b, sep, id_of[t->maps[l][f->collapse]], l, e, f->region);
            sep = ",\n";
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

void sp_profile_choose_metrics(const sp_measurement *m, const sp_defs *g, const profile_flags *f,
                               metric_choice *mc)
{
    /* Score-P's sampling metric: the samples whose innermost frame is the call path. */
    static const cube_metric hits_metric = {
        "hits", "Hits", "occ", "@mirror@scorep_metrics.html#hits",
        "Number of exclusive samples inside this region", CUBE_DTYPE_UINT64, CUBE_EXCLUSIVE, 0};
    static const cube_metric base_metrics[] = {
        [METRIC_VISITS] = {"visits", "Visits", "occ", "@mirror@scorep_metrics.html#visits",
                           "Number of visits", CUBE_DTYPE_UINT64, CUBE_EXCLUSIVE, 0},
        [METRIC_TIME] = {"time", "Time", "sec", "@mirror@scorep_metrics.html#time",
                         "Total CPU allocation time", CUBE_DTYPE_DOUBLE, CUBE_INCLUSIVE, 0},
        [METRIC_MIN_TIME] = {"min_time", "Minimum Inclusive Time", "sec",
                             "@mirror@scorep_metrics.html#time_min_incl",
                             "Minimum inclusive CPU allocation time", CUBE_DTYPE_MINDOUBLE,
                             CUBE_EXCLUSIVE, 0},
        [METRIC_MAX_TIME] = {"max_time", "Maximum Inclusive Time", "sec",
                             "@mirror@scorep_metrics.html#time_max_incl",
                             "Maximum inclusive CPU allocation time", CUBE_DTYPE_MAXDOUBLE,
                             CUBE_EXCLUSIVE, 0},
        [METRIC_BYTES_SENT] = {"bytes_sent", "bytes_sent", "bytes", "", "Bytes sent",
                               CUBE_DTYPE_UINT64, CUBE_EXCLUSIVE, 0},
        [METRIC_BYTES_RECEIVED] = {"bytes_received", "bytes_received", "bytes", "",
                                   "Bytes received", CUBE_DTYPE_UINT64, CUBE_EXCLUSIVE, 0},
        [METRIC_BYTES_PUT] = {"bytes_put", "bytes_put", "bytes", "",
                              "Bytes sent in one-sided communication", CUBE_DTYPE_UINT64,
                              CUBE_EXCLUSIVE, 0},
        [METRIC_BYTES_GET] = {"bytes_get", "bytes_get", "bytes", "",
                              "Bytes received in one-sided communication", CUBE_DTYPE_UINT64,
                              CUBE_EXCLUSIVE, 0},
    };
    cube_metric *metrics = mc->metrics;
    uint32_t *metric_kind = mc->kind;
    /* Communication metrics only when there was communication, as Score-P. */
    size_t nmetrics = 0;
    for (uint32_t k = 0; k < METRIC_IO; k++) {
        bool wanted = k <= METRIC_MAX_TIME ||
                      ((k == METRIC_BYTES_SENT || k == METRIC_BYTES_RECEIVED) && f->communication) ||
                      ((k == METRIC_BYTES_PUT || k == METRIC_BYTES_GET) && f->one_sided);
        if (wanted) {
            metric_kind[nmetrics] = k;
            metrics[nmetrics++] = base_metrics[k];
        }
    }
    if (m->config.unwinding) {
        metrics[nmetrics] = hits_metric;
        metric_kind[nmetrics++] = METRIC_HITS;
    }
    nmetrics = add_io_metrics(g, f, metrics, metric_kind, nmetrics, mc->io_names);
    nmetrics = add_wait_state_metrics(f, metrics, metric_kind, nmetrics);
    nmetrics = add_dense_metrics(&m->metrics, metrics, metric_kind, nmetrics, mc->dense_names,
                                 mc->dense_units);
    mc->count = nmetrics;
}

int sp_profile_write_cube(sp_measurement *m, const sp_unified *u, const profile_source *in,
                          const metric_choice *mc, const char *dir, char *err, size_t errlen)
{
    const sp_defs *g = &u->global;
    int status = -1;
    cube_region *regions = calloc(g->region_count ? g->region_count : 1, sizeof *regions);
    char **paradigms = calloc(g->region_count ? g->region_count : 1, sizeof *paradigms);
    cube_location *locations = calloc(in->nlocations ? in->nlocations : 1, sizeof *locations);
    cube_location_group *groups = calloc(u->rank_count ? u->rank_count : 1, sizeof *groups);
    cube_system_node *nodes = calloc(u->node_count ? u->node_count : 1, sizeof *nodes);
    char **node_names = calloc(u->node_count ? u->node_count : 1, sizeof *node_names);
    char *path = NULL, *machine = NULL;
    if (!regions || !paradigms || !locations || !groups || !nodes || !node_names) {
        sp_error(err, errlen, "out of memory while writing the profile");
        goto out;
    }
    /* Score-P's number of program arguments, on the program root (scorep-score counts the
     * arguments of ProgramBegin with it). */
    char argc_text[16];
    snprintf(argc_text, sizeof argc_text, "%u", m->config.program_argc);
    const cube_attr root_attrs[] = {{"Score-P::ProgramArguments::numberOfArguments", argc_text}};
    uint32_t root_region = in->ncnodes ? in->cnodes[0].region : UINT32_MAX;
    for (uint32_t r = 0; r < g->region_count; r++) {
        const sp_region *reg = &g->regions[r];
        paradigms[r] = cube_paradigm(g, reg);
        if (!paradigms[r]) {
            sp_error(err, errlen, "out of memory while writing the profile");
            goto out;
        }
        regions[r] = (cube_region){
            .name = sp_defs_str(g, reg->name),
            .canonical = sp_defs_str(g, reg->canonical),
            .file = sp_defs_str(g, reg->file),
            .begin_line = reg->begin_line,
            .end_line = reg->end_line,
            .paradigm = paradigms[r],
            .role = role_name(reg->role),
            .attrs = r == root_region ? root_attrs : NULL,
            .nattrs = r == root_region ? 1 : 0,
        };
    }
    /* System tree nodes are named "<class> <name>", as Score-P names them in CUBE. */
    for (uint32_t n = 0; n < u->node_count; n++) {
        size_t len = strlen(sp_defs_str(g, u->nodes[n])) + 8;
        node_names[n] = malloc(len);
        if (!node_names[n]) {
            sp_error(err, errlen, "out of memory while writing the profile");
            goto out;
        }
        snprintf(node_names[n], len, "node %s", sp_defs_str(g, u->nodes[n]));
        nodes[n].name = node_names[n];
    }
    size_t machine_len = strlen(m->config.machine_name) + 16;
    machine = malloc(machine_len);
    if (!machine) {
        sp_error(err, errlen, "out of memory while writing the profile");
        goto out;
    }
    snprintf(machine, machine_len, "machine %s", m->config.machine_name);
    struct utsname system;
    const cube_attr machine_attrs[] = {
        {"platform", uname(&system) == 0 ? system.sysname : "Linux"},
    };
    for (uint32_t r = 0; r < u->rank_count; r++)
        groups[r] = (cube_location_group){sp_defs_str(g, u->ranks[r].name), u->ranks[r].rank,
                                          u->ranks[r].node};
    for (size_t l = 0; l < in->nlocations; l++)
        locations[l] = (cube_location){sp_defs_str(g, in->location_names[l]),
                                       in->location_groups[l]};
    char depth_text[32];
    snprintf(depth_text, sizeof depth_text, "%u", m->config.max_callpath_depth);
    cube_attr attrs[] = {
        {"Score-P::ProgramName", m->config.program_name},
        {"scorep::max_callpath_depth", depth_text},
        {"CLUSTERING", "OFF"},
    };
    cube_profile profile = {
        .creator = m->config.creator,
        .machine_name = machine,
        .machine_attrs = machine_attrs,
        .nmachine_attrs = sizeof machine_attrs / sizeof machine_attrs[0],
        .attrs = attrs,
        .nattrs = sizeof attrs / sizeof attrs[0],
        .mirrors = mirrors,
        .nmirrors = sizeof mirrors / sizeof mirrors[0],
        .remapping_spec = sp_profile_remapping_spec,
        .extra_name = in->flags.folded ? "folded_calls.json" : NULL,
        .extra_text = in->extra_text,
        .extra_user = in->extra_user,
        .regions = regions,
        .nregions = g->region_count,
        .cnodes = in->cnodes,
        .ncnodes = in->ncnodes,
        .metrics = mc->metrics,
        .nmetrics = mc->count,
        .nodes = nodes,
        .nnodes = u->node_count,
        .groups = groups,
        .ngroups = u->rank_count,
        .locations = locations,
        .nlocations = in->nlocations,
        .row = in->row,
        .row_user = in->row_user,
        .fill_rows = in->fill_rows,
        .fill_user = in->fill_user,
    };
    size_t len = strlen(dir) + strlen(m->config.profile_base_name) + 8;
    path = malloc(len);
    if (!path) {
        sp_error(err, errlen, "out of memory while writing the profile");
        goto out;
    }
    snprintf(path, len, "%s/%s.cubex", dir, m->config.profile_base_name);
    status = cube_write(path, &profile, err, errlen);
out:
    free(path);
    free(machine);
    for (uint32_t r = 0; paradigms && r < g->region_count; r++)
        free(paradigms[r]);
    free(paradigms);
    for (uint32_t n = 0; node_names && n < u->node_count; n++)
        free(node_names[n]);
    free(node_names);
    free(regions);
    free(locations);
    free(groups);
    free(nodes);
    return status;
}

/* Every column's nodes mapped into the unified tree (parents come before their children in
 * every column: one pass per column); maps[l][i] is the unified node of column l's node i. */
static int unify_columns(unified_tree *t, uint32_t **maps)
{
    for (uint32_t l = 0; l < t->ncolumns; l++) {
        column *col = &t->columns[l];
        maps[l] = malloc((col->count ? col->count : 1) * sizeof *maps[l]);
        if (!maps[l])
            return -1;
        for (uint32_t i = 0; i < col->count; i++) {
            const flat_node *n = &col->nodes[i];
            int64_t parent = n->parent == SP_PROFILE_NO_NODE ? -1 : (int64_t)maps[l][n->parent];
            int64_t c = sp_profile_unify_node(t, parent, n);
            if (c < 0)
                return -1;
            maps[l][i] = (uint32_t)c;
        }
    }
    t->unified_to_local = malloc(t->count * t->ncolumns * sizeof *t->unified_to_local + 1);
    t->next_local = calloc(t->ncolumns ? t->ncolumns : 1, sizeof *t->next_local);
    if (!t->unified_to_local || !t->next_local)
        return -1;
    memset(t->unified_to_local, 0xff, t->count * t->ncolumns * sizeof *t->unified_to_local);
    for (uint32_t l = 0; l < t->ncolumns; l++) {
        uint32_t count = t->columns[l].count;
        t->next_local[l] = malloc((count ? count : 1) * sizeof *t->next_local[l]);
        if (!t->next_local[l])
            return -1;
        /* Backwards, so that each chain lists its nodes in the column's order. */
        for (uint32_t i = count; i-- > 0;) {
            uint32_t *first = &t->unified_to_local[(size_t)maps[l][i] * t->ncolumns + l];
            t->next_local[l][i] = *first;
            *first = i;
        }
    }
    return 0;
}

void sp_profile_columns_free(column *columns, uint32_t ncolumns)
{
    for (uint32_t l = 0; l < ncolumns; l++) {
        free(columns[l].nodes);
        free(columns[l].io);
        free(columns[l].io_of);
        free(columns[l].metric_sums);
        free(columns[l].wait_states);
        free(columns[l].folded_functions);
        free(columns[l].folded_pairs);
    }
    free(columns);
}

/* The root merges what every process reported and writes the file. */
static int merge_and_write(sp_measurement *m, const sp_unified *u, const void *all,
                           const uint64_t *sizes, uint32_t nranks, const char *dir, char *err,
                           size_t errlen)
{
    unified_tree t = {.global = &u->global};
    uint32_t **maps = NULL;
    uint32_t *names = NULL; /* per column its name, then its location group's index */
    int status = -1;
    if (sp_u64map_init(&t.index, 256) != 0) {
        sp_error(err, errlen, "out of memory while writing the profile");
        goto out;
    }
    if (sp_profile_read_columns(&t.columns, &t.ncolumns, u, all, sizes, nranks) != 0) {
        sp_error(err, errlen, "the profiles of the ranks arrived damaged");
        goto out;
    }
    maps = calloc(t.ncolumns ? t.ncolumns : 1, sizeof *maps);
    if (!maps || unify_columns(&t, maps) != 0) {
        sp_error(err, errlen, "out of memory while writing the profile");
        goto out;
    }
    t.maps = maps;
    profile_source in = {.cnodes = t.cnodes, .ncnodes = t.count, .nlocations = t.ncolumns,
                         .row = fill_row, .row_user = &t, .extra_text = folded_json,
                         .extra_user = &t};
    for (uint32_t l = 0; l < t.ncolumns; l++)
        sp_profile_column_flags(&t.columns[l], &in.flags);
    metric_choice *mc = malloc(sizeof *mc);
    names = malloc(2 * (t.ncolumns ? t.ncolumns : 1) * sizeof *names);
    if (!mc || !names) {
        free(mc);
        sp_error(err, errlen, "out of memory while writing the profile");
        goto out;
    }
    for (uint32_t l = 0; l < t.ncolumns; l++) {
        names[l] = t.columns[l].name;
        names[t.ncolumns + l] = t.columns[l].rank_index;
    }
    in.location_names = names;
    in.location_groups = names + t.ncolumns;
    sp_profile_choose_metrics(m, &u->global, &in.flags, mc);
    t.metric_kind = mc->kind;
    status = sp_profile_write_cube(m, u, &in, mc, dir, err, errlen);
    free(mc);
out:
    free(names);
    for (uint32_t l = 0; maps && l < t.ncolumns; l++)
        free(maps[l]);
    free(maps);
    sp_profile_columns_free(t.columns, t.ncolumns);
    free(t.cnodes);
    free(t.unified_to_local);
    for (uint32_t l = 0; t.next_local && l < t.ncolumns; l++)
        free(t.next_local[l]);
    free(t.next_local);
    if (t.index.keys)
        sp_u64map_free(&t.index);
    return status;
}

void sp_profile_finish_roots(sp_measurement *m)
{
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t l = 0; l < nlocs; l++) {
        if (m->config.unwinding)
            sp_profile_finish_samples(profile_location(m->locations[l]));
        finish_root(m->locations[l], m->locations[l]->last_time - m->start.ticks);
    }
}

/* A part of the experiment: this process's trees with its local ids (the root maps them),
 * tagged with its process number (a child process's; a spawned rank's is given it by the
 * root). The same for child processes and spawned ranks. */
void sp_profile_part(sp_measurement *m, uint64_t ticks_per_second, sp_buffer *b)
{
    sp_profile_finish_roots(m);
    uint32_t group = m->processes.info.member ? m->processes.info.number : m->ipc.rank;
    sp_profile_serialize_trees(m, NULL, group, 0,
                               1.0 / (double)(ticks_per_second ? ticks_per_second : 1), b);
}

/* At the root: the adopted spawned parts' trees, one chunk each (sizes[k] bytes), appended to
 * `b` (the parts are the last ranks of the unification). */
void sp_profile_parts_chunks(sp_measurement *m, const sp_unified *u, sp_buffer *b,
                             uint64_t *sizes)
{
    uint32_t root = m->program_region < u->maps.region_count ? u->maps.region_map[m->program_region] : 0;
    for (uint32_t k = 0; k < m->part_count; k++) {
        size_t at = b->size;
        const sp_part *p = &m->parts[k];
        const unsigned char *section = p->c.section[sp_profile.slot];
        uint64_t size = p->c.section_size[sp_profile.slot];
        sp_buffer_u32(b, sp_profile_part_locations(section, size));
        if (section)
            sp_profile_remap_trees(section, size, &p->maps, p->rank, root, b);
        sizes[k] = b->size - at;
    }
}

/* At the root: the adopted spawned parts' trees after the ranks' ones. */
static int add_parts(sp_measurement *m, const sp_unified *u, void **all, uint64_t **sizes,
                     uint32_t nranks)
{
    if (!m->part_count)
        return 0;
    sp_buffer b;
    sp_buffer_init(&b);
    uint64_t before = 0;
    for (uint32_t r = 0; r < nranks; r++)
        before += (*sizes)[r];
    sp_buffer_put(&b, *all, before);
    uint64_t *grown = realloc(*sizes, (nranks + m->part_count) * sizeof *grown);
    if (!grown) {
        sp_buffer_free(&b);
        return -1;
    }
    *sizes = grown;
    sp_profile_parts_chunks(m, u, &b, grown + nranks);
    if (b.failed) {
        sp_buffer_free(&b);
        return -1;
    }
    free(*all);
    *all = b.data; /* owned by the caller now */
    return 0;
}

int sp_profile_write_collected(sp_measurement *m, const sp_unified *u, const sp_ipc *ipc,
                               const void *mine, uint64_t size, const char *dir, char *err,
                               size_t errlen)
{
    /* With point-to-point messages the call paths are reduced along the unification's tree
     * and the rows requested in blocks while the file is written (stream.c): rank 0 never
     * holds every location's values. Else every rank's trees are gathered at the root. */
    if (ipc->size > 1 && ipc->ops->send && ipc->ops->recv)
        return sp_profile_stream_write(m, u, ipc, mine, size, dir, err, errlen);
    void *all = NULL;
    /* only the root's gather fills the sizes */
    uint64_t *sizes = ipc->rank == 0 ? calloc(ipc->size, sizeof *sizes) : NULL;
    int status = -1;
    if (ipc->rank == 0 && !sizes) {
        sp_error(err, errlen, "out of memory while writing the profile");
    } else if (sp_ipc_gather_bytes(ipc, mine ? mine : "", mine ? size : 0, &all, sizes) != 0) {
        sp_error(err, errlen, "collecting the profiles of all ranks failed");
    } else if (ipc->rank != 0) {
        status = 0;
    } else if (add_parts(m, u, &all, &sizes, ipc->size) != 0) {
        sp_error(err, errlen, "out of memory while writing the profile");
    } else {
        status = merge_and_write(m, u, all, sizes, ipc->size + m->part_count, dir, err, errlen);
    }
    free(all);
    free(sizes);
    return status;
}

int sp_profile_write(sp_measurement *m, const sp_unified *u, const char *dir,
                     uint64_t ticks_per_second, char *err, size_t errlen)
{
    sp_profile_finish_roots(m);
    double seconds_per_tick = 1.0 / (double)(ticks_per_second ? ticks_per_second : 1);
    const sp_ipc *ipc = m->collective ? &m->ipc : &sp_ipc_single;
    sp_buffer mine;
    sp_buffer_init(&mine);
    const sp_unified_maps *own = &u->maps;
    uint32_t group = m->collective ? m->ipc.rank
                     : m->processes.alone ? m->processes.info.number
                                          : 0;
    /* This process's trees, then those of the child processes whose parts it adopted. */
    sp_profile_serialize_trees(m, own, group, sp_profile_adopted_locations(m), seconds_per_tick,
                               &mine);
    sp_profile_append_adopted(m, u, &mine);
    int status = -1;
    if (mine.failed)
        sp_error(err, errlen, "out of memory while writing the profile");
    /* every rank takes part even when its own trees failed: the others would wait for it */
    status = sp_profile_write_collected(m, u, ipc, mine.failed ? NULL : mine.data,
                                        mine.failed ? 0 : mine.size, dir, err, errlen);
    sp_buffer_free(&mine);
    return status;
}
