/* Metric values per call path (Score-P's dense metrics): for every visit of a node the
 * difference of each metric between the frame's enter and its leave is added, so a node
 * holds inclusive sums, as its time. Kept beside the nodes (a row of the measurement's
 * metric count per node), only when metrics are recorded. */
#include "substrates/profile/profile_internal.h"

#include <stdlib.h>
#include <string.h>

void sp_profile_metrics(sp_profile_location *p, uint32_t node, const uint64_t *start,
                        const uint64_t *now, uint32_t count)
{
    uint32_t stride = sp_profile.meas->metrics.count;
    if (node == SP_PROFILE_NO_NODE || !stride)
        return;
    if (node >= p->metric_rows) {
        uint32_t rows = p->metric_rows ? p->metric_rows : 64;
        while (rows <= node)
            rows *= 2;
        uint64_t *sums = realloc(p->metric_sums, (size_t)rows * stride * sizeof *sums);
        if (!sums) {
            p->metric_lost++;
            return; /* out of memory: this visit's values are not counted */
        }
        memset(sums + (size_t)p->metric_rows * stride, 0,
               (size_t)(rows - p->metric_rows) * stride * sizeof *sums);
        p->metric_sums = sums;
        p->metric_rows = rows;
    }
    uint64_t *row = p->metric_sums + (size_t)node * stride;
    for (uint32_t i = 0; i < count; i++)
        row[i] += now[i] - start[i];
}

void sp_profile_metrics_free(sp_profile_location *p)
{
    free(p->metric_sums);
    p->metric_sums = NULL;
    p->metric_rows = 0;
}

void sp_profile_metrics_serialize(const sp_profile_location *p, sp_buffer *b)
{
    uint32_t stride = sp_profile.meas->metrics.count;
    uint32_t rows = p->metric_rows < p->count ? p->metric_rows : p->count;
    sp_buffer_u32(b, stride);
    sp_buffer_u32(b, stride ? rows : 0);
    if (!stride)
        return;
    for (size_t i = 0; i < (size_t)rows * stride; i++)
        sp_buffer_u64(b, p->metric_sums[i]);
}
