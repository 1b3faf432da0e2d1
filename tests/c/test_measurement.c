/* The core with the trace substrate, end to end: events go in through the core API, the
 * archive is read back with the OTF2 library's reader. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "core/measurement.h"
#include "core/measurement_state.h" /* white-box: the core's own state */
#include "ctest.h"
#include "ctest_support.h"

#define MAX_LOCS 8

typedef struct {
    uint64_t locations[MAX_LOCS];
    uint64_t declared_events[MAX_LOCS];
    size_t nlocations;
    uint64_t enters[MAX_LOCS], leaves[MAX_LOCS], flushes, on_off, params;
    int depth[MAX_LOCS], max_depth;
    uint64_t last_time[MAX_LOCS];
    int order_errors;
    uint64_t program_end_status;
} read_back;

static size_t loc_index(read_back *rb, uint64_t location)
{
    for (size_t i = 0; i < rb->nlocations; i++)
        if (rb->locations[i] == location)
            return i;
    return 0;
}

static OTF2_CallbackCode on_location(void *user, OTF2_LocationRef self, OTF2_StringRef name,
                                     OTF2_LocationType type, uint64_t events,
                                     OTF2_LocationGroupRef group)
{
    (void)name, (void)type, (void)group;
    read_back *rb = user;
    if (rb->nlocations < MAX_LOCS) {
        rb->declared_events[rb->nlocations] = events;
        rb->locations[rb->nlocations++] = self;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static void saw(read_back *rb, size_t i, uint64_t time)
{
    if (time < rb->last_time[i])
        rb->order_errors++;
    rb->last_time[i] = time;
}

static OTF2_CallbackCode on_enter(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                  OTF2_AttributeList *a, OTF2_RegionRef r)
{
    (void)a, (void)r;
    read_back *rb = user;
    size_t i = loc_index(rb, loc);
    saw(rb, i, t);
    rb->enters[i]++;
    if (++rb->depth[i] > rb->max_depth)
        rb->max_depth = rb->depth[i];
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_leave(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                  OTF2_AttributeList *a, OTF2_RegionRef r)
{
    (void)a, (void)r;
    read_back *rb = user;
    size_t i = loc_index(rb, loc);
    saw(rb, i, t);
    rb->leaves[i]++;
    if (--rb->depth[i] < 0)
        rb->order_errors++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_flush(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                  OTF2_AttributeList *a, OTF2_TimeStamp stop)
{
    (void)loc, (void)a;
    read_back *rb = user;
    rb->flushes++;
    if (stop < t)
        rb->order_errors++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_on_off(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                   OTF2_AttributeList *a, OTF2_MeasurementMode mode)
{
    (void)loc, (void)t, (void)a, (void)mode;
    ((read_back *)user)->on_off++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_param(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                  OTF2_AttributeList *a, OTF2_ParameterRef p, int64_t v)
{
    (void)loc, (void)t, (void)a, (void)p;
    read_back *rb = user;
    if (v == -42)
        rb->params++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_program_end(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                        OTF2_AttributeList *a, int64_t status)
{
    (void)loc, (void)t, (void)a;
    ((read_back *)user)->program_end_status = (uint64_t)status;
    return OTF2_CALLBACK_SUCCESS;
}

static void definition_callbacks(OTF2_GlobalDefReaderCallbacks *callbacks)
{
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(callbacks, on_location);
}

static void event_callbacks(OTF2_GlobalEvtReaderCallbacks *callbacks)
{
    OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(callbacks, on_enter);
    OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(callbacks, on_leave);
    OTF2_GlobalEvtReaderCallbacks_SetBufferFlushCallback(callbacks, on_flush);
    OTF2_GlobalEvtReaderCallbacks_SetMeasurementOnOffCallback(callbacks, on_on_off);
    OTF2_GlobalEvtReaderCallbacks_SetParameterIntCallback(callbacks, on_param);
    OTF2_GlobalEvtReaderCallbacks_SetProgramEndCallback(callbacks, on_program_end);
}

static void read_archive(const char *dir, read_back *rb)
{
    memset(rb, 0, sizeof *rb);
    OTF2_Reader *reader = ctest_trace_open(dir, definition_callbacks, rb);
    if (reader)
        ctest_trace_read_events(reader, rb->locations, rb->nlocations, event_callbacks, rb);
}

static sp_config config_for(const char *dir, uint64_t memory)
{
    static const char *args[] = {"prog", "--flag"};
    sp_config c = ctest_config(dir, memory);
    c.profiling = false;
    c.program_args = args;
    c.program_argc = 2;
    return c;
}

static void *worker(void *arg)
{
    uint32_t region = *(uint32_t *)arg;
    sp_location *loc = sp_location_attach(2, "worker", true);
    CHECK(loc != NULL);
    for (int i = 0; i < 500; i++) {
        sp_enter(loc, region, 100, sp_clock_now());
        CHECK(sp_leave(loc, 100, sp_clock_now()));
    }
    return NULL;
}

static void test_trace_end_to_end(void)
{
    char dir[] = "/tmp/scorep-ctest-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    sp_config config = config_for(dir, 1 << 20); /* 4 chunks: forces flushes */
    char err[256] = "";
    CHECK(sp_measurement_start(&config, err, sizeof err) == 0);
    CHECK(sp_measurement_running());
    sp_location *main_loc = sp_location_attach(1, "main", true);
    CHECK(main_loc != NULL && main_loc->is_main);
    /* not registered and not all threads: an unknown thread is not measured */
    uint32_t f = sp_defs_new_region(&sp_meas.defs, "f", NULL, "/f.py", 1, 1, SP_PARADIGM_USER,
                                    SP_ROLE_FUNCTION, SP_REGION_PYTHON);
    uint32_t g = sp_defs_new_region(&sp_meas.defs, "g", NULL, "/f.py", 5, 5, SP_PARADIGM_USER,
                                    SP_ROLE_FUNCTION, SP_REGION_PYTHON);
    uint32_t p = sp_defs_parameter(&sp_meas.defs, "n", SP_PARAM_INT64);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, worker, &g) == 0);
    const int calls = 100000;
    for (int i = 0; i < calls; i++) {
        sp_enter(main_loc, f, 1, sp_clock_now());
        sp_enter(main_loc, g, 2, sp_clock_now());
        CHECK(sp_leave(main_loc, 2, sp_clock_now()));
        CHECK(sp_leave(main_loc, 1, sp_clock_now()));
    }
    pthread_join(thread, NULL);
    sp_parameter_int(main_loc, p, -42, sp_clock_now());
    /* A leave that skips an open frame closes it too; one that matches nothing is ignored. */
    sp_enter(main_loc, f, 1, sp_clock_now());
    sp_enter(main_loc, g, 2, sp_clock_now());
    CHECK(sp_leave(main_loc, 1, sp_clock_now()));
    CHECK(!sp_leave(main_loc, 77, sp_clock_now()));
    /* Recording off: no enters; a frame entered while on still leaves. */
    sp_enter(main_loc, f, 1, sp_clock_now());
    sp_set_recording(false, sp_clock_now());
    sp_enter(main_loc, g, 2, sp_clock_now());
    sp_leave(main_loc, 2, sp_clock_now());
    sp_leave(main_loc, 1, sp_clock_now());
    sp_set_recording(true, sp_clock_now());
    /* Left open: closed at finalize. */
    sp_enter(main_loc, f, 1, sp_clock_now());
    sp_results r;
    CHECK(sp_measurement_finalize(5, &r, err, sizeof err) == 0);
    CHECK(!sp_measurement_running());
    CHECK_EQ_U64(r.locations, 2);
    CHECK_EQ_U64(r.enters, 2 * (uint64_t)calls + 500 + 4);
    CHECK_EQ_U64(r.unmatched_leaves, 1);
    CHECK(r.trace_flushes > 0);
    CHECK(r.memory_peak_bytes <= (1 << 20) + 2 * 256 * 1024);

    read_back rb;
    read_archive(dir, &rb);
    CHECK_EQ_U64(rb.nlocations, 2);
    CHECK_EQ_U64(rb.enters[0], 2 * (uint64_t)calls + 4);
    CHECK_EQ_U64(rb.leaves[0], rb.enters[0]);
    CHECK_EQ_U64(rb.enters[1], 500);
    CHECK_EQ_U64(rb.leaves[1], 500);
    CHECK_EQ_U64(rb.max_depth, 2);
    CHECK_EQ_U64(rb.order_errors, 0);
    CHECK_EQ_U64(rb.flushes, r.trace_flushes);
    CHECK_EQ_U64(rb.on_off, 2);
    CHECK_EQ_U64(rb.params, 1);
    CHECK_EQ_U64(rb.program_end_status, 5);
    /* ProgramBegin, ProgramEnd, MeasurementOnOff and BufferFlush records count as events. */
    CHECK_EQ_U64(rb.declared_events[0], rb.enters[0] + rb.leaves[0] + 2 + 2 + 1 + rb.flushes);
    ctest_remove_tree(dir);
}

static void test_restart_and_rewind(void)
{
    for (int round = 0; round < 2; round++) {
        char dir[] = "/tmp/scorep-ctest-XXXXXX";
        CHECK(mkdtemp(dir) != NULL);
        sp_config config = config_for(dir, 16 << 20);
        char err[256] = "";
        CHECK(sp_measurement_start(&config, err, sizeof err) == 0);
        CHECK(sp_measurement_start(&config, err, sizeof err) != 0); /* one at a time */
        sp_location *loc = sp_location_attach(1, "main", true);
        uint32_t f = sp_defs_new_region(&sp_meas.defs, "f", NULL, "", 1, 1, SP_PARADIGM_USER,
                                        SP_ROLE_FUNCTION, SP_REGION_PYTHON);
        uint32_t rw = sp_defs_named_region(&sp_meas.defs, "attempt", "", 1, SP_PARADIGM_USER,
                                           SP_ROLE_FUNCTION, SP_REGION_USER);
        sp_enter(loc, f, 1, sp_clock_now());
        sp_leave(loc, 1, sp_clock_now());
        sp_rewind_begin(loc, rw, sp_clock_now());
        for (int i = 0; i < 10; i++) {
            sp_enter(loc, f, 1, sp_clock_now());
            sp_leave(loc, 1, sp_clock_now());
        }
        CHECK(sp_rewind_end(loc, rw, round == 0, sp_clock_now()));
        CHECK_EQ_U64(loc->depth, 0);
        CHECK(sp_measurement_finalize(0, NULL, err, sizeof err) == 0);
        read_back rb;
        read_archive(dir, &rb);
        /* discarded: only the first call stays, with an off/on pair; kept: everything */
        CHECK_EQ_U64(rb.enters[0], round == 0 ? 1 : 12);
        CHECK_EQ_U64(rb.on_off, round == 0 ? 2 : 0);
        CHECK_EQ_U64(rb.order_errors, 0);
        ctest_remove_tree(dir);
    }
    char err[64];
    CHECK(sp_measurement_finalize(0, NULL, err, sizeof err) != 0); /* nothing running */
}

/* ---- metrics: Metric records before every Enter and Leave --------------------------- */

typedef struct {
    uint64_t metrics, enters, leaves, bad_order;
    uint64_t last_metric_time;
    uint64_t last_values[4];
    uint64_t enter_allocated, f_deltas_wrong, f_visits;
    uint8_t count;
    OTF2_MetricRef ref;
} metric_read;

static OTF2_CallbackCode on_metric(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                   OTF2_AttributeList *a, OTF2_MetricRef metric, uint8_t n,
                                   const OTF2_Type *types, const OTF2_MetricValue *values)
{
    (void)loc, (void)a, (void)types;
    metric_read *m = user;
    m->metrics++;
    m->last_metric_time = t;
    m->count = n;
    m->ref = metric;
    for (uint8_t i = 0; i < n && i < 4; i++)
        m->last_values[i] = values[i].unsigned_int;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_metric_enter(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                         OTF2_AttributeList *a, OTF2_RegionRef r)
{
    (void)loc, (void)a, (void)r; /* f is the only region with events */
    metric_read *m = user;
    m->enters++;
    m->bad_order += m->last_metric_time != t;
    m->enter_allocated = m->last_values[1]; /* sources in order: ru_minflt, python_allocated */
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_metric_leave(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                         OTF2_AttributeList *a, OTF2_RegionRef r)
{
    (void)loc, (void)a, (void)r;
    metric_read *m = user;
    m->leaves++;
    m->bad_order += m->last_metric_time != t;
    m->f_visits++;
    m->f_deltas_wrong += m->last_values[1] - m->enter_allocated != 100;
    return OTF2_CALLBACK_SUCCESS;
}

static void metric_event_callbacks(OTF2_GlobalEvtReaderCallbacks *callbacks)
{
    OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(callbacks, on_metric_enter);
    OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(callbacks, on_metric_leave);
    OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(callbacks, on_metric);
}

static void test_metrics_end_to_end(void)
{
    char dir[] = "/tmp/scorep-ctest-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    sp_config config = config_for(dir, 1 << 20); /* small: flushes cut through metric records */
    config.profiling = true;
    const sp_metric_request requests[] = {
        {SP_METRIC_SOURCE_PYTHON, false, "python_allocated"},
        {SP_METRIC_SOURCE_RUSAGE, false, "ru_minflt"},
    };
    config.metric_requests = requests;
    config.metric_request_count = 2;
    char err[256] = "";
    CHECK(sp_measurement_start(&config, err, sizeof err) == 0);
    CHECK_EQ_U64(sp_meas.metrics.count, 2);
    sp_location *loc = sp_location_attach(1, "main", true);
    CHECK(loc != NULL && loc->metrics != NULL);
    uint32_t f = sp_defs_new_region(&sp_meas.defs, "f", NULL, "/f.py", 1, 1, SP_PARADIGM_USER,
                                    SP_ROLE_FUNCTION, SP_REGION_PYTHON);
    const int calls = 40000;
    for (int i = 0; i < calls; i++) {
        sp_enter(loc, f, 1, sp_clock_now());
        sp_thread_memory.allocated += 100; /* what the allocator hook adds */
        CHECK(sp_leave(loc, 1, sp_clock_now()));
    }
    sp_results r;
    CHECK(sp_measurement_finalize(0, &r, err, sizeof err) == 0);
    CHECK(r.trace_flushes > 0);

    metric_read m;
    memset(&m, 0, sizeof m);
    OTF2_Reader *reader = ctest_trace_open(dir, NULL, NULL);
    if (!reader)
        return;
    ctest_trace_read_events(reader, (const uint64_t[]){0}, 1, metric_event_callbacks, &m);
    /* A Metric event (class 0, both metrics) with each Enter's and Leave's time, the
     * python_allocated difference of every visit of f the 100 bytes it "allocated". */
    CHECK_EQ_U64(m.enters, (uint64_t)calls);
    CHECK_EQ_U64(m.leaves, (uint64_t)calls);
    CHECK_EQ_U64(m.metrics, 2 * (uint64_t)calls);
    CHECK_EQ_U64(m.bad_order, 0);
    CHECK_EQ_U64(m.count, 2);
    CHECK_EQ_U64(m.ref, 0);
    CHECK_EQ_U64(m.f_visits, (uint64_t)calls);
    CHECK_EQ_U64(m.f_deltas_wrong, 0);
    ctest_remove_tree(dir);
}

CTEST_MAIN(test_trace_end_to_end, test_restart_and_rewind, test_metrics_end_to_end)
