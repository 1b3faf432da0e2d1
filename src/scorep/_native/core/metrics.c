/* The metrics of the running measurement: the registered sources define them at the start,
 * every location reads them at its enters and leaves (core/metrics.h). */
#include "core/core_internal.h"
#include "core/metrics.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The registered sources, by id. Filled by constructors before any measurement; never
 * changed afterwards, so the event path reads it without a lock. */
static const sp_metric_source_ops *sources[SP_METRIC_SOURCE_COUNT];

SP_TLS sp_python_memory sp_thread_memory;

int sp_metric_source_register(const sp_metric_source_ops *ops)
{
    if ((unsigned)ops->id >= SP_METRIC_SOURCE_COUNT || sources[ops->id])
        return -1;
    sources[ops->id] = ops;
    return 0;
}

void sp_metric_warn(const char *fmt, ...)
{
    if (sp_meas.config.quiet_warnings)
        return;
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    sp_measurement_quiet_begin();
    fprintf(stderr, "scorep: %s\n", text);
    fflush(stderr);
    sp_measurement_quiet_end();
}

/* Definitions arrive per source (strict ones, then per-process ones of that source); they
 * are kept apart and put in order (all strict, then all per-process) when every source has
 * defined its own. */
static sp_metric_def pending[2][SP_MAX_METRICS];
static uint32_t pending_count[2];

int sp_metric_define(const sp_metric_def *def, char *err, size_t errlen)
{
    if (pending_count[0] + pending_count[1] >= SP_MAX_METRICS)
        return sp_error(err, errlen, "more than %d metrics requested (%s is one too many)",
                        SP_MAX_METRICS, def->name);
    pending[def->per_process][pending_count[def->per_process]++] = *def;
    return 0;
}

/* ---- the Python allocation counters (the core's own source) ----------------------------- */

int sp_metric_define_byte_counters(const sp_metric_request *requests, size_t count,
                                   const sp_metric_byte_counter *counters, uint32_t n,
                                   sp_metric_source_id source, const char *kind, char *err,
                                   size_t errlen)
{
    for (size_t i = 0; i < count; i++) {
        uint32_t code = n;
        for (uint32_t k = 0; k < n; k++)
            if (strcmp(requests[i].name, counters[k].name) == 0)
                code = k;
        if (code == n) {
            char names[256] = "";
            size_t used = 0;
            for (uint32_t k = 0; k < n && used < sizeof names; k++)
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
                                         k ? ", " : "", counters[k].name);
            return sp_error(err, errlen, "unknown %s metric '%s' (%s)", kind, requests[i].name,
                            names);
        }
        sp_metric_def def = {.type = SP_METRIC_TYPE_OTHER, .mode = SP_METRIC_ACCUMULATED_START,
                             .source = (uint8_t)source,
                             .per_process = requests[i].per_process, .code = code};
        snprintf(def.name, sizeof def.name, "%s", counters[code].name);
        snprintf(def.unit, sizeof def.unit, "Bytes");
        snprintf(def.description, sizeof def.description, "%s", counters[code].description);
        if (sp_metric_define(&def, err, errlen) != 0)
            return -1;
    }
    return 0;
}

static int python_begin(const sp_metric_request *requests, size_t count, char *err,
                        size_t errlen)
{
    static const sp_metric_byte_counter known[] = {
        {"python_allocated", "bytes allocated by the Python allocators (PyMem, PyObject)"},
        {"python_freed", "bytes freed by the Python allocators (PyMem, PyObject)"},
    };
    return sp_metric_define_byte_counters(requests, count, known, 2, SP_METRIC_SOURCE_PYTHON,
                                          "Python memory", err, errlen);
}

static void python_read(void *state, bool per_process, uint64_t own_ns, uint64_t *values)
{
    (void)state;
    (void)own_ns;
    const sp_metric_set *set = &sp_meas.metrics;
    uint32_t first = set->first[SP_METRIC_SOURCE_PYTHON][per_process];
    uint32_t n = set->n[SP_METRIC_SOURCE_PYTHON][per_process];
    for (uint32_t i = 0; i < n; i++)
        values[i] = set->defs[first + i].code == 0 ? sp_thread_memory.allocated
                                                   : sp_thread_memory.freed;
}

static const sp_metric_source_ops python_source = {
    .id = SP_METRIC_SOURCE_PYTHON,
    .begin = python_begin,
    .read = python_read,
};

__attribute__((constructor)) static void register_python_source(void)
{
    (void)sp_metric_source_register(&python_source);
}

/* ---- the measurement's life cycle --------------------------------------------------------- */

int sp_metrics_start(sp_measurement *m, const sp_metric_request *requests, size_t count,
                     char *err, size_t errlen)
{
    sp_metric_set *set = &m->metrics;
    memset(set, 0, sizeof *set); /* the previous measurement's samples went at its stop */
    pending_count[0] = pending_count[1] = 0;
    if (!count)
        return 0;
    uint32_t first[SP_METRIC_SOURCE_COUNT][2];
    for (unsigned s = 0; s < SP_METRIC_SOURCE_COUNT; s++) {
        size_t mine = 0;
        for (size_t i = 0; i < count; i++)
            mine += requests[i].source == s;
        first[s][0] = pending_count[0];
        first[s][1] = pending_count[1];
        if (!mine)
            continue;
        if (!sources[s])
            return sp_error(err, errlen, "this scorep has no metric source %u", s);
        sp_metric_request *own = calloc(mine, sizeof *own);
        if (!own)
            return sp_error(err, errlen, "out of memory while starting the metrics");
        size_t k = 0;
        for (size_t i = 0; i < count; i++)
            if (requests[i].source == s)
                own[k++] = requests[i];
        int status = sources[s]->begin ? sources[s]->begin(own, mine, err, errlen) : 0;
        free(own);
        if (status != 0)
            return -1;
        set->n[s][0] = pending_count[0] - first[s][0];
        set->n[s][1] = pending_count[1] - first[s][1];
    }
    set->strict_count = pending_count[0];
    for (uint32_t k = 0; k < 2; k++)
        for (uint32_t i = 0; i < pending_count[k]; i++)
            set->defs[set->count++] = pending[k][i];
    for (unsigned s = 0; s < SP_METRIC_SOURCE_COUNT; s++) {
        set->first[s][0] = first[s][0];
        set->first[s][1] = set->strict_count + first[s][1];
    }
    return 0;
}

static void samples_free(sp_metric_samples *s)
{
    free(s->column);
    free(s->time_ns);
    free(s->values);
    memset(s, 0, sizeof *s);
}

int sp_metric_samples_set(const sp_metric_sample_column *columns, uint32_t ncolumns,
                          const uint64_t *time_ns, const uint64_t *values, uint64_t count,
                          char *err, size_t errlen)
{
    sp_metric_samples *s = &sp_meas.metrics.samples;
    if (!sp_measurement_running())
        return sp_error(err, errlen, "no measurement is running");
    if (sp_meas.metrics.count + ncolumns > 255)
        return sp_error(err, errlen, "too many metrics");
    samples_free(s);
    if (!ncolumns || !count)
        return 0;
    s->column = malloc(ncolumns * sizeof *s->column);
    s->time_ns = malloc(count * sizeof *s->time_ns);
    s->values = malloc(count * ncolumns * sizeof *s->values);
    if (!s->column || !s->time_ns || !s->values) {
        samples_free(s);
        return sp_error(err, errlen, "out of memory for %llu samples", (unsigned long long)count);
    }
    memcpy(s->column, columns, ncolumns * sizeof *s->column);
    memcpy(s->time_ns, time_ns, count * sizeof *s->time_ns);
    memcpy(s->values, values, count * ncolumns * sizeof *s->values);
    s->columns = ncolumns;
    s->count = count;
    return 0;
}

void sp_metrics_stop(sp_measurement *m)
{
    samples_free(&m->metrics.samples);
    bool used[SP_METRIC_SOURCE_COUNT] = {false};
    for (uint32_t i = 0; i < m->metrics.count; i++)
        used[m->metrics.defs[i].source] = true;
    for (unsigned s = 0; s < SP_METRIC_SOURCE_COUNT; s++)
        if (used[s] && sources[s]->end)
            sources[s]->end();
    m->metrics.count = m->metrics.strict_count = 0;
}

/* ---- locations ------------------------------------------------------------------------------ */

bool sp_metrics_own(const sp_location *loc)
{
    return loc->metrics && loc->metrics->owner == (unsigned long)pthread_self();
}

static inline void read_source(sp_location_metrics *lm, const sp_metric_set *set, unsigned s,
                               bool per_process, uint64_t time)
{
    uint64_t last = lm->read_at[s][per_process];
    if (last && time != SP_METRICS_READ_ALL && time >= last &&
        time - last < set->same_within_ticks[s])
        return;
    sources[s]->read(lm->source_state[s], per_process, lm->own_ns,
                     &lm->now[set->first[s][per_process]]);
    lm->own_ns += set->read_cost_ns[s][per_process];
    lm->read_at[s][per_process] = time == SP_METRICS_READ_ALL ? sp_clock_now() : time;
}

void sp_metrics_read(sp_location *loc, uint64_t time)
{
    sp_location_metrics *lm = loc->metrics;
    const sp_metric_set *set = &sp_meas.metrics;
    if (__builtin_expect(lm->retired, 0))
        return;
    for (unsigned s = 0; s < SP_METRIC_SOURCE_COUNT; s++) {
        if (set->n[s][0])
            read_source(lm, set, s, false, time);
        if (set->n[s][1] && lm->count > set->strict_count)
            read_source(lm, set, s, true, time);
    }
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The CPU time one read of each source costs this thread, as benchmarks measure a cost: the
 * least of a few batches of back-to-back reads (an interrupt or a tick inflates a batch,
 * nothing makes one cheaper), less the same batches' clock reads. A few hundred reads: well
 * under a millisecond at the start. */
static void calibrate(sp_location_metrics *lm, sp_metric_set *set)
{
    enum { BATCHES = 5, READS = 32 };
    uint64_t values[SP_MAX_METRICS];
    uint64_t ticks0 = sp_clock_now(), ns0 = sp_clock_monotonic_ns();
    uint64_t clock_only = UINT64_MAX;
    for (int b = 0; b < BATCHES; b++) {
        uint64_t t0 = thread_cpu_ns(), t1 = thread_cpu_ns();
        if (t1 - t0 < clock_only)
            clock_only = t1 - t0;
    }
    for (unsigned s = 0; s < SP_METRIC_SOURCE_COUNT; s++)
        for (int k = 0; k < 2; k++) {
            if (!set->n[s][k] || (k && lm->count <= set->strict_count))
                continue;
            uint64_t best = UINT64_MAX;
            for (int b = 0; b < BATCHES; b++) {
                uint64_t t0 = thread_cpu_ns();
                for (int i = 0; i < READS; i++)
                    sources[s]->read(lm->source_state[s], k, 0, values);
                uint64_t spent = thread_cpu_ns() - t0;
                if (spent < best)
                    best = spent;
            }
            set->read_cost_ns[s][k] = best > clock_only ? (best - clock_only) / READS : 0;
        }
    uint64_t ticks = sp_clock_now() - ticks0, ns = sp_clock_monotonic_ns() - ns0;
    for (unsigned s = 0; s < SP_METRIC_SOURCE_COUNT; s++)
        if (sources[s])
            set->same_within_ticks[s] =
                ns ? (uint64_t)((double)sources[s]->same_within_ns * (double)ticks / (double)ns)
                   : sources[s]->same_within_ns;
    set->calibrated = true;
}

int sp_metrics_location_open(sp_location *loc)
{
    const sp_metric_set *set = &sp_meas.metrics;
    if (!set->count)
        return 0;
    sp_location_metrics *lm = calloc(1, sizeof *lm);
    if (!lm)
        return -1;
    loc->metrics = lm;
    lm->owner = (unsigned long)pthread_self();
    /* Score-P: per-process metrics are recorded by the process's first location. */
    lm->count = loc->is_main ? set->count : set->strict_count;
    for (unsigned s = 0; s < SP_METRIC_SOURCE_COUNT; s++)
        if ((set->n[s][0] || set->n[s][1]) && sources[s]->location_open)
            lm->source_state[s] = sources[s]->location_open(loc->is_main);
    if (sp_metrics_grow(loc) != 0)
        return -1;
    /* The first location calibrates (the measurement's start, before other threads have
     * locations); the others use its figures. */
    if (loc->is_main && !sp_meas.metrics.calibrated)
        calibrate(lm, &sp_meas.metrics);
    sp_metrics_read(loc, SP_METRICS_READ_ALL);
    memcpy(lm->base, lm->now, sizeof lm->base);
    return 0;
}

int sp_metrics_grow(sp_location *loc)
{
    sp_location_metrics *lm = loc->metrics;
    if (!lm || lm->start_rows >= loc->capacity)
        return 0;
    uint64_t *start = realloc(lm->start, (size_t)loc->capacity * SP_MAX_METRICS * sizeof *start);
    if (!start)
        return -1;
    lm->start = start;
    lm->start_rows = loc->capacity;
    return 0;
}

static void close_sources(sp_location_metrics *lm)
{
    for (unsigned s = 0; s < SP_METRIC_SOURCE_COUNT; s++) {
        if (lm->source_state[s] && sources[s] && sources[s]->location_close)
            sources[s]->location_close(lm->source_state[s]);
        lm->source_state[s] = NULL;
    }
}

void sp_metrics_location_retire(sp_location *loc)
{
    sp_location_metrics *lm = loc->metrics;
    if (!lm || lm->retired || !sp_metrics_own(loc))
        return;
    /* Thousands of short threads must not keep a perf descriptor group each. */
    sp_metrics_read(loc, SP_METRICS_READ_ALL);
    close_sources(lm);
    lm->retired = true;
}

void sp_metrics_location_free(sp_location *loc)
{
    sp_location_metrics *lm = loc->metrics;
    if (!lm)
        return;
    close_sources(lm);
    free(lm->start);
    free(lm);
    loc->metrics = NULL;
}
