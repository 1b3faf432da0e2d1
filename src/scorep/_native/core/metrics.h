/* Metrics read at every enter and leave (Score-P's strictly synchronous metrics, and its
 * per-process synchronous ones): the definitions, the sources that read them, and the
 * values the event path hands to the substrates.
 *
 * Sources are adapters (adapters/metrics/: getrusage, perf_event_open, PAPI loaded with
 * dlopen) that register their operations from a constructor, and the core's own Python
 * allocation counters (sp_python_memory, fed by the Python adapter's allocator hook). The
 * core never names an adapter: it calls what was registered.
 *
 * Per location the values are read into loc->metrics->now; the frames' start values live
 * in loc->metrics->start (one row per stack slot). With no metric requested nothing of this
 * runs: the event path tests sp_meas.metrics.count once per event. */
#ifndef SCOREP_CORE_METRICS_H
#define SCOREP_CORE_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* Score-P's sampling sets hold at most 255 metrics; far fewer are useful at once. */
#define SP_MAX_METRICS 32

/* The OTF2 metric types of the definitions (Score-P's source types map onto them). */
typedef enum {
    SP_METRIC_TYPE_OTHER = 0, /* perf, the Python allocation counters */
    SP_METRIC_TYPE_PAPI,
    SP_METRIC_TYPE_RUSAGE,
} sp_metric_type;

/* How a value relates to the time line (OTF2's metric modes). */
typedef enum {
    SP_METRIC_ACCUMULATED_START = 0, /* a counter since some start: deltas are meaningful */
    SP_METRIC_ABSOLUTE_NEXT,         /* a level valid until the next value (max RSS) */
    /* Samples taken apart from enters and leaves (sp_metric_samples_add): */
    SP_METRIC_ABSOLUTE_POINT,        /* a level at the sample's time (RSS) */
    SP_METRIC_ABSOLUTE_LAST,         /* a level over the interval ending there (CPU %) */
    SP_METRIC_RELATIVE_LAST,         /* what happened in the interval ending there (bytes) */
} sp_metric_mode;

/* The sources, in the order their metrics are numbered. */
typedef enum {
    SP_METRIC_SOURCE_RUSAGE = 0,
    SP_METRIC_SOURCE_PERF,
    SP_METRIC_SOURCE_PAPI,
    SP_METRIC_SOURCE_PYTHON,
    SP_METRIC_SOURCE_NATIVE, /* malloc & co. of extension modules (adapters/memory) */
    SP_METRIC_SOURCE_COUNT,
} sp_metric_source_id;

typedef struct sp_metric_def {
    char name[64];
    char unit[16];          /* the scale-free unit: "s", "Bytes", "#" */
    char description[160];
    uint8_t type;           /* sp_metric_type */
    uint8_t mode;           /* sp_metric_mode */
    uint8_t source;         /* sp_metric_source_id */
    bool binary;            /* the exponent is to base 2 (else 10) */
    int8_t exponent;        /* value * base^exponent is in `unit` (ru_utime: 10^-6 s) */
    bool per_process;       /* recorded by the process's first location only */
    uint32_t code;          /* the source's own number for it */
} sp_metric_def;

/* What the user asked for: one request per metric name and source. */
typedef struct sp_metric_request {
    uint8_t source;   /* sp_metric_source_id */
    bool per_process; /* SCOREP_METRIC_*_PER_PROCESS */
    const char *name;
} sp_metric_request;

/* Samples of metrics taken apart from the event path, e.g. the Jupyter kernel's resource
 * monitor: columns, and rows of values at CLOCK_MONOTONIC nanosecond times (the
 * measurement's clock). The trace writes them as Metric events of an asynchronous metric
 * class on the process's first location, in time order among its events. */
typedef struct sp_metric_sample_column {
    char name[64];
    char unit[16];
    char description[160];
    bool is_double; /* values are the bits of doubles (else unsigned integers) */
    uint8_t mode;   /* sp_metric_mode */
} sp_metric_sample_column;

typedef struct sp_metric_samples {
    uint32_t columns;
    sp_metric_sample_column *column;
    uint64_t count;
    uint64_t *time_ns; /* count, ascending */
    uint64_t *values;  /* count x columns */
} sp_metric_samples;

/* The measurement's metrics: the strictly synchronous ones (every location) first, then the
 * per-process ones (the first location only). */
typedef struct sp_metric_set {
    uint32_t count;        /* 0: no metric (the event path skips everything) */
    uint32_t strict_count; /* metrics [0, strict_count) are recorded by every location */
    sp_metric_def defs[SP_MAX_METRICS];
    /* Per source: its first metric and how many it has (strict, then per-process). */
    uint32_t first[SP_METRIC_SOURCE_COUNT][2], n[SP_METRIC_SOURCE_COUNT][2];
    sp_metric_samples samples; /* sp_metric_samples_set; columns 0: none */
    /* What one read of a source costs the reading thread, in nanoseconds of its CPU time
     * ([source][per_process]): calibrated by the first location when it opens, before its
     * first values, and not changed afterwards (the event path reads it without a lock).
     * Sources of CPU-time metrics subtract the reads' cost from them (own_ns below). */
    uint64_t read_cost_ns[SP_METRIC_SOURCE_COUNT][2];
    /* Each source's same_within_ns in the measurement clock's ticks (set with the costs). */
    uint64_t same_within_ticks[SP_METRIC_SOURCE_COUNT];
    bool calibrated;
} sp_metric_set;

/* A location's metric state: its sources' per-thread handles and the value rows. */
typedef struct sp_location_metrics {
    uint32_t count;          /* metrics this location reads (strict, + per-process on the first) */
    void *source_state[SP_METRIC_SOURCE_COUNT];
    uint64_t base[SP_MAX_METRICS]; /* at the location's start (its root's values) */
    uint64_t now[SP_MAX_METRICS];  /* the last values read */
    uint64_t *start;         /* per stack slot: the values at the frame's enter */
    /* The measurement's own CPU time on this thread so far, estimated: the calibrated cost
     * of every read made (sp_metric_set.read_cost_ns). */
    uint64_t own_ns;
    /* Per source and kind, when it was read last (the event's time in ticks; 0: never). */
    uint64_t read_at[SP_METRIC_SOURCE_COUNT][2];
    uint32_t start_rows;
    /* The thread that reads them: per-thread sources (RUSAGE_THREAD, the allocation
     * counters) can only be read there. The end of the measurement closes the frames of
     * other threads with their last values. */
    unsigned long owner;
    bool retired; /* its thread ended: `now` stays as read last */
} sp_location_metrics;

/* A metric source. Every function is optional except read. */
typedef struct sp_metric_source_ops {
    sp_metric_source_id id;
    /* Defines (sp_metric_define) the metrics it can record among the requests of its id;
     * for each it cannot, one line on stderr naming it and why (the run goes on). Returns
     * 0, or -1 with one line in err (a name the source does not know: the start fails, as
     * Score-P aborts). */
    int (*begin)(const sp_metric_request *requests, size_t count, char *err, size_t errlen);
    /* The calling thread's state (it is the location's own thread). NULL is allowed. */
    void *(*location_open)(bool first_location);
    /* Reads the source's metrics of one kind (per_process false: its strict ones) into
     * values[0 .. n). own_ns: the measurement's own CPU time on this thread so far (the
     * calibrated cost of its metric reads): a source of CPU-time metrics does not report it
     * as the program's (rusage's ru_utime/ru_stime, perf's task-clock/cpu-clock). */
    void (*read)(void *state, bool per_process, uint64_t own_ns, uint64_t *values);
    void (*location_close)(void *state);
    void (*end)(void);
    /* A read within this many nanoseconds of the same thread's previous read of the source
     * keeps that read's values instead (0: every event reads). For a source whose values
     * change by less than their unit in that time: the event then costs no system call. */
    uint32_t same_within_ns;
} sp_metric_source_ops;

/* Called from a constructor of the source's file. Returns 0, or -1 when the id is taken. */
int sp_metric_source_register(const sp_metric_source_ops *ops);

/* Inside a source's begin: appends a metric (strict or per-process by def->per_process).
 * Returns 0, or -1 with one line in err when SP_MAX_METRICS are defined already. */
SP_MUST_CHECK int sp_metric_define(const sp_metric_def *def, char *err, size_t errlen);

/* A byte counter a source offers: its name and what it counts. */
typedef struct sp_metric_byte_counter {
    const char *name;
    const char *description;
} sp_metric_byte_counter;

/* Inside a source's begin, for sources of byte counters (the Python and the native allocation
 * counters): defines each request, which must name one of counters[0 .. n), as a metric of
 * `source` in Bytes accumulated from the start, with the counter's index as its code. An
 * unknown name is an error "unknown <kind> metric 'x' (name, name, ...)". */
SP_MUST_CHECK int sp_metric_define_byte_counters(const sp_metric_request *requests, size_t count,
                                                 const sp_metric_byte_counter *counters,
                                                 uint32_t n, sp_metric_source_id source,
                                                 const char *kind, char *err, size_t errlen);

/* One warning line on stderr, "scorep: <text>", for a metric that is not recorded. */
void sp_metric_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));


/* Adds samples to the running measurement (replacing earlier ones). Returns 0, or -1 with
 * one line in err. */
SP_MUST_CHECK int sp_metric_samples_set(const sp_metric_sample_column *columns,
                                        uint32_t ncolumns, const uint64_t *time_ns,
                                        const uint64_t *values, uint64_t count, char *err,
                                        size_t errlen);

/* The core's Python allocation counters, per thread: bytes handed out and given back by
 * the Python allocators while the thread ran (the Python adapter's allocator hook adds to
 * them). Thread-local: each thread counts its own, without a lock. */
typedef struct sp_python_memory {
    uint64_t allocated;
    uint64_t freed;
} sp_python_memory;

#endif
