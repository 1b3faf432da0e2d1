/* What COLLAPSE folds, kept per function: the calls beyond SCOREP_PROFILING_MAX_CALLPATH_DEPTH
 * make no call-path nodes (the tree stays bounded, as in Score-P), but their visits and times
 * per function and per caller -> callee pair are counted here, keyed by the COLLAPSE node
 * they ran under, so that per-function totals are exact at any depth (folded_calls.json in
 * profile.cubex; FORMATS: README "profile.cubex").
 *
 * Why per COLLAPSE node: whether a folded call is the outermost activation of its function
 * (cProfile's primitive calls, inclusive time counted once) depends on the frames above the
 * limit too. Those are the COLLAPSE node's call path, which the reader knows; here only the
 * activations within the folded calls are counted (`active`), so no event walks the path.
 *
 * Only calls beyond the limit come here: the event path of every other call is unchanged. */
#include "substrates/profile/profile_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t collapse, region;
    uint32_t active; /* open folded frames of the function under this COLLAPSE visit */
    uint64_t primitive;
    uint64_t once; /* inclusive ticks of the outermost folded activations */
    uint64_t min_time, max_time;
} folded_function;

typedef struct {
    uint32_t function; /* the callee's folded_function */
    uint32_t caller;   /* region */
    uint32_t active;
    uint32_t last_callee; /* the pair entered last from a frame of this pair: recursion repeats */
    uint64_t visits, primitive;
    uint64_t time; /* inclusive ticks of every visit */
    uint64_t once; /* of the outermost activations of the pair */
    uint64_t child; /* inclusive ticks of the folded calls it made: exclusive = time - child */
} folded_pair;

struct sp_profile_folded {
    sp_u64map functions_index; /* collapse << 32 | region -> function */
    sp_u64map pairs_index;     /* function << 32 | caller region -> pair */
    folded_function *functions;
    folded_pair *pairs;
    uint32_t nfunctions, function_capacity, npairs, pair_capacity;
};

static struct sp_profile_folded *folded_table(sp_profile_location *p)
{
    if (p->folded)
        return p->folded;
    struct sp_profile_folded *t = calloc(1, sizeof *t);
    if (!t || sp_u64map_init(&t->functions_index, 16) != 0) {
        free(t);
        return NULL;
    }
    if (sp_u64map_init(&t->pairs_index, 16) != 0) {
        sp_u64map_free(&t->functions_index);
        free(t);
        return NULL;
    }
    p->folded = t;
    return t;
}

static uint32_t function_of(struct sp_profile_folded *t, uint32_t collapse, uint32_t region)
{
    uint64_t key = (uint64_t)collapse << 32 | region;
    uint32_t f = sp_u64map_get(&t->functions_index, key);
    if (f != SP_NO_ID)
        return f;
    if (t->nfunctions == t->function_capacity) {
        uint32_t cap = t->function_capacity ? t->function_capacity * 2 : 16;
        folded_function *grown = realloc(t->functions, cap * sizeof *grown);
        if (!grown)
            return SP_NO_ID;
        t->functions = grown;
        t->function_capacity = cap;
    }
    if (sp_u64map_put(&t->functions_index, key, t->nfunctions) != 0)
        return SP_NO_ID;
    f = t->nfunctions++;
    t->functions[f] = (folded_function){.collapse = collapse, .region = region,
                                        .min_time = UINT64_MAX};
    return f;
}

static uint32_t pair_of(struct sp_profile_folded *t, uint32_t function, uint32_t caller)
{
    uint64_t key = (uint64_t)function << 32 | caller;
    uint32_t e = sp_u64map_get(&t->pairs_index, key);
    if (e != SP_NO_ID)
        return e;
    if (t->npairs == t->pair_capacity) {
        uint32_t cap = t->pair_capacity ? t->pair_capacity * 2 : 16;
        folded_pair *grown = realloc(t->pairs, cap * sizeof *grown);
        if (!grown)
            return SP_NO_ID;
        t->pairs = grown;
        t->pair_capacity = cap;
    }
    if (sp_u64map_put(&t->pairs_index, key, t->npairs) != 0)
        return SP_NO_ID;
    e = t->npairs++;
    t->pairs[e] = (folded_pair){.function = function, .caller = caller,
                                .last_callee = SP_NO_ID};
    return e;
}

uint32_t sp_profile_enter_deep(sp_profile_location *p, uint32_t parent, uint32_t parent_folded,
                               uint32_t caller, uint32_t region, uint32_t *folded)
{
    uint32_t node = sp_profile_collapse(p, parent);
    *folded = SP_PROFILE_NO_NODE;
    struct sp_profile_folded *t = folded_table(p);
    if (!t)
        return node;
    uint32_t pair = SP_NO_ID;
    if (parent_folded != SP_PROFILE_NO_NODE) {
        /* Deeper inside a COLLAPSE visit: the caller's entry names it. */
        folded_pair *pp = &t->pairs[parent_folded];
        uint32_t last = pp->last_callee;
        if (last != SP_NO_ID && t->functions[t->pairs[last].function].region == region) {
            pair = last;
        } else {
            uint32_t f = function_of(t, t->functions[pp->function].collapse, region);
            pair = f == SP_NO_ID ? SP_NO_ID : pair_of(t, f, caller);
            if (pair != SP_NO_ID)
                t->pairs[parent_folded].last_callee = pair; /* pairs may have moved */
        }
    } else if (node != SP_PROFILE_NO_NODE && sp_profile_node_at(p, node)->region ==
                                                 atomic_load_explicit(
                                                     &sp_profile.meas->collapse_region,
                                                     memory_order_relaxed)) {
        /* The first call beyond the limit: a visit of the COLLAPSE node `node`. */
        uint32_t f = function_of(t, node, region);
        pair = f == SP_NO_ID ? SP_NO_ID : pair_of(t, f, caller);
    }
    if (pair == SP_NO_ID)
        return node; /* no memory (or no COLLAPSE node): the call is only in COLLAPSE's time */
    folded_pair *e = &t->pairs[pair];
    folded_function *f = &t->functions[e->function];
    e->visits++;
    if (e->active++ == 0)
        e->primitive++;
    if (f->active++ == 0)
        f->primitive++;
    *folded = pair;
    return node;
}

void sp_profile_leave_deep(sp_profile_location *p, uint32_t folded, uint32_t parent_folded,
                           uint64_t duration)
{
    struct sp_profile_folded *t = p->folded;
    folded_pair *e = &t->pairs[folded];
    folded_function *f = &t->functions[e->function];
    e->time += duration;
    if (--e->active == 0)
        e->once += duration;
    if (--f->active == 0)
        f->once += duration;
    f->min_time = duration < f->min_time ? duration : f->min_time;
    f->max_time = duration > f->max_time ? duration : f->max_time;
    if (parent_folded != SP_PROFILE_NO_NODE)
        t->pairs[parent_folded].child += duration;
}

void sp_profile_folded_free(sp_profile_location *p)
{
    struct sp_profile_folded *t = p->folded;
    if (!t)
        return;
    sp_u64map_free(&t->functions_index);
    sp_u64map_free(&t->pairs_index);
    free(t->functions);
    free(t->pairs);
    free(t);
    p->folded = NULL;
}

/* Local region ids: serialize_trees and remap_trees map them as the nodes' regions. */
void sp_profile_folded_serialize(const sp_profile_location *p, const uint32_t *region_map,
                                 uint32_t region_count, double seconds_per_tick, sp_buffer *b)
{
    const struct sp_profile_folded *t = p->folded;
    uint32_t nf = t ? t->nfunctions : 0, np = t ? t->npairs : 0;
#define MAP(r) (!region_map ? (r) : (r) < region_count ? region_map[r] : 0)
    sp_buffer_u32(b, nf);
    for (uint32_t i = 0; i < nf; i++) {
        const folded_function *f = &t->functions[i];
        sp_buffer_u32(b, f->collapse);
        sp_buffer_u32(b, MAP(f->region));
        sp_buffer_u64(b, f->primitive);
        sp_buffer_f64(b, (double)f->once * seconds_per_tick);
        sp_buffer_f64(b, f->min_time == UINT64_MAX ? 0.0 : (double)f->min_time * seconds_per_tick);
        sp_buffer_f64(b, (double)f->max_time * seconds_per_tick);
    }
    sp_buffer_u32(b, np);
    for (uint32_t i = 0; i < np; i++) {
        const folded_pair *e = &t->pairs[i];
        sp_buffer_u32(b, e->function);
        sp_buffer_u32(b, MAP(e->caller));
        sp_buffer_u64(b, e->visits);
        sp_buffer_u64(b, e->primitive);
        sp_buffer_f64(b, (double)e->time * seconds_per_tick);
        sp_buffer_f64(b, (double)e->once * seconds_per_tick);
        sp_buffer_f64(b, (double)(e->time - (e->child < e->time ? e->child : e->time)) *
                             seconds_per_tick);
    }
#undef MAP
}
