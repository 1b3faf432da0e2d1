/* Score-P's PAPI metric source (SCOREP_METRIC_PAPI, ..._PER_PROCESS). libpapi is loaded
 * with dlopen when PAPI metrics are asked for, never at build time: scorep works without
 * it. An event PAPI cannot count here (no hardware counters in a virtual machine, an
 * unknown name, no libpapi at all) is one line on stderr naming it and why; the run goes on
 * without it. Values are PAPI's counts since the location's event set started. */
#include "core/measurement.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The few PAPI functions used, looked up by name (their C signatures from papi.h). */
typedef struct {
    void *library;
    int major; /* the PAPI version the library was initialised with */
    int (*library_init)(int);
    int (*thread_init)(unsigned long (*)(void));
    int (*event_name_to_code)(const char *, int *);
    int (*query_event)(int);
    int (*create_eventset)(int *);
    int (*add_event)(int, int);
    int (*start)(int);
    int (*read)(int, long long *);
    int (*stop)(int, long long *);
    const char *(*strerror)(int);
} papi_api;

/* Loaded once per process and kept (PAPI cannot be initialised twice); guarded by `once`. */
static papi_api papi;
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define PAPI_OK 0
#define PAPI_NULL (-1)

static unsigned long thread_id(void)
{
    return (unsigned long)pthread_self();
}

static void load(void)
{
    static const struct {
        const char *soname;
        int major;
    } candidates[] = {{"libpapi.so.7.1", 7}, {"libpapi.so.7.0", 7}, {"libpapi.so.7", 7},
                      {"libpapi.so.6.0", 6}, {"libpapi.so.6", 6},   {"libpapi.so.5", 5},
                      {"libpapi.so", 0}};
    char first_error[160] = "";
    for (unsigned i = 0; i < sizeof candidates / sizeof candidates[0] && !papi.library; i++) {
        papi.library = dlopen(candidates[i].soname, RTLD_NOW | RTLD_LOCAL);
        papi.major = candidates[i].major;
        const char *why = papi.library ? NULL : dlerror();
        if (why && !first_error[0])
            snprintf(first_error, sizeof first_error, "%s", why);
    }
    if (!papi.library) {
        snprintf(load_error, sizeof load_error,
                 "libpapi could not be loaded (%s; Debian: apt-get install libpapi-dev)",
                 first_error[0] ? first_error : "not found");
        return;
    }
#define SYMBOL(field, name)                                                                    \
    *(void **)&papi.field = dlsym(papi.library, name);                                          \
    if (!papi.field) {                                                                          \
        snprintf(load_error, sizeof load_error, "libpapi lacks %s", name);                      \
        return;                                                                                 \
    }
    SYMBOL(library_init, "PAPI_library_init")
    SYMBOL(thread_init, "PAPI_thread_init")
    SYMBOL(event_name_to_code, "PAPI_event_name_to_code")
    SYMBOL(query_event, "PAPI_query_event")
    SYMBOL(create_eventset, "PAPI_create_eventset")
    SYMBOL(add_event, "PAPI_add_event")
    SYMBOL(start, "PAPI_start")
    SYMBOL(read, "PAPI_read")
    SYMBOL(stop, "PAPI_stop")
    SYMBOL(strerror, "PAPI_strerror")
#undef SYMBOL
    /* PAPI_library_init wants the version the caller was built for (PAPI_VER_CURRENT, the
     * major and minor version in the top bytes); without papi.h it is tried by soname. */
    int majors[] = {papi.major, 7, 6, 5};
    int version = -1;
    for (unsigned i = 0; i < 4 && version < 0; i++) {
        if (majors[i] <= 0)
            continue;
        int asked = majors[i] << 24;
        int got = papi.library_init(asked);
        if (got > 0 && ((unsigned)got & 0xffff0000u) == (unsigned)asked)
            version = got;
    }
    if (version < 0) {
        snprintf(load_error, sizeof load_error, "PAPI_library_init failed (unknown version)");
        return;
    }
    if (papi.thread_init(thread_id) != PAPI_OK) {
        snprintf(load_error, sizeof load_error, "PAPI_thread_init failed");
        return;
    }
    load_error[0] = '\0';
}

/* The events by definition code. */
static int events[SP_MAX_METRICS];
static uint32_t event_count;

static int papi_begin(const sp_metric_request *requests, size_t count, char *err, size_t errlen)
{
    snprintf(load_error, sizeof load_error, "not loaded");
    (void)pthread_once(&once, load);
    event_count = 0;
    for (size_t i = 0; i < count; i++) {
        const char *variable = requests[i].per_process ? "SCOREP_METRIC_PAPI_PER_PROCESS"
                                                       : "SCOREP_METRIC_PAPI";
        const char *name = requests[i].name;
        if (load_error[0]) {
            sp_metric_warn("%s: '%s' is not recorded: %s", variable, name, load_error);
            continue;
        }
        int code = 0;
        int rc = papi.event_name_to_code(name, &code);
        if (rc != PAPI_OK) {
            sp_metric_warn("%s: '%s' is not recorded: PAPI does not know this event (%s)",
                           variable, name, papi.strerror(rc));
            continue;
        }
        /* Can it be counted here, alone in an event set of this thread? */
        int set = PAPI_NULL;
        rc = papi.query_event(code);
        if (rc == PAPI_OK && (rc = papi.create_eventset(&set)) == PAPI_OK &&
            (rc = papi.add_event(set, code)) == PAPI_OK && (rc = papi.start(set)) == PAPI_OK) {
            long long ignored[1];
            papi.stop(set, ignored);
        }
        if (rc != PAPI_OK) {
            sp_metric_warn("%s: '%s' is not recorded: PAPI cannot count it on this machine (%s; "
                           "virtual machines often have no hardware counters)",
                           variable, name, papi.strerror(rc));
            continue;
        }
        sp_metric_def def = {.type = SP_METRIC_TYPE_PAPI, .mode = SP_METRIC_ACCUMULATED_START,
                             .source = SP_METRIC_SOURCE_PAPI,
                             .per_process = requests[i].per_process, .code = event_count};
        snprintf(def.name, sizeof def.name, "%s", name);
        snprintf(def.unit, sizeof def.unit, "#");
        if (event_count >= SP_MAX_METRICS || sp_metric_define(&def, err, errlen) != 0)
            return sp_error(err, errlen, "%s: too many metrics", variable);
        events[event_count++] = code;
    }
    return 0;
}

typedef struct {
    int set[2];
    long long values[SP_MAX_METRICS];
} papi_state;

static void *papi_location_open(bool first_location)
{
    papi_state *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    const sp_metric_set *m = sp_measurement_metrics();
    for (int k = 0; k < 2; k++) {
        st->set[k] = PAPI_NULL;
        uint32_t n = m->n[SP_METRIC_SOURCE_PAPI][k];
        if (!n || (k == 1 && !first_location) || papi.create_eventset(&st->set[k]) != PAPI_OK) {
            st->set[k] = PAPI_NULL;
            continue;
        }
        uint32_t first = m->first[SP_METRIC_SOURCE_PAPI][k];
        for (uint32_t i = 0; i < n; i++)
            (void)papi.add_event(st->set[k], events[m->defs[first + i].code]);
        if (papi.start(st->set[k]) != PAPI_OK)
            st->set[k] = PAPI_NULL;
    }
    return st;
}

static void papi_read(void *state, bool per_process, uint64_t own_ns, uint64_t *values)
{
    (void)own_ns; /* counters, not CPU time */
    papi_state *st = state;
    uint32_t n = sp_measurement_metrics()->n[SP_METRIC_SOURCE_PAPI][per_process];
    if (st && st->set[per_process] != PAPI_NULL &&
        papi.read(st->set[per_process], st->values) == PAPI_OK) {
        for (uint32_t i = 0; i < n; i++)
            values[i] = (uint64_t)st->values[i];
        return;
    }
    memset(values, 0, n * sizeof *values);
}

static void papi_location_close(void *state)
{
    /* Event sets belong to their threads, which may be gone: they are left to PAPI. */
    free(state);
}

static const sp_metric_source_ops papi_source = {
    .id = SP_METRIC_SOURCE_PAPI,
    .begin = papi_begin,
    .location_open = papi_location_open,
    .read = papi_read,
    .location_close = papi_location_close,
};

__attribute__((constructor)) static void register_papi(void)
{
    (void)sp_metric_source_register(&papi_source);
}
