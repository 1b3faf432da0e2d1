/* Score-P's resource usage metric source (SCOREP_METRIC_RUSAGE, ..._PER_PROCESS): getrusage
 * at every enter and leave. Names, units, modes and exponents are Score-P's
 * (scorep_metric_rusage.c): ru_utime in microseconds ("s", 10^-6), ru_maxrss in KiB
 * ("Bytes", 2^10), counts as "#". Per thread (RUSAGE_THREAD) for the metrics every location
 * records; for the per-process ones the whole process (RUSAGE_SELF), read by its first
 * location. */
#include "core/measurement.h"

#include <stdio.h>
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

static void rusage_read(void *state, bool per_process, uint64_t *values)
{
    (void)state;
    const sp_metric_set *set = &sp_meas.metrics;
    uint32_t first = set->first[SP_METRIC_SOURCE_RUSAGE][per_process];
    uint32_t n = set->n[SP_METRIC_SOURCE_RUSAGE][per_process];
    struct rusage ru;
    if (getrusage(per_process ? RUSAGE_SELF : RUSAGE_THREAD, &ru) != 0)
        memset(&ru, 0, sizeof ru);
    for (uint32_t i = 0; i < n; i++)
        values[i] = field(&ru, set->defs[first + i].code);
}

static const sp_metric_source_ops rusage_source = {
    .id = SP_METRIC_SOURCE_RUSAGE,
    .begin = rusage_begin,
    .read = rusage_read,
};

__attribute__((constructor)) static void register_rusage(void)
{
    (void)sp_metric_source_register(&rusage_source);
}
