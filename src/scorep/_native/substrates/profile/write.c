/* The end: every process reports its locations' trees with unified ids; the group's root
 * (or the process alone) merges them by call path and writes profile.cubex. */
#include "substrates/profile/profile_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/part.h"
#include "core/serial.h"
#include "substrates/profile/cube_writer.h"

typedef struct {
    uint32_t parent, region, kind, parameter;
    int64_t value; /* int value, or global string id */
    uint64_t visits, bytes_sent, bytes_received, bytes_put, bytes_get;
    double time, min_time, max_time; /* seconds */
} flat_node;

typedef struct {
    uint32_t rank_index; /* into the unified ranks */
    uint32_t name;       /* global string */
    uint32_t count;
    flat_node *nodes;
} column;

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

/* A local id through a map (NULL: kept, for a part that the root maps later). */
static uint32_t mapped(const uint32_t *map, uint32_t count, uint32_t id)
{
    if (!map)
        return id;
    return id < count ? map[id] : 0;
}

static void serialize_trees(sp_measurement *m, const sp_unified_maps *u, double seconds_per_tick,
                            sp_buffer *b)
{
    const uint32_t *smap = u ? u->string_map : NULL, *rmap = u ? u->region_map : NULL;
    const uint32_t *pmap = u ? u->parameter_map : NULL;
    uint32_t scount = u ? u->string_count : 0, rcount = u ? u->region_count : 0;
    uint32_t pcount = u ? u->parameter_count : 0;
    uint32_t nlocs = atomic_load(&m->location_count);
    sp_buffer_u32(b, nlocs);
    for (uint32_t l = 0; l < nlocs; l++) {
        sp_location *loc = m->locations[l];
        sp_profile_location *p = profile_location(loc);
        sp_buffer_u32(b, mapped(smap, scount, sp_defs_string(&m->defs, loc->name)));
        sp_buffer_u32(b, p->count);
        for (uint32_t i = 0; i < p->count; i++) {
            const sp_profile_node *n = sp_profile_node_at(p, i);
            sp_buffer_u32(b, n->parent);
            sp_buffer_u32(b, mapped(rmap, rcount, n->region));
            sp_buffer_u32(b, n->kind);
            uint32_t parameter = 0;
            int64_t value = n->value;
            if (n->kind != SP_NODE_REGION) {
                parameter = mapped(pmap, pcount, n->parameter);
                if (n->kind == SP_NODE_PARAMETER_STRING)
                    value = mapped(smap, scount, (uint32_t)n->value);
            }
            sp_buffer_u32(b, parameter);
            sp_buffer_u64(b, (uint64_t)value);
            sp_buffer_u64(b, n->visits);
            sp_buffer_u64(b, n->bytes_sent);
            sp_buffer_u64(b, n->bytes_received);
            sp_buffer_u64(b, n->bytes_put);
            sp_buffer_u64(b, n->bytes_get);
            bool visited = n->visits > 0;
            sp_buffer_f64(b, (double)n->time * seconds_per_tick);
            sp_buffer_f64(b, visited && n->min_time != UINT64_MAX ? (double)n->min_time * seconds_per_tick : 0.0);
            sp_buffer_f64(b, visited ? (double)n->max_time * seconds_per_tick : 0.0);
        }
    }
}

/* A part's trees (local ids) with the unified ids of its maps, in the format ranks send.
 * Its program root becomes the experiment's (`root`): a CUBE call tree has one root. */
static void remap_part_trees(const sp_part *part, const unsigned char *data, uint64_t size,
                             uint32_t root, sp_buffer *b)
{
    const sp_unified_maps *u = &part->maps;
    sp_reader r;
    sp_reader_init(&r, data, size);
    uint32_t nlocs = sp_reader_u32(&r);
    sp_buffer_u32(b, nlocs);
    for (uint32_t l = 0; l < nlocs && !r.failed; l++) {
        sp_buffer_u32(b, mapped(u->string_map, u->string_count, sp_reader_u32(&r)));
        uint32_t count = sp_reader_u32(&r);
        if (count > r.size / 8)
            break;
        sp_buffer_u32(b, count);
        for (uint32_t i = 0; i < count && !r.failed; i++) {
            uint32_t parent = sp_reader_u32(&r);
            sp_buffer_u32(b, parent);
            uint32_t region = mapped(u->region_map, u->region_count, sp_reader_u32(&r));
            sp_buffer_u32(b, parent == SP_PROFILE_NO_NODE ? root : region);
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
            for (int k = 0; k < 5; k++) /* visits and bytes */
                sp_buffer_u64(b, sp_reader_u64(&r));
            for (int k = 0; k < 3; k++) /* times */
                sp_buffer_f64(b, sp_reader_f64(&r));
        }
    }
}

#define METRIC_KINDS_MAX 8 /* >= METRIC_KINDS, checked below */

typedef struct {
    cube_cnode *cnodes;
    size_t count, capacity;
    sp_u64map index; /* hashed node identity -> unified node (probing past collisions) */
    column *columns;
    uint32_t ncolumns;
    uint32_t *unified_to_local; /* [cnode * ncolumns + column], SP_PROFILE_NO_NODE = none */
    const sp_defs *global;
    uint32_t metric_kinds[METRIC_KINDS_MAX]; /* the written metrics, in file order */
} unified_tree;

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

static int64_t unify_node(unified_tree *u, int64_t parent, const flat_node *n)
{
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

enum { METRIC_VISITS, METRIC_TIME, METRIC_MIN_TIME, METRIC_MAX_TIME, METRIC_BYTES_SENT,
       METRIC_BYTES_RECEIVED, METRIC_BYTES_PUT, METRIC_BYTES_GET, METRIC_KINDS };

_Static_assert(METRIC_KINDS <= METRIC_KINDS_MAX, "room for every metric kind");

static int fill_row(void *user, uint32_t index, uint32_t cnode, void *out)
{
    unified_tree *u = user;
    uint32_t metric = u->metric_kinds[index];
    for (uint32_t l = 0; l < u->ncolumns; l++) {
        uint32_t local = u->unified_to_local[(size_t)cnode * u->ncolumns + l];
        const flat_node *n = local == SP_PROFILE_NO_NODE ? NULL : &u->columns[l].nodes[local];
        switch (metric) {
        case METRIC_VISITS: ((uint64_t *)out)[l] = n ? n->visits : 0; break;
        case METRIC_BYTES_SENT: ((uint64_t *)out)[l] = n ? n->bytes_sent : 0; break;
        case METRIC_BYTES_RECEIVED: ((uint64_t *)out)[l] = n ? n->bytes_received : 0; break;
        case METRIC_BYTES_PUT: ((uint64_t *)out)[l] = n ? n->bytes_put : 0; break;
        case METRIC_BYTES_GET: ((uint64_t *)out)[l] = n ? n->bytes_get : 0; break;
        case METRIC_TIME: ((double *)out)[l] = n ? n->time : 0.0; break;
        case METRIC_MIN_TIME: ((double *)out)[l] = n ? n->min_time : 0.0; break;
        default: ((double *)out)[l] = n ? n->max_time : 0.0; break;
        }
    }
    return 0;
}

static const char *paradigm_name(uint8_t paradigm)
{
    switch ((sp_paradigm)paradigm) {
    case SP_PARADIGM_USER: return "user";
    case SP_PARADIGM_MEASUREMENT: return "measurement";
    case SP_PARADIGM_MPI: return "mpi";
    case SP_PARADIGM_IO: return "io";
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
    case SP_ROLE_FILE_IO: return "file io";
    case SP_ROLE_CODE: return "code";
    }
    return "unknown";
}

/* Reads every rank's report into columns (rank-major, as the location ids go). */
static int read_columns(unified_tree *t, const void *all, const uint64_t *sizes, uint32_t nranks)
{
    uint64_t offset = 0;
    for (uint32_t r = 0; r < nranks; r++) {
        sp_reader rd;
        sp_reader_init(&rd, (const unsigned char *)all + offset, sizes[r]);
        offset += sizes[r];
        uint32_t nlocs = sp_reader_u32(&rd);
        if (rd.failed || nlocs > SP_MAX_LOCATIONS)
            return -1;
        column *cols = realloc(t->columns, (t->ncolumns + nlocs + 1) * sizeof *cols);
        if (!cols)
            return -1;
        t->columns = cols;
        for (uint32_t l = 0; l < nlocs; l++) {
            column *col = &t->columns[t->ncolumns];
            col->rank_index = r;
            col->name = sp_reader_u32(&rd);
            col->count = sp_reader_u32(&rd);
            if (rd.failed || col->count > rd.size / 8)
                return -1;
            col->nodes = calloc(col->count ? col->count : 1, sizeof *col->nodes);
            if (!col->nodes)
                return -1;
            t->ncolumns++;
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
                n->time = sp_reader_f64(&rd);
                n->min_time = sp_reader_f64(&rd);
                n->max_time = sp_reader_f64(&rd);
                if (n->parent != SP_PROFILE_NO_NODE && n->parent >= i)
                    return -1; /* parents come before their children */
            }
            if (rd.failed)
                return -1;
        }
    }
    return 0;
}

static int write_cube(sp_measurement *m, const sp_unified *u, unified_tree *t, const char *dir,
                      char *err, size_t errlen)
{
    const sp_defs *g = &u->global;
    int status = -1;
    cube_region *regions = calloc(g->region_count ? g->region_count : 1, sizeof *regions);
    cube_location *locations = calloc(t->ncolumns ? t->ncolumns : 1, sizeof *locations);
    cube_location_group *groups = calloc(u->rank_count ? u->rank_count : 1, sizeof *groups);
    cube_system_node *nodes = calloc(u->node_count ? u->node_count : 1, sizeof *nodes);
    char *path = NULL;
    if (!regions || !locations || !groups || !nodes) {
        sp_error(err, errlen, "out of memory while writing the profile");
        goto out;
    }
    for (uint32_t r = 0; r < g->region_count; r++) {
        const sp_region *reg = &g->regions[r];
        regions[r] = (cube_region){
            .name = sp_defs_str(g, reg->name),
            .canonical = sp_defs_str(g, reg->canonical),
            .file = sp_defs_str(g, reg->file),
            .begin_line = reg->begin_line,
            .end_line = reg->end_line,
            .paradigm = paradigm_name(reg->paradigm),
            .role = role_name(reg->role),
        };
    }
    for (uint32_t n = 0; n < u->node_count; n++)
        nodes[n].name = sp_defs_str(g, u->nodes[n]);
    for (uint32_t r = 0; r < u->rank_count; r++)
        groups[r] = (cube_location_group){sp_defs_str(g, u->ranks[r].name), u->ranks[r].rank,
                                          u->ranks[r].node};
    bool communication = false, one_sided = false;
    for (uint32_t l = 0; l < t->ncolumns; l++) {
        locations[l].name = sp_defs_str(g, t->columns[l].name);
        locations[l].group = t->columns[l].rank_index;
        for (uint32_t i = 0; i < t->columns[l].count; i++) {
            const flat_node *n = &t->columns[l].nodes[i];
            communication = communication || n->bytes_sent || n->bytes_received;
            one_sided = one_sided || n->bytes_put || n->bytes_get;
        }
    }
    static const cube_metric known[METRIC_KINDS] = {
        [METRIC_VISITS] = {"visits", "Visits", "occ", "@mirror@scorep_metrics.html#visits",
                           "Number of visits", CUBE_DTYPE_UINT64, CUBE_EXCLUSIVE},
        [METRIC_TIME] = {"time", "Time", "sec", "@mirror@scorep_metrics.html#time",
                         "Total CPU allocation time", CUBE_DTYPE_DOUBLE, CUBE_INCLUSIVE},
        [METRIC_MIN_TIME] = {"min_time", "Minimum Inclusive Time", "sec",
                             "@mirror@scorep_metrics.html#time_min_incl",
                             "Minimum inclusive CPU allocation time", CUBE_DTYPE_MINDOUBLE,
                             CUBE_EXCLUSIVE},
        [METRIC_MAX_TIME] = {"max_time", "Maximum Inclusive Time", "sec",
                             "@mirror@scorep_metrics.html#time_max_incl",
                             "Maximum inclusive CPU allocation time", CUBE_DTYPE_MAXDOUBLE,
                             CUBE_EXCLUSIVE},
        [METRIC_BYTES_SENT] = {"bytes_sent", "bytes_sent", "bytes", "", "Bytes sent",
                               CUBE_DTYPE_UINT64, CUBE_EXCLUSIVE},
        [METRIC_BYTES_RECEIVED] = {"bytes_received", "bytes_received", "bytes", "",
                                   "Bytes received", CUBE_DTYPE_UINT64, CUBE_EXCLUSIVE},
        [METRIC_BYTES_PUT] = {"bytes_put", "bytes_put", "bytes", "",
                              "Bytes sent in one-sided communication", CUBE_DTYPE_UINT64,
                              CUBE_EXCLUSIVE},
        [METRIC_BYTES_GET] = {"bytes_get", "bytes_get", "bytes", "",
                              "Bytes received in one-sided communication", CUBE_DTYPE_UINT64,
                              CUBE_EXCLUSIVE},
    };
    /* Communication metrics only when there was communication, as Score-P. */
    cube_metric metrics[METRIC_KINDS];
    uint32_t nmetrics = 0;
    for (uint32_t k = 0; k < METRIC_KINDS; k++) {
        bool wanted = k <= METRIC_MAX_TIME ||
                      ((k == METRIC_BYTES_SENT || k == METRIC_BYTES_RECEIVED) && communication) ||
                      ((k == METRIC_BYTES_PUT || k == METRIC_BYTES_GET) && one_sided);
        if (wanted) {
            t->metric_kinds[nmetrics] = k;
            metrics[nmetrics++] = known[k];
        }
    }
    char depth_text[32];
    snprintf(depth_text, sizeof depth_text, "%u", m->config.max_callpath_depth);
    cube_attr attrs[] = {
        {"Score-P::ProgramName", m->config.program_name},
        {"scorep::max_callpath_depth", depth_text},
    };
    cube_profile profile = {
        .creator = m->config.creator,
        .machine_name = m->config.machine_name,
        .attrs = attrs,
        .nattrs = sizeof attrs / sizeof attrs[0],
        .regions = regions,
        .nregions = g->region_count,
        .cnodes = t->cnodes,
        .ncnodes = t->count,
        .metrics = metrics,
        .nmetrics = nmetrics,
        .nodes = nodes,
        .nnodes = u->node_count,
        .groups = groups,
        .ngroups = u->rank_count,
        .locations = locations,
        .nlocations = t->ncolumns,
        .row = fill_row,
        .row_user = t,
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
            int64_t c = unify_node(t, parent, n);
            if (c < 0)
                return -1;
            maps[l][i] = (uint32_t)c;
        }
    }
    t->unified_to_local = malloc(t->count * t->ncolumns * sizeof *t->unified_to_local + 1);
    if (!t->unified_to_local)
        return -1;
    memset(t->unified_to_local, 0xff, t->count * t->ncolumns * sizeof *t->unified_to_local);
    for (uint32_t l = 0; l < t->ncolumns; l++)
        for (uint32_t i = 0; i < t->columns[l].count; i++)
            t->unified_to_local[(size_t)maps[l][i] * t->ncolumns + l] = i;
    return 0;
}

/* The root merges what every process reported and writes the file. */
static int merge_and_write(sp_measurement *m, const sp_unified *u, const void *all,
                           const uint64_t *sizes, uint32_t nranks, const char *dir, char *err,
                           size_t errlen)
{
    unified_tree t = {.global = &u->global};
    uint32_t **maps = NULL;
    int status = -1;
    if (sp_u64map_init(&t.index, 256) != 0) {
        sp_error(err, errlen, "out of memory while writing the profile");
        goto out;
    }
    if (read_columns(&t, all, sizes, nranks) != 0) {
        sp_error(err, errlen, "the profiles of the ranks arrived damaged");
        goto out;
    }
    maps = calloc(t.ncolumns ? t.ncolumns : 1, sizeof *maps);
    if (!maps || unify_columns(&t, maps) != 0) {
        sp_error(err, errlen, "out of memory while writing the profile");
        goto out;
    }
    status = write_cube(m, u, &t, dir, err, errlen);
out:
    for (uint32_t l = 0; maps && l < t.ncolumns; l++)
        free(maps[l]);
    free(maps);
    for (uint32_t l = 0; l < t.ncolumns; l++)
        free(t.columns[l].nodes);
    free(t.columns);
    free(t.cnodes);
    free(t.unified_to_local);
    if (t.index.keys)
        sp_u64map_free(&t.index);
    return status;
}

void sp_profile_part(sp_measurement *m, uint64_t ticks_per_second, sp_buffer *b)
{
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t l = 0; l < nlocs; l++)
        finish_root(m->locations[l], m->locations[l]->last_time - m->start.ticks);
    serialize_trees(m, NULL, 1.0 / (double)(ticks_per_second ? ticks_per_second : 1), b);
}

/* At the root: the adopted parts' trees after the ranks' ones (the parts are the last
 * ranks of the unification). */
static int add_parts(sp_measurement *m, const sp_unified *u, void **all, uint64_t **sizes,
                     uint32_t nranks)
{
    uint32_t root = m->program_region < u->region_count ? u->region_map[m->program_region] : 0;
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
    for (uint32_t k = 0; k < m->part_count; k++) {
        size_t at = b.size;
        const sp_part *p = &m->parts[k];
        if (p->section[sp_profile.slot])
            remap_part_trees(p, p->section[sp_profile.slot], p->section_size[sp_profile.slot],
                             root, &b);
        else
            sp_buffer_u32(&b, 0);
        grown[nranks + k] = b.size - at;
    }
    if (b.failed) {
        sp_buffer_free(&b);
        return -1;
    }
    free(*all);
    *all = b.data; /* owned by the caller now */
    return 0;
}

int sp_profile_write(sp_measurement *m, const sp_unified *u, const char *dir,
                     uint64_t ticks_per_second, char *err, size_t errlen)
{
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t l = 0; l < nlocs; l++)
        finish_root(m->locations[l], m->locations[l]->last_time - m->start.ticks);
    double seconds_per_tick = 1.0 / (double)(ticks_per_second ? ticks_per_second : 1);
    const sp_ipc *ipc = m->collective ? &m->ipc : &sp_ipc_single;
    sp_buffer mine;
    sp_buffer_init(&mine);
    sp_unified_maps maps = {u->string_map, u->region_map, u->parameter_map, u->comm_map,
                            u->win_map, u->string_count, u->region_count, u->parameter_count,
                            u->comm_count, u->win_count};
    serialize_trees(m, &maps, seconds_per_tick, &mine);
    void *all = NULL;
    uint64_t *sizes = calloc(ipc->size, sizeof *sizes);
    int status = -1;
    if (mine.failed || !sizes) {
        sp_error(err, errlen, "out of memory while writing the profile");
    } else if (sp_ipc_gather_bytes(ipc, mine.data, mine.size, &all, sizes) != 0) {
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
    sp_buffer_free(&mine);
    return status;
}
