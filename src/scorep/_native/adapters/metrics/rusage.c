/* Score-P's resource usage metric source (SCOREP_METRIC_RUSAGE, ..._PER_PROCESS): getrusage
 * at every enter and leave. Names, units, modes and exponents are Score-P's
 * (scorep_metric_rusage.c): ru_utime in microseconds ("s", 10^-6), ru_maxrss in KiB
 * ("Bytes", 2^10), counts as "#". Per thread (RUSAGE_THREAD) for the metrics every location
 * records; for the per-process ones the whole process (RUSAGE_SELF), read by its first
 * location. */
#include "core/measurement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static const struct {
    const char *name, *unit, *description;
    sp_metric_mode mode;
    bool binary;
    int8_t exponent;
} known[] = {
    {"ru_utime", "s", "user CPU time used", SP_METRIC_ACCUMULATED_START, false, -6},
    {"ru_stime", "s", "system CPU time used", SP_METRIC_ACCUMULATED_START, false, -6},
    {"ru_maxrss", "Bytes", "maximum resident set size", SP_METRIC_ABSOLUTE_NEXT, true, 10},
    {"ru_ixrss", "Bytes", "integral shared memory size", SP_METRIC_ACCUMULATED_START, true, 10},
    {"ru_idrss", "Bytes", "integral unshared data size", SP_METRIC_ACCUMULATED_START, true, 10},
    {"ru_isrss", "Bytes", "integral unshared stack size", SP_METRIC_ACCUMULATED_START, true, 10},
    {"ru_minflt", "#", "page reclaims (soft page faults)", SP_METRIC_ACCUMULATED_START, false, 0},
    {"ru_majflt", "#", "page faults (hard page faults)", SP_METRIC_ACCUMULATED_START, false, 0},
    {"ru_nswap", "#", "number of swaps", SP_METRIC_ACCUMULATED_START, false, 0},
    {"ru_inblock", "#", "block input operations", SP_METRIC_ACCUMULATED_START, false, 0},
    {"ru_oublock", "#", "block output operations", SP_METRIC_ACCUMULATED_START, false, 0},
    {"ru_msgsnd", "#", "IPC messages sent", SP_METRIC_ACCUMULATED_START, false, 0},
    {"ru_msgrcv", "#", "IPC messages received", SP_METRIC_ACCUMULATED_START, false, 0},
    {"ru_nsignals", "#", "signals received", SP_METRIC_ACCUMULATED_START, false, 0},
    {"ru_nvcsw", "#", "voluntary context switches", SP_METRIC_ACCUMULATED_START, false, 0},
    {"ru_nivcsw", "#", "involuntary context switches", SP_METRIC_ACCUMULATED_START, false, 0},
};
#define KNOWN (sizeof known / sizeof known[0])

static int define(uint32_t code, bool per_process, char *err, size_t errlen)
{
    sp_metric_def def = {.type = SP_METRIC_TYPE_RUSAGE, .mode = (uint8_t)known[code].mode,
                         .source = SP_METRIC_SOURCE_RUSAGE, .binary = known[code].binary,
                         .exponent = known[code].exponent, .per_process = per_process,
                         .code = code};
    snprintf(def.name, sizeof def.name, "%s", known[code].name);
    snprintf(def.unit, sizeof def.unit, "%s", known[code].unit);
    snprintf(def.description, sizeof def.description, "%s", known[code].description);
    return sp_metric_define(&def, err, errlen);
}

static int rusage_begin(const sp_metric_request *requests, size_t count, char *err,
                        size_t errlen)
{
    for (size_t i = 0; i < count; i++) {
        const char *name = requests[i].name;
        if (strcmp(name, "all") == 0) {
            for (uint32_t k = 0; k < KNOWN; k++)
                if (define(k, requests[i].per_process, err, errlen) != 0)
                    return -1;
            continue;
        }
        uint32_t code = 0;
        while (code < KNOWN && strcmp(known[code].name, name) != 0)
            code++;
        if (code == KNOWN)
            return sp_error(err, errlen,
                            "SCOREP_METRIC_RUSAGE%s: unknown resource usage metric '%s' "
                            "(ru_utime, ru_stime, ru_maxrss, ru_minflt, ru_majflt, ru_nvcsw, "
                            "ru_nivcsw, ... or all; see man getrusage)",
                            requests[i].per_process ? "_PER_PROCESS" : "", name);
        if (define(code, requests[i].per_process, err, errlen) != 0)
            return -1;
    }
    return 0;
}

static uint64_t field(const struct rusage *ru, uint32_t code)
{
    switch (code) {
    case 0: return (uint64_t)ru->ru_utime.tv_sec * 1000000u + (uint64_t)ru->ru_utime.tv_usec;
    case 1: return (uint64_t)ru->ru_stime.tv_sec * 1000000u + (uint64_t)ru->ru_stime.tv_usec;
    case 2: return (uint64_t)ru->ru_maxrss;
    case 3: return (uint64_t)ru->ru_ixrss;
    case 4: return (uint64_t)ru->ru_idrss;
    case 5: return (uint64_t)ru->ru_isrss;
    case 6: return (uint64_t)ru->ru_minflt;
    case 7: return (uint64_t)ru->ru_majflt;
    case 8: return (uint64_t)ru->ru_nswap;
    case 9: return (uint64_t)ru->ru_inblock;
    case 10: return (uint64_t)ru->ru_oublock;
    case 11: return (uint64_t)ru->ru_msgsnd;
    case 12: return (uint64_t)ru->ru_msgrcv;
    case 13: return (uint64_t)ru->ru_nsignals;
    case 14: return (uint64_t)ru->ru_nvcsw;
    default: return (uint64_t)ru->ru_nivcsw;
    }
}

/* A thread's CPU times as the program spent them, per kind (RUSAGE_THREAD, RUSAGE_SELF): the
 * kernel's values less the measurement's own reads. A read is a system call, so its cost is
 * taken from the system time first and from the user time only beyond that: with tick-based
 * accounting (no CONFIG_VIRT_CPU_ACCOUNTING) the kernel splits a thread's whole run time by
 * the share of ticks that found it in the kernel, so the reads' part is in both. Computed on
 * the totals since the location began (the split moves in lumps of ticks: an increment of
 * one of the two alone says nothing about the reads), and reported only ever growing. */
typedef struct {
    bool started;
    uint64_t utime0, stime0, own0; /* at the first read: µs, µs, ns */
    uint64_t utime, stime;         /* reported, since the first read (µs) */
} rusage_times;

typedef struct {
    rusage_times kind[2];
} rusage_state;

static void *rusage_location_open(bool first_location)
{
    (void)first_location;
    return calloc(1, sizeof(rusage_state));
}

static void rusage_location_close(void *state)
{
    free(state);
}

static void program_times(rusage_times *t, const struct rusage *ru, uint64_t own_ns)
{
    uint64_t utime = field(ru, 0), stime = field(ru, 1);
    if (!t->started) {
        *t = (rusage_times){.started = true, .utime0 = utime, .stime0 = stime, .own0 = own_ns};
        return;
    }
    uint64_t u = utime > t->utime0 ? utime - t->utime0 : 0;
    uint64_t s = stime > t->stime0 ? stime - t->stime0 : 0;
    uint64_t own = (own_ns - t->own0) / 1000u;
    uint64_t program = u + s > own ? u + s - own : 0;
    uint64_t program_s = s > own ? s - own : 0;
    if (program_s > t->stime)
        t->stime = program_s;
    if (program > t->stime && program - t->stime > t->utime)
        t->utime = program - t->stime;
}

static void rusage_read(void *state, bool per_process, uint64_t own_ns, uint64_t *values)
{
    const sp_metric_set *set = sp_measurement_metrics();
    uint32_t first = set->first[SP_METRIC_SOURCE_RUSAGE][per_process];
    uint32_t n = set->n[SP_METRIC_SOURCE_RUSAGE][per_process];
    struct rusage ru;
    if (getrusage(per_process ? RUSAGE_SELF : RUSAGE_THREAD, &ru) != 0)
        memset(&ru, 0, sizeof ru);
    rusage_times *t = state ? &((rusage_state *)state)->kind[per_process] : NULL;
    if (t)
        program_times(t, &ru, own_ns);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t code = set->defs[first + i].code;
        values[i] = t && code == 0   ? t->utime0 + t->utime
                    : t && code == 1 ? t->stime0 + t->stime
                                     : field(&ru, code);
    }
}

/* ru_utime and ru_stime are in microseconds and change in ticks (1-10 ms) or at context
 * switches; the counts (faults, switches) change by a few at most within a microsecond. */
static const sp_metric_source_ops rusage_source = {
    .id = SP_METRIC_SOURCE_RUSAGE,
    .begin = rusage_begin,
    .location_open = rusage_location_open,
    .read = rusage_read,
    .location_close = rusage_location_close,
    .same_within_ns = 1000,
};

__attribute__((constructor)) static void register_rusage(void)
{
    (void)sp_metric_source_register(&rusage_source);
}
