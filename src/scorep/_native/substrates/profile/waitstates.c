/* Wait-state times per call path (core/waitstates.h): the analysis runs in the core at the
 * end of a traced MPI run and hands its values in; the profile writes them as Scalasca's
 * metrics (write.c). */
#include <stdlib.h>
#include <string.h>

#include "core/waitstates.h"
#include "substrates/profile/profile_internal.h"

void sp_profile_wait_states_free(sp_profile_location *p)
{
    free(p->wait_states);
    p->wait_states = NULL;
    p->wait_state_rows = 0;
}

static double *row_of(sp_profile_location *p, uint32_t node)
{
    if (!p->wait_states) {
        p->wait_states = calloc((size_t)p->count * SP_WS_METRIC_COUNT, sizeof *p->wait_states);
        if (!p->wait_states)
            return NULL;
        p->wait_state_rows = p->count;
    }
    return node < p->wait_state_rows ? p->wait_states + (size_t)node * SP_WS_METRIC_COUNT : NULL;
}

void sp_profile_add_wait_states(sp_measurement *m, const sp_ws_input *in, const sp_ws_result *r)
{
    uint32_t *node_of = malloc((in->path_count ? in->path_count : 1) * sizeof *node_of);
    if (!node_of)
        return;
    uint32_t nlocs = atomic_load(&m->location_count);
    /* Paths come after their callers (the trace interns callers first). */
    for (uint32_t i = 0; i < in->path_count; i++) {
        uint32_t l = in->path_location[i];
        node_of[i] = SP_PROFILE_NO_NODE;
        if (l >= nlocs)
            continue;
        sp_profile_location *p = profile_location(m->locations[l]);
        uint32_t parent = in->path_parent[i] == SP_WS_NO_PATH ? SP_PROFILE_ROOT
                          : in->path_parent[i] < i ? node_of[in->path_parent[i]]
                                                   : SP_PROFILE_NO_NODE;
        if (!p || parent == SP_PROFILE_NO_NODE)
            continue;
        uint32_t child = p->children.keys ? sp_u64map_get(&p->children, (uint64_t)parent << 32 |
                                                                          in->path_region[i])
                                          : SP_NO_ID;
        /* No node of its own (deeper than the depth limit, no memory): its deepest caller */
        node_of[i] = child == SP_NO_ID ? parent : child;
    }
    for (uint32_t i = 0; i < in->path_count && i < r->cnode_count; i++) {
        if (node_of[i] == SP_PROFILE_NO_NODE)
            continue;
        const double *ns = r->time + (size_t)i * SP_WS_METRIC_COUNT;
        bool any = false;
        for (int k = 0; k < SP_WS_METRIC_COUNT; k++)
            any |= ns[k] > 0;
        if (!any)
            continue;
        sp_profile_location *p = profile_location(m->locations[in->path_location[i]]);
        double *row = row_of(p, node_of[i]);
        if (!row)
            continue;
        /* seconds, or for a count metric ("occ") the number of instances */
        for (int k = 0; k < SP_WS_METRIC_COUNT; k++)
            row[k] += sp_ws_metric_unit[k][0] == 's' ? ns[k] * 1e-9 : ns[k];
    }
    free(node_of);
}

/* [u32 rows] then rows x SP_WS_METRIC_COUNT f64 seconds (0 rows: none). */
void sp_profile_wait_states_serialize(const sp_profile_location *p, sp_buffer *b)
{
    uint32_t rows = p->wait_states ? (p->wait_state_rows < p->count ? p->wait_state_rows : p->count) : 0;
    sp_buffer_u32(b, rows);
    for (size_t i = 0; i < (size_t)rows * SP_WS_METRIC_COUNT; i++)
        sp_buffer_f64(b, p->wait_states[i]);
}
