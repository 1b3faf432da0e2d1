#include "substrates/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cube_writer.h"
#include "substrates/trace.h"

_Static_assert(SP_PROFILE_BLOCK_NODES * sizeof(sp_profile_node) <= SP_CHUNK_SIZE,
               "a block of profile nodes must fit into one chunk of the budget");

/* ---- per-location trees ---------------------------------------------------------------- */

/* A new node block from the budget; when it is used up and the trace holds memory, the
 * location's trace is flushed first. NULL: no memory (the call path is not created). */
static sp_profile_node *new_block(sp_location *loc, bool first)
{
    sp_profile_node *block = sp_chunk_pool_get(&sp_meas.pool, first);
    if (!block && sp_meas.trace) {
        sp_trace_flush_location(sp_meas.trace, loc);
        block = sp_chunk_pool_get(&sp_meas.pool, false);
    }
    return block;
}

static uint32_t new_node(sp_location *loc, uint32_t parent, uint32_t region)
{
    sp_profile_location *p = loc->profile;
    uint32_t index = p->count;
    if (index % SP_PROFILE_BLOCK_NODES == 0) {
        if (p->block_count == p->block_capacity) {
            uint32_t cap = p->block_capacity ? p->block_capacity * 2 : 16;
            sp_profile_node **blocks = realloc(p->blocks, cap * sizeof *blocks);
            if (!blocks)
                return SP_PROFILE_NO_NODE;
            p->blocks = blocks;
            p->block_capacity = cap;
        }
        sp_profile_node *block = new_block(loc, index == 0);
        if (!block)
            return SP_PROFILE_NO_NODE;
        p->blocks[p->block_count++] = block;
    }
    sp_profile_node *n = sp_profile_node_at(p, index);
    memset(n, 0, sizeof *n);
    n->region = region;
    n->parent = parent;
    n->first_child = n->next_sibling = n->last_child_hit = SP_PROFILE_NO_NODE;
    n->min_time = UINT64_MAX;
    p->count++;
    if (parent != SP_PROFILE_NO_NODE) {
        sp_profile_node *pn = sp_profile_node_at(p, parent);
        /* Appended at the end so that children keep the order of their first call. */
        if (pn->first_child == SP_PROFILE_NO_NODE) {
            pn->first_child = index;
        } else {
            uint32_t c = pn->first_child;
            while (sp_profile_node_at(p, c)->next_sibling != SP_PROFILE_NO_NODE)
                c = sp_profile_node_at(p, c)->next_sibling;
            sp_profile_node_at(p, c)->next_sibling = index;
        }
    }
    return index;
}

int sp_profile_location_init(sp_location *loc, uint32_t root_region)
{
    loc->profile = calloc(1, sizeof *loc->profile);
    if (!loc->profile || sp_u64map_init(&loc->profile->children, 64) != 0)
        return -1;
    return new_node(loc, SP_PROFILE_NO_NODE, root_region) == 0 ? 0 : -1;
}

void sp_profile_location_free(sp_location *loc)
{
    sp_profile_location *p = loc->profile;
    if (!p)
        return;
    for (uint32_t i = 0; i < p->block_count; i++)
        sp_chunk_pool_put(&sp_meas.pool, p->blocks[i]);
    free(p->blocks);
    sp_u64map_free(&p->children);
    free(p);
    loc->profile = NULL;
}

static uint64_t child_key(uint32_t parent, uint32_t region)
{
    return ((uint64_t)parent << 32) | region;
}

uint32_t sp_profile_child_slow(sp_location *loc, uint32_t parent, uint32_t region)
{
    sp_profile_location *p = loc->profile;
    uint32_t child = sp_u64map_get(&p->children, child_key(parent, region));
    if (child != SP_NO_ID)
        return child;
    child = new_node(loc, parent, region);
    if (child == SP_PROFILE_NO_NODE || sp_u64map_put(&p->children, child_key(parent, region), child) != 0) {
        p->dropped_calls++;
        return SP_PROFILE_NO_NODE;
    }
    return child;
}

uint32_t sp_profile_parameter(sp_location *loc, uint32_t parent, uint32_t region,
                              sp_profile_node_kind kind, uint32_t parameter, int64_t value)
{
    if (parent == SP_PROFILE_NO_NODE)
        return SP_PROFILE_NO_NODE;
    sp_profile_location *p = loc->profile;
    sp_profile_node *pn = sp_profile_node_at(p, parent);
    for (uint32_t c = pn->first_child; c != SP_PROFILE_NO_NODE;
         c = sp_profile_node_at(p, c)->next_sibling) {
        sp_profile_node *n = sp_profile_node_at(p, c);
        if (n->kind == kind && n->parameter == parameter && n->value == value) {
            n->visits++;
            return c;
        }
    }
    if (pn->parameter_children >= SP_PROFILE_MAX_PARAMETER_VALUES) {
        p->folded_parameters++;
        return SP_PROFILE_NO_NODE;
    }
    uint32_t child = new_node(loc, parent, region);
    if (child == SP_PROFILE_NO_NODE) {
        p->dropped_calls++;
        return child;
    }
    pn = sp_profile_node_at(p, parent); /* blocks do not move, but stay explicit */
    pn->parameter_children++;
    sp_profile_node *n = sp_profile_node_at(p, child);
    n->kind = (uint8_t)kind;
    n->parameter = parameter;
    n->value = value;
    n->visits = 1;
    return child;
}

/* ---- writing: one call tree for all locations ------------------------------------------ */

typedef struct {
    cube_cnode *cnodes;
    size_t count, capacity;
    sp_u64map index; /* hashed node identity -> unified node (probing past collisions) */
    uint32_t **local_to_unified;      /* per location */
    uint32_t *unified_to_local;       /* [cnode * nlocs + loc], SP_PROFILE_NO_NODE = none */
    uint32_t nlocs;
    double seconds_per_tick;
    sp_measurement *meas;
} unified_tree;

static uint64_t identity_hash(int64_t parent, const sp_profile_node *n)
{
    uint64_t h = sp_hash_mix((uint64_t)(parent + 1) * 0x9e3779b97f4a7c15ULL ^ n->region);
    h = sp_hash_mix(h ^ ((uint64_t)n->kind << 56) ^ n->parameter);
    return sp_hash_mix(h ^ (uint64_t)n->value);
}

static bool same_identity(const unified_tree *u, uint32_t c, int64_t parent,
                          const sp_profile_node *n, const char *param_name,
                          const char *param_string)
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

static int64_t unify_node(unified_tree *u, int64_t parent, const sp_profile_node *n)
{
    const sp_defs *defs = &u->meas->defs;
    const char *param_name = NULL, *param_string = NULL;
    if (n->kind != SP_NODE_REGION) {
        param_name = sp_defs_str(defs, defs->parameters[n->parameter].name);
        if (n->kind == SP_NODE_PARAMETER_STRING)
            param_string = sp_defs_str(defs, (uint32_t)n->value);
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

enum { METRIC_VISITS, METRIC_TIME, METRIC_MIN_TIME, METRIC_MAX_TIME };

static int fill_row(void *user, uint32_t metric, uint32_t cnode, void *out)
{
    unified_tree *u = user;
    for (uint32_t l = 0; l < u->nlocs; l++) {
        uint32_t local = u->unified_to_local[(size_t)cnode * u->nlocs + l];
        const sp_profile_node *n =
            local == SP_PROFILE_NO_NODE ? NULL
                                        : sp_profile_node_at(u->meas->locations[l]->profile, local);
        if (metric == METRIC_VISITS) {
            ((uint64_t *)out)[l] = n ? n->visits : 0;
            continue;
        }
        uint64_t ticks = 0;
        if (n && n->visits) {
            if (metric == METRIC_TIME)
                ticks = n->time;
            else if (metric == METRIC_MIN_TIME)
                ticks = n->min_time == UINT64_MAX ? 0 : n->min_time;
            else
                ticks = n->max_time;
        } else if (n && metric == METRIC_TIME) {
            ticks = n->time; /* a root without visits: the time of its children */
        }
        ((double *)out)[l] = (double)ticks * u->seconds_per_tick;
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

/* The root's numbers: the program's visit and duration on the location that ran it; on
 * other threads no visit and the time of their top-level calls. */
static void finish_root(sp_location *loc, uint64_t duration)
{
    sp_profile_location *p = loc->profile;
    sp_profile_node *root = sp_profile_node_at(p, 0);
    if (loc->is_main) {
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

int sp_profile_write(sp_measurement *m, uint64_t ticks_per_second, char *err, size_t errlen)
{
    uint32_t nlocs = atomic_load(&m->location_count);
    unified_tree u = {.nlocs = nlocs, .meas = m,
                      .seconds_per_tick = 1.0 / (double)(ticks_per_second ? ticks_per_second : 1)};
    int status = -1;
    cube_region *regions = calloc(m->defs.region_count ? m->defs.region_count : 1, sizeof *regions);
    cube_location *locations = calloc(nlocs ? nlocs : 1, sizeof *locations);
    u.local_to_unified = calloc(nlocs ? nlocs : 1, sizeof *u.local_to_unified);
    char *path = NULL;
    if (!regions || !locations || !u.local_to_unified || sp_u64map_init(&u.index, 256) != 0) {
        snprintf(err, errlen, "out of memory while writing the profile");
        goto out;
    }
    for (uint32_t l = 0; l < nlocs; l++) {
        sp_location *loc = m->locations[l];
        sp_profile_location *p = loc->profile;
        finish_root(loc, m->end.ticks > m->start.ticks ? loc->last_time - m->start.ticks : 0);
        uint32_t *map = malloc((p->count ? p->count : 1) * sizeof *map);
        if (!map) {
            snprintf(err, errlen, "out of memory while writing the profile");
            goto out;
        }
        u.local_to_unified[l] = map;
        /* Parents have smaller indexes than their children: one pass in index order. */
        for (uint32_t i = 0; i < p->count; i++) {
            const sp_profile_node *n = sp_profile_node_at(p, i);
            int64_t parent = n->parent == SP_PROFILE_NO_NODE ? -1 : (int64_t)map[n->parent];
            int64_t c = unify_node(&u, parent, n);
            if (c < 0) {
                snprintf(err, errlen, "out of memory while writing the profile");
                goto out;
            }
            map[i] = (uint32_t)c;
        }
        locations[l].name = loc->name;
        locations[l].group = 0;
    }
    u.unified_to_local = malloc(u.count * nlocs * sizeof *u.unified_to_local + 1);
    if (!u.unified_to_local) {
        snprintf(err, errlen, "out of memory while writing the profile");
        goto out;
    }
    memset(u.unified_to_local, 0xff, u.count * nlocs * sizeof *u.unified_to_local);
    for (uint32_t l = 0; l < nlocs; l++)
        for (uint32_t i = 0; i < m->locations[l]->profile->count; i++)
            u.unified_to_local[(size_t)u.local_to_unified[l][i] * nlocs + l] = i;

    const sp_defs *defs = &m->defs;
    for (uint32_t r = 0; r < defs->region_count; r++) {
        const sp_region *reg = &defs->regions[r];
        regions[r] = (cube_region){
            .name = sp_defs_str(defs, reg->name),
            .canonical = sp_defs_str(defs, reg->canonical),
            .file = sp_defs_str(defs, reg->file),
            .begin_line = reg->begin_line,
            .end_line = reg->end_line,
            .paradigm = paradigm_name(reg->paradigm),
            .role = role_name(reg->role),
        };
    }
    static const cube_metric metrics[] = {
        {"visits", "Visits", "occ", "@mirror@scorep_metrics.html#visits", "Number of visits",
         CUBE_DTYPE_UINT64, CUBE_EXCLUSIVE},
        {"time", "Time", "sec", "@mirror@scorep_metrics.html#time", "Total CPU allocation time",
         CUBE_DTYPE_DOUBLE, CUBE_INCLUSIVE},
        {"min_time", "Minimum Inclusive Time", "sec", "@mirror@scorep_metrics.html#time_min_incl",
         "Minimum inclusive CPU allocation time", CUBE_DTYPE_MINDOUBLE, CUBE_EXCLUSIVE},
        {"max_time", "Maximum Inclusive Time", "sec", "@mirror@scorep_metrics.html#time_max_incl",
         "Maximum inclusive CPU allocation time", CUBE_DTYPE_MAXDOUBLE, CUBE_EXCLUSIVE},
    };
    cube_system_node node = {m->config.node_name};
    cube_location_group group = {"Process", 0, 0};
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
        .nregions = defs->region_count,
        .cnodes = u.cnodes,
        .ncnodes = u.count,
        .metrics = metrics,
        .nmetrics = sizeof metrics / sizeof metrics[0],
        .nodes = &node,
        .nnodes = 1,
        .groups = &group,
        .ngroups = 1,
        .locations = locations,
        .nlocations = nlocs,
        .row = fill_row,
        .row_user = &u,
    };
    size_t len = strlen(m->config.experiment_dir) + strlen(m->config.profile_base_name) + 8;
    path = malloc(len);
    if (!path) {
        snprintf(err, errlen, "out of memory while writing the profile");
        goto out;
    }
    snprintf(path, len, "%s/%s.cubex", m->config.experiment_dir, m->config.profile_base_name);
    status = cube_write(path, &profile, err, errlen);
out:
    free(path);
    if (u.local_to_unified)
        for (uint32_t l = 0; l < nlocs; l++)
            free(u.local_to_unified[l]);
    free(u.local_to_unified);
    free(u.unified_to_local);
    free(u.cnodes);
    sp_u64map_free(&u.index);
    free(regions);
    free(locations);
    return status;
}
