/* Per-location call-path trees: nodes in blocks of the budget, found by (parent, region). */
#include "substrates/profile/profile_internal.h"

#include <stdlib.h>
#include <string.h>

sp_profile_state sp_profile;

_Static_assert(SP_PROFILE_BLOCK_NODES * sizeof(sp_profile_node) <= SP_CHUNK_SIZE,
               "a block of profile nodes must fit into one chunk of the budget");

/* ---- per-location trees ---------------------------------------------------------------- */

/* A new node block from the budget; when it is used up, whoever can give memory back for
 * this location does (the pool's reclaim callback). NULL: no memory (the call path is not
 * created). */
static sp_profile_node *new_block(sp_profile_location *p, bool first)
{
    return sp_chunk_pool_get_reclaiming(&sp_profile.meas->pool, p->location, first);
}

/* A compacted tree that gets a new node goes back into a block of the budget. */
static int expand_compacted(sp_profile_location *p)
{
    sp_profile_node *block = new_block(p, true);
    if (!block)
        return -1;
    memcpy(block, p->blocks[0], (size_t)p->count * sizeof *block);
    free(p->blocks[0]);
    p->blocks[0] = block;
    p->compact = false;
    return 0;
}

void sp_profile_location_retire(sp_location *loc)
{
    sp_profile_location *p = profile_location(loc);
    /* Large trees keep their blocks: copying them would gain little. */
    if (!p || p->compact || p->block_count != 1 ||
        (size_t)p->count * sizeof(sp_profile_node) > SP_CHUNK_SIZE / 4)
        return;
    /* Nodes are aligned on cache lines, as in the budget's chunks. */
    sp_profile_node *copy =
        aligned_alloc(_Alignof(sp_profile_node), (size_t)p->count * sizeof *copy);
    if (!copy)
        return;
    memcpy(copy, p->blocks[0], (size_t)p->count * sizeof *copy);
    sp_chunk_pool_put(&sp_profile.meas->pool, p->blocks[0]);
    p->blocks[0] = copy;
    p->compact = true;
}

static uint32_t new_node(sp_profile_location *p, uint32_t parent, uint32_t region)
{
    if (p->compact && expand_compacted(p) != 0)
        return SP_PROFILE_NO_NODE;
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
        sp_profile_node *block = new_block(p, index == 0);
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
        n->level = pn->level < UINT16_MAX ? (uint16_t)(pn->level + 1) : UINT16_MAX;
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

int sp_profile_start(sp_measurement *m, unsigned slot, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    sp_profile.meas = m;
    sp_profile.slot = slot;
    return 0;
}

void sp_profile_stop(sp_measurement *m)
{
    (void)m;
}

int sp_profile_location_open(sp_location *loc)
{
    sp_profile_location *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    loc->substrate[sp_profile.slot] = p;
    p->location = loc;
    p->max_depth = sp_profile.meas->config.max_callpath_depth;
    p->off_node = SP_PROFILE_NO_NODE;
    if (sp_u64map_init(&p->children, 64) != 0)
        return -1;
    return new_node(p, SP_PROFILE_NO_NODE, sp_profile.meas->program_region) == SP_PROFILE_ROOT
               ? 0
               : -1;
}

void sp_profile_location_free(sp_location *loc)
{
    if (!sp_profile.meas)
        return;
    sp_profile_location *p = profile_location(loc);
    if (!p)
        return;
    if (p->compact)
        free(p->blocks[0]);
    else
        for (uint32_t i = 0; i < p->block_count; i++)
            sp_chunk_pool_put(&sp_profile.meas->pool, p->blocks[i]);
    free(p->blocks);
    if (p->children.keys)
        sp_u64map_free(&p->children);
    sp_profile_io_free(p);
    sp_profile_folded_free(p);
    sp_profile_metrics_free(p);
    sp_profile_wait_states_free(p);
    free(p);
    loc->substrate[sp_profile.slot] = NULL;
}

void sp_profile_results(sp_measurement *m, sp_results *r)
{
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t i = 0; i < nlocs; i++) {
        sp_profile_location *p = profile_location(m->locations[i]);
        if (p) {
            r->profile_folded_calls += p->folded_calls;
            r->profile_dropped_calls += p->dropped_calls;
            r->profile_dropped_samples += p->dropped_samples;
            r->profile_folded_parameters += p->folded_parameters;
        }
    }
}

static uint64_t child_key(uint32_t parent, uint32_t region)
{
    return ((uint64_t)parent << 32) | region;
}

uint32_t sp_profile_child_slow(sp_profile_location *p, uint32_t parent, uint32_t region)
{
    uint32_t child = sp_u64map_get(&p->children, child_key(parent, region));
    if (child != SP_NO_ID)
        return child;
    child = new_node(p, parent, region);
    if (child == SP_PROFILE_NO_NODE || sp_u64map_put(&p->children, child_key(parent, region), child) != 0) {
        p->dropped_calls++;
        return SP_PROFILE_NO_NODE;
    }
    return child;
}

/* ---- Score-P's artificial regions ------------------------------------------------------- */

static bool is_collapse(sp_profile_location *p, uint32_t node)
{
    return node != SP_PROFILE_NO_NODE &&
           sp_profile_node_at(p, node)->region ==
               atomic_load_explicit(&sp_profile.meas->collapse_region, memory_order_relaxed);
}

/* COLLAPSE is defined at the first call beyond the depth limit, as in Score-P
 * (scorep_profile_collapse.c: paradigm user, region type unknown, no source). */
static uint32_t collapse_region(void)
{
    sp_measurement *m = sp_profile.meas;
    uint32_t region = atomic_load_explicit(&m->collapse_region, memory_order_acquire);
    if (region != SP_NO_ID)
        return region;
    /* A named region: threads defining it at once get the same one. */
    region = sp_defs_named_region(&m->defs, "COLLAPSE", "", -1, SP_PARADIGM_USER,
                                  SP_ROLE_UNKNOWN, SP_REGION_ARTIFICIAL);
    atomic_store_explicit(&m->collapse_region, region, memory_order_release);
    return region;
}

uint32_t sp_profile_collapse(sp_profile_location *p, uint32_t parent)
{
    p->folded_calls++;
    if (parent == SP_PROFILE_NO_NODE || is_collapse(p, parent))
        return SP_PROFILE_NO_NODE;
    uint32_t region = collapse_region();
    if (region == SP_NO_ID)
        return SP_PROFILE_NO_NODE;
    uint32_t node = sp_profile_child_slow(p, parent, region);
    if (node != SP_PROFILE_NO_NODE)
        sp_profile_node_at(p, node)->visits++;
    return node;
}

static void add_time(sp_profile_node *n, uint64_t ticks)
{
    n->time += ticks;
    if (ticks < n->min_time)
        n->min_time = ticks;
    if (ticks > n->max_time)
        n->max_time = ticks;
}

void sp_profile_recording_off(sp_profile_location *p, uint32_t parent, uint64_t time)
{
    uint32_t region = sp_profile.meas->measurement_off_region;
    p->off_node = SP_PROFILE_NO_NODE;
    p->off_since = time;
    if (parent == SP_PROFILE_NO_NODE || region == SP_NO_ID)
        return; /* inside a call without a node of its own: its callers keep the time */
    p->off_node = sp_profile_child_slow(p, parent, region);
    if (p->off_node != SP_PROFILE_NO_NODE)
        sp_profile_node_at(p, p->off_node)->visits++;
}

void sp_profile_recording_on(sp_profile_location *p, uint64_t time)
{
    if (p->off_node != SP_PROFILE_NO_NODE)
        add_time(sp_profile_node_at(p, p->off_node), time - p->off_since);
    p->off_node = SP_PROFILE_NO_NODE;
}

void sp_profile_recording_off_moves(sp_profile_location *p, uint32_t parent, uint64_t time)
{
    if (p->off_node == SP_PROFILE_NO_NODE)
        return;
    add_time(sp_profile_node_at(p, p->off_node), time - p->off_since);
    p->off_since = time;
    /* The visit continues under the caller (counted once, where recording went off). */
    p->off_node = parent == SP_PROFILE_NO_NODE
                      ? SP_PROFILE_NO_NODE
                      : sp_profile_child_slow(p, parent, sp_profile.meas->measurement_off_region);
}

void sp_profile_flush_noted(sp_profile_location *p, uint64_t ticks)
{
    if (p->flushes_pending++ == 0) {
        p->flush_ticks_pending = 0;
        p->flush_min_pending = UINT64_MAX;
        p->flush_max_pending = 0;
    }
    p->flush_ticks_pending += ticks;
    if (ticks < p->flush_min_pending)
        p->flush_min_pending = ticks;
    if (ticks > p->flush_max_pending)
        p->flush_max_pending = ticks;
}

void sp_profile_flushes_settle(sp_profile_location *p, uint32_t parent)
{
    uint32_t flushes = p->flushes_pending;
    uint32_t region = sp_profile.meas->buffer_flush_region;
    p->flushes_pending = 0;
    if (!flushes || parent == SP_PROFILE_NO_NODE || region == SP_NO_ID)
        return;
    uint32_t node = sp_profile_child_slow(p, parent, region);
    if (node == SP_PROFILE_NO_NODE)
        return;
    sp_profile_node *n = sp_profile_node_at(p, node);
    n->visits += flushes;
    n->time += p->flush_ticks_pending;
    if (p->flush_min_pending < n->min_time)
        n->min_time = p->flush_min_pending;
    if (p->flush_max_pending > n->max_time)
        n->max_time = p->flush_max_pending;
}

/* ---- calling contexts and samples ------------------------------------------------------- */

/* One step down a calling context: the child of `node` for `region` (a visit more when
 * `entered`), a COLLAPSE node beyond the depth limit (and nothing further down: its time
 * holds everything below), SP_PROFILE_NO_NODE without memory. */
static uint32_t context_child(sp_profile_location *p, uint32_t node, uint32_t region,
                              bool entered, bool *collapsed)
{
    if (sp_profile_node_at(p, node)->level + 1u >= p->max_depth) {
        *collapsed = true;
        if (is_collapse(p, node))
            return node;
        uint32_t collapse = collapse_region();
        uint32_t count = p->count;
        uint32_t c = collapse == SP_NO_ID ? SP_PROFILE_NO_NODE
                                          : sp_profile_child_slow(p, node, collapse);
        if (c != SP_PROFILE_NO_NODE && p->count > count)
            sp_profile_node_at(p, c)->sampled = 1;
        if (c != SP_PROFILE_NO_NODE && entered) {
            p->folded_calls++;
            sp_profile_node_at(p, c)->visits++;
        }
        return c;
    }
    uint32_t child = sp_profile_node_at(p, node)->last_child_hit;
    if (child == SP_PROFILE_NO_NODE || sp_profile_node_at(p, child)->region != region ||
        sp_profile_node_at(p, child)->kind != SP_NODE_REGION) {
        uint32_t count = p->count;
        child = sp_profile_child_slow(p, node, region);
        if (child == SP_PROFILE_NO_NODE)
            return child;
        if (p->count > count)
            sp_profile_node_at(p, child)->sampled = 1; /* made here: a frame of the stack */
        sp_profile_node_at(p, node)->last_child_hit = child;
    }
    if (entered)
        sp_profile_node_at(p, child)->visits++;
    return child;
}

uint32_t sp_profile_enter_in_context(sp_profile_location *p, uint32_t parent,
                                     const sp_context_frame *frames, uint32_t count,
                                     uint32_t same, uint32_t region)
{
    if (parent == SP_PROFILE_NO_NODE || is_collapse(p, parent))
        return SP_PROFILE_NO_NODE; /* inside COLLAPSE nothing has a node of its own */
    uint32_t node = parent;
    bool collapsed = false;
    for (uint32_t i = 0; i < count; i++) {
        node = context_child(p, node, frames[i].region, i >= same, &collapsed);
        if (node == SP_PROFILE_NO_NODE || collapsed)
            return SP_PROFILE_NO_NODE; /* the region runs inside a frame beyond the limit */
    }
    /* Beyond the limit itself: a visit of COLLAPSE, which gets its time. */
    uint32_t child = context_child(p, node, region, true, &collapsed);
    if (child != SP_PROFILE_NO_NODE)
        sp_profile_node_at(p, child)->sampled = 0; /* its time is measured */
    return child;
}

void sp_profile_sample(sp_profile_location *p, uint32_t parent, const sp_context_frame *frames,
                       uint32_t count, uint32_t same, uint64_t weight)
{
    if (parent == SP_PROFILE_NO_NODE)
        return; /* inside a call without a node of its own (COLLAPSE): its time is measured */
    uint32_t node = parent;
    bool collapsed = false;
    for (uint32_t i = 0; i < count && !collapsed; i++) {
        uint32_t child = context_child(p, node, frames[i].region, i >= same, &collapsed);
        if (child == SP_PROFILE_NO_NODE) {
            p->dropped_samples++;
            break;
        }
        node = child;
    }
    sp_profile_node *leaf = sp_profile_node_at(p, node);
    leaf->hits++;
    if (leaf->sampled)
        leaf->time += weight; /* an entered region's time is measured */
}

void sp_profile_finish_samples(sp_profile_location *p)
{
    /* Children come after their parents: one pass from the last node adds each node's
     * (by then inclusive) time to its sampled parent. */
    for (uint32_t i = p->count; i-- > 1;) {
        const sp_profile_node *n = sp_profile_node_at(p, i);
        if (n->parent == SP_PROFILE_NO_NODE)
            continue;
        sp_profile_node *parent = sp_profile_node_at(p, n->parent);
        if (parent->sampled && n->kind == SP_NODE_REGION)
            parent->time += n->time;
    }
}

/* ---- parameters ------------------------------------------------------------------------ */

uint32_t sp_profile_parameter(sp_profile_location *p, uint32_t parent, uint32_t region,
                              uint32_t parameter, sp_parameter_value parameter_value)
{
    /* Inside COLLAPSE nothing is split, as nothing is called. */
    if (parent == SP_PROFILE_NO_NODE || is_collapse(p, parent))
        return SP_PROFILE_NO_NODE;
    /* CUBE's numeric parameters are signed 64-bit, as Score-P writes them. */
    sp_profile_node_kind kind = parameter_value.type == SP_PARAM_STRING ? SP_NODE_PARAMETER_STRING
                                                                        : SP_NODE_PARAMETER_INT;
    int64_t value = parameter_value.value;
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
    uint32_t child = new_node(p, parent, region);
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

