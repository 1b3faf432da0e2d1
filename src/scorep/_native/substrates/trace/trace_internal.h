/* What the trace substrate's files share: its state for the running measurement and the
 * raw chunk layout. Nothing outside substrates/trace/ includes this. */
#ifndef SCOREP_SUBSTRATES_TRACE_INTERNAL_H
#define SCOREP_SUBSTRATES_TRACE_INTERNAL_H

#include <otf2/otf2.h>

#include "substrates/trace/trace.h"

typedef struct sp_trace_state {
    sp_measurement *meas;
    unsigned slot;         /* this substrate's slot in sp_location.substrate */
    OTF2_Archive *archive; /* open only at the end */
    bool collective;       /* written by the whole group together */
    double ns_per_tick;    /* timestamp conversion, fixed at the end */
    /* A failed OTF2 call leaves its buffers broken: nothing may be flushed after it. */
    bool broken;
    char error[512];       /* the trace could not be written (when the profile was) */
    uint64_t spill_failures; /* flushes during the run that could not be written */
    char spill_error[256];   /* why the first one failed */
    char spill_prefix[4096]; /* "" until the experiment directory is known */
    /* The process and the thread that began the program (ProgramBegin's attributes). */
    uint64_t process_id, thread_id;
    uint32_t interrupt_name; /* the sampling event's name (global string), at the end */
} sp_trace_state;

/* The trace's attribute definitions (global ids; events use them as they are), Score-P's
 * attributes of ProgramBegin. */
enum {
    SP_TRACE_ATTRIBUTE_PROCESS_ID = 0,
    SP_TRACE_ATTRIBUTE_THREAD_ID,
    SP_TRACE_ATTRIBUTE_COUNT,
};

/* The trace of the running measurement. Global because the event path's slow paths
 * (sp_trace_next_chunk) and the chunk pool's reclaim callback carry no context, and there
 * is one measurement per process. */
extern sp_trace_state sp_trace;

typedef struct raw_chunk {
    struct raw_chunk *next;
    sp_trace_record *used_end; /* set when the chunk is full */
} raw_chunk;

_Static_assert(sizeof(raw_chunk) == SP_TRACE_CHUNK_HEADER_BYTES, "the chunk header's size");

#define CHUNK_RECORDS(c) ((sp_trace_record *)((char *)(c) + sizeof(raw_chunk)))
#define CHUNK_END(c) ((sp_trace_record *)((char *)(c) + SP_TRACE_CHUNK_SIZE))

static inline sp_trace_location *trace_location(const sp_location *loc)
{
    return (sp_trace_location *)loc->substrate[sp_trace.slot];
}

/* encode.c: raw records a record's kind takes (the record and its payload). */
unsigned sp_trace_record_length(const sp_trace_record *r);

/* waitstates.c: raw records [r, end) of one location into the wait-state builder
 * (core/waitstates_build.h), their times in ns on the group's clock by `to_ns` (NULL: they
 * are ns on it already). 0, or -1 once the builder failed. The end of a run reads its
 * records with it, and so does benchmarks/scale/wait_states_driver.c: one reading. */
struct sp_ws_builder;
SP_MUST_CHECK int sp_trace_wait_state_records(struct sp_ws_builder *b, const sp_trace_record *r,
                                              const sp_trace_record *end,
                                              int64_t (*to_ns)(void *ctx, uint64_t time),
                                              void *ctx);

/* buffer.c */
void sp_trace_retire_current_chunk(sp_trace_location *tl);
void sp_trace_spill_path(const sp_trace_location *tl, char *path, size_t size);

/* encode.c: records of one chunk into the location's OTF2 event writer. */
OTF2_ErrorCode sp_trace_encode_records(sp_trace_location *tl, const sp_trace_record *r,
                                       const sp_trace_record *end);

/* parts.c, child processes at the root: the adopted parts' event files moved into the
 * archive in `dir` (while its event files are open), their location definitions written
 * by `write` with each part's maps, and their failures for the results. */
SP_MUST_CHECK int sp_trace_adopt_events(sp_measurement *m, const char *dir, char *err,
                                        size_t errlen);
SP_MUST_CHECK int sp_trace_adopted_definitions(
    sp_measurement *m, const sp_unified *u,
    int (*write)(OTF2_DefWriter *dw, const sp_unified_maps *maps, char *err, size_t errlen),
    char *err, size_t errlen);
void sp_trace_adopted_results(sp_measurement *m, sp_results *r);

/* The latest event of any location, in CLOCK_MONOTONIC nanoseconds. */
uint64_t sp_trace_last_event_ns(const sp_measurement *m);

/* defs.c: a mapping table from local to unified ids (none for the identity). */
OTF2_ErrorCode sp_trace_write_map(OTF2_DefWriter *dw, OTF2_MappingType type,
                                  const uint32_t *map, uint32_t count);

/* io.c: I/O records into events, and the I/O definitions. */
static inline bool sp_trace_is_io_record(uint32_t kind)
{
    return kind >= SP_REC_IO_CREATE_HANDLE && kind <= SP_REC_IO_LAST;
}
unsigned sp_trace_io_record_length(uint32_t kind);
OTF2_ErrorCode sp_trace_encode_io(OTF2_EvtWriter *w, const sp_trace_record *r, uint64_t time);
/* The local mapping tables of I/O files and handles (after the other mappings). */
SP_MUST_CHECK int sp_trace_write_io_mappings(OTF2_DefWriter *dw, const sp_unified_maps *u, char *err,
                                             size_t errlen);
/* The strings the I/O definitions need beyond the unified ones, before the strings are
 * written. Returns 0, or -1 when out of memory. */
int sp_trace_intern_io_strings(sp_defs *g);
/* IoParadigm, IoRegularFile, IoHandle and IoPreCreatedHandleState definitions (after the
 * system tree and the communicators, which they refer to). */
SP_MUST_CHECK int sp_trace_write_io_definitions(OTF2_GlobalDefWriter *gw, sp_unified *u,
                                                char *err, size_t errlen);

/* metrics.c: Metric records into events, and the metric definitions. */
unsigned sp_trace_metric_record_length(uint32_t ref);
OTF2_ErrorCode sp_trace_encode_metric(OTF2_EvtWriter *w, const sp_trace_record *r, uint64_t time,
                                      uint32_t rank);
/* Samples taken apart from the event path (core/metrics.h), up to `until_ns` (CLOCK_MONOTONIC
 * ns), on the process's first location; rewind before its first record. */
OTF2_ErrorCode sp_trace_encode_samples(OTF2_EvtWriter *w, uint64_t until_ns);
void sp_trace_samples_rewind(void);
/* The strings of the metric definitions, before the strings are written; 0 or -1. */
int sp_trace_intern_metric_strings(sp_defs *g);
/* MetricMember, MetricClass and MetricInstance definitions. */
SP_MUST_CHECK int sp_trace_write_metric_definitions(OTF2_GlobalDefWriter *gw,
                                                    const sp_unified *u, char *err,
                                                    size_t errlen);
/* contexts.c: calling contexts (sampling). */
static inline bool sp_trace_is_context_record(uint32_t kind)
{
    return kind >= SP_REC_CC_ENTER && kind <= SP_REC_CC_SAMPLE;
}
/* A location's per-frame contexts when calling contexts are recorded; 0 or -1. */
int sp_trace_contexts_open(sp_trace_location *tl);
void sp_trace_contexts_free(sp_trace_location *tl);
OTF2_ErrorCode sp_trace_encode_context(OTF2_EvtWriter *w, const sp_trace_record *r,
                                       uint64_t time);
/* The interrupt generator's name, interned before the strings are written; 0 or -1. */
int sp_trace_intern_context_strings(sp_defs *g);
/* CallingContext and InterruptGenerator definitions (after the regions). */
SP_MUST_CHECK int sp_trace_write_context_definitions(OTF2_GlobalDefWriter *gw, sp_unified *u,
                                                     char *err, size_t errlen);

/* collectives.c: OTF2's collective callbacks on the group's sp_ipc. */
extern const OTF2_CollectiveCallbacks sp_trace_ipc_collectives;

/* OTF2 reports every failure on stderr by itself. While the trace is written its messages
 * are kept instead: the first one explains the failure in our one error line. */
void sp_trace_capture_otf2_messages(void);
/* Ends the capture; appends " (<OTF2's first message>)" to err when err is set. */
void sp_trace_release_otf2_messages(char *err, size_t errlen);

/* One OTF2 call that must succeed: on failure err gets "OTF2 <what> failed: ..." and the
 * archive counts as broken. Returns 0 or -1. */
SP_MUST_CHECK int sp_trace_check(OTF2_ErrorCode status, const char *what, char *err,
                                 size_t errlen);

#endif
