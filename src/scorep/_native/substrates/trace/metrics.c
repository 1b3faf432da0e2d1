/* Metric records (core/metrics.h) as Score-P's tracing substrate writes them: before every
 * Enter and Leave a Metric event with the same time and the values of the strictly
 * synchronous metrics (metric class 0), and on the process's first location one more with
 * the per-process metrics (an instance of metric class 1 whose scope is the process).
 *
 * Raw layout: a record (kind SP_REC_METRIC, ref 0 strict or 1 per-process) followed by the
 * values, two per payload record. */
#include "substrates/trace/trace_internal.h"

#include <stdlib.h>

/* The values of one kind of metrics (per_process or not) of the set. */
static uint32_t metric_values(const sp_metric_set *set, uint32_t ref)
{
    return ref == 0 ? set->strict_count : set->count - set->strict_count;
}

unsigned sp_trace_metric_record_length(uint32_t ref)
{
    return 1 + (metric_values(&sp_trace.meas->metrics, ref) + 1) / 2;
}

static void put_metrics(sp_trace_location *tl, uint64_t time, uint32_t ref, const uint64_t *v,
                        uint32_t n)
{
    unsigned length = 1 + (n + 1) / 2;
    sp_trace_record *r = sp_trace_reserve(tl, length);
    r->time = time;
    r->kind = SP_REC_METRIC;
    r->ref = ref;
    uint64_t *values = (uint64_t *)(r + 1);
    for (uint32_t i = 0; i < n; i++)
        values[i] = v[i];
    if (n % 2)
        values[n] = 0;
}

void sp_trace_metrics(sp_trace_location *tl, uint64_t time, const sp_location_metrics *lm)
{
    const sp_metric_set *set = &sp_trace.meas->metrics;
    if (set->strict_count)
        put_metrics(tl, time, 0, lm->now, set->strict_count);
    if (lm->count > set->strict_count)
        put_metrics(tl, time, 1, lm->now + set->strict_count, lm->count - set->strict_count);
}

/* The id of this process's instance of the per-process metric class. */
static uint32_t process_instance(uint32_t rank)
{
    return 2 + rank;
}

OTF2_ErrorCode sp_trace_encode_metric(OTF2_EvtWriter *w, const sp_trace_record *r, uint64_t time,
                                      uint32_t rank)
{
    const sp_metric_set *set = &sp_trace.meas->metrics;
    uint32_t n = metric_values(set, r->ref);
    OTF2_Type types[SP_MAX_METRICS];
    OTF2_MetricValue values[SP_MAX_METRICS];
    const uint64_t *raw = (const uint64_t *)(r + 1);
    for (uint32_t i = 0; i < n && i < SP_MAX_METRICS; i++) {
        types[i] = OTF2_TYPE_UINT64;
        values[i].unsigned_int = raw[i];
    }
    return OTF2_EvtWriter_Metric(w, NULL, time, r->ref == 0 ? 0 : process_instance(rank),
                                 (uint8_t)n, types, values);
}

/* ---- samples taken apart from the event path (core/metrics.h) ---------------------------- */

/* Their metric class: apart from the classes and instances above. */
#define SAMPLE_CLASS (1u << 30)

/* The next sample to write; only the process's first location writes them, and only the
 * finalizing thread encodes. */
static uint64_t next_sample;

void sp_trace_samples_rewind(void)
{
    next_sample = 0;
}

OTF2_ErrorCode sp_trace_encode_samples(OTF2_EvtWriter *w, uint64_t until_ns)
{
    const sp_metric_samples *s = &sp_trace.meas->metrics.samples;
    OTF2_Type types[256];
    OTF2_MetricValue values[256];
    for (uint32_t c = 0; c < s->columns; c++)
        types[c] = s->column[c].is_double ? OTF2_TYPE_DOUBLE : OTF2_TYPE_UINT64;
    for (; next_sample < s->count && s->time_ns[next_sample] <= until_ns; next_sample++) {
        const uint64_t *row = s->values + next_sample * s->columns;
        for (uint32_t c = 0; c < s->columns; c++)
            values[c].unsigned_int = row[c]; /* the bits of a double or an integer */
        OTF2_ErrorCode status = OTF2_EvtWriter_Metric(w, NULL, s->time_ns[next_sample],
                                                      SAMPLE_CLASS, (uint8_t)s->columns, types,
                                                      values);
        if (status != OTF2_SUCCESS)
            return status;
    }
    return OTF2_SUCCESS;
}

/* ---- definitions ---------------------------------------------------------------------- */

/* name, description, unit of each metric, then of each sample column; interned once per
 * archive by the finalizing thread. */
static uint32_t metric_strings[SP_MAX_METRICS + 256][3];

static int intern_sample_strings(sp_defs *g)
{
    const sp_metric_set *set = &sp_trace.meas->metrics;
    const sp_metric_samples *s = &set->samples;
    for (uint32_t c = 0; c < s->columns; c++) {
        uint32_t *x = metric_strings[set->count + c];
        x[0] = sp_defs_string(g, s->column[c].name);
        x[1] = sp_defs_string(g, s->column[c].description);
        x[2] = sp_defs_string(g, s->column[c].unit);
        if (x[0] == SP_NO_ID || x[1] == SP_NO_ID || x[2] == SP_NO_ID)
            return -1;
    }
    return 0;
}

int sp_trace_intern_metric_strings(sp_defs *g)
{
    const sp_metric_set *set = &sp_trace.meas->metrics;
    if (intern_sample_strings(g) != 0)
        return -1;
    for (uint32_t i = 0; i < set->count; i++) {
        metric_strings[i][0] = sp_defs_string(g, set->defs[i].name);
        metric_strings[i][1] = sp_defs_string(g, set->defs[i].description);
        metric_strings[i][2] = sp_defs_string(g, set->defs[i].unit);
        if (metric_strings[i][0] == SP_NO_ID || metric_strings[i][1] == SP_NO_ID ||
            metric_strings[i][2] == SP_NO_ID)
            return -1;
    }
    return 0;
}

static OTF2_MetricType otf2_metric_type(uint8_t type)
{
    switch ((sp_metric_type)type) {
    case SP_METRIC_TYPE_PAPI: return OTF2_METRIC_TYPE_PAPI;
    case SP_METRIC_TYPE_RUSAGE: return OTF2_METRIC_TYPE_RUSAGE;
    case SP_METRIC_TYPE_OTHER: return OTF2_METRIC_TYPE_OTHER;
    }
    return OTF2_METRIC_TYPE_OTHER;
}

static OTF2_MetricMode otf2_metric_mode(uint8_t mode)
{
    switch ((sp_metric_mode)mode) {
    case SP_METRIC_ACCUMULATED_START: return OTF2_METRIC_ACCUMULATED_START;
    case SP_METRIC_ABSOLUTE_NEXT: return OTF2_METRIC_ABSOLUTE_NEXT;
    case SP_METRIC_ABSOLUTE_POINT: return OTF2_METRIC_ABSOLUTE_POINT;
    case SP_METRIC_ABSOLUTE_LAST: return OTF2_METRIC_ABSOLUTE_LAST;
    case SP_METRIC_RELATIVE_LAST: return OTF2_METRIC_RELATIVE_LAST;
    }
    return OTF2_METRIC_ABSOLUTE_POINT;
}

/* The sample columns: members after the metrics' and one asynchronous class, recorded by
 * the process's first location (Score-P's asynchronous metrics are of class ABSTRACT). */
static int write_sample_definitions(OTF2_GlobalDefWriter *gw, char *err, size_t errlen)
{
    const sp_metric_set *set = &sp_trace.meas->metrics;
    const sp_metric_samples *s = &set->samples;
    if (!s->columns)
        return 0;
    uint32_t members[256];
    for (uint32_t c = 0; c < s->columns; c++) {
        uint32_t id = set->count + c;
        members[c] = id;
        if (sp_trace_check(OTF2_GlobalDefWriter_WriteMetricMember(
                               gw, id, metric_strings[id][0], metric_strings[id][1],
                               OTF2_METRIC_TYPE_OTHER, otf2_metric_mode(s->column[c].mode),
                               s->column[c].is_double ? OTF2_TYPE_DOUBLE : OTF2_TYPE_UINT64,
                               OTF2_BASE_DECIMAL, 0, metric_strings[id][2]),
                           "WriteMetricMember", err, errlen) != 0)
            return -1;
    }
    return sp_trace_check(OTF2_GlobalDefWriter_WriteMetricClass(gw, SAMPLE_CLASS,
                                                                (uint8_t)s->columns, members,
                                                                OTF2_METRIC_ASYNCHRONOUS,
                                                                OTF2_RECORDER_KIND_ABSTRACT),
                          "WriteMetricClass", err, errlen);
}

int sp_trace_write_metric_definitions(OTF2_GlobalDefWriter *gw, const sp_unified *u, char *err,
                                      size_t errlen)
{
    const sp_metric_set *set = &sp_trace.meas->metrics;
    if (write_sample_definitions(gw, err, errlen) != 0)
        return -1;
    if (!set->count)
        return 0;
    uint32_t members[SP_MAX_METRICS];
    for (uint32_t i = 0; i < set->count; i++) {
        const sp_metric_def *d = &set->defs[i];
        members[i] = i;
        if (sp_trace_check(OTF2_GlobalDefWriter_WriteMetricMember(
                               gw, i, metric_strings[i][0], metric_strings[i][1],
                               otf2_metric_type(d->type), otf2_metric_mode(d->mode),
                               OTF2_TYPE_UINT64, d->binary ? OTF2_BASE_BINARY : OTF2_BASE_DECIMAL,
                               d->exponent, metric_strings[i][2]),
                           "WriteMetricMember", err, errlen) != 0)
            return -1;
    }
    /* Score-P: the strictly synchronous metrics are one sampling set of class CPU, recorded
     * at every enter and leave of every location. */
    if (set->strict_count &&
        sp_trace_check(OTF2_GlobalDefWriter_WriteMetricClass(
                           gw, 0, (uint8_t)set->strict_count, members,
                           OTF2_METRIC_SYNCHRONOUS_STRICT, OTF2_RECORDER_KIND_CPU),
                       "WriteMetricClass", err, errlen) != 0)
        return -1;
    uint32_t per_process = set->count - set->strict_count;
    if (!per_process)
        return 0;
    /* The per-process ones: a synchronous, abstract sampling set whose instance per process
     * is recorded by the process's first location, scoped to the process. */
    if (sp_trace_check(OTF2_GlobalDefWriter_WriteMetricClass(
                           gw, 1, (uint8_t)per_process, members + set->strict_count,
                           OTF2_METRIC_SYNCHRONOUS, OTF2_RECORDER_KIND_ABSTRACT),
                       "WriteMetricClass", err, errlen) != 0)
        return -1;
    for (uint32_t r = 0; r < u->rank_count; r++) {
        const sp_unified_rank *rank = &u->ranks[r];
        if (!rank->location_count)
            continue;
        if (sp_trace_check(OTF2_GlobalDefWriter_WriteMetricInstance(
                               gw, process_instance(rank->rank), 1, rank->locations[0].id,
                               OTF2_SCOPE_LOCATION_GROUP, rank->rank),
                           "WriteMetricInstance", err, errlen) != 0)
            return -1;
    }
    return 0;
}
