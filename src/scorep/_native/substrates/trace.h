/* The trace substrate: one OTF2 archive per measurement (traces.otf2, traces.def,
 * traces/<location>.evt|.def), written at the end.
 *
 * The event path does not call libotf2: it appends 16-byte raw records to the location's
 * current chunk (a few ns, against ~20 ns for an OTF2 record). Chunks come out of the
 * SCOREP_TOTAL_MEMORY budget. When the budget is used up the location writes its full
 * chunks to a spill file on disk (a flush: the pause shows in the trace as a BufferFlush
 * record) and reuses the memory. At the end the OTF2 archive is opened (collectively over
 * all MPI ranks, or by this process alone) and every location's records -- spilled ones
 * first, then those in memory -- are encoded in the order they were written. Timestamps
 * become CLOCK_MONOTONIC nanoseconds then, whatever timer recorded them. */
#ifndef SCOREP_SUBSTRATES_TRACE_H
#define SCOREP_SUBSTRATES_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <otf2/otf2.h>

#include "core/measurement.h"
#include "core/unify.h"

/* Raw chunks and the OTF2 writers' buffers are chunks of the budget. */
#define SP_TRACE_CHUNK_SIZE SP_CHUNK_SIZE

enum sp_trace_record_kind {
    SP_REC_ENTER = 1,
    SP_REC_LEAVE,
    SP_REC_PARAMETER_INT,    /* + payload: the value */
    SP_REC_PARAMETER_UINT,   /* + payload: the value */
    SP_REC_PARAMETER_STRING, /* ref: parameter, payload: the string id */
    SP_REC_MEASUREMENT_ON,
    SP_REC_MEASUREMENT_OFF,
    SP_REC_PROGRAM_BEGIN,
    SP_REC_PROGRAM_END,      /* + payload: the exit status */
    SP_REC_BUFFER_FLUSH,     /* + payload: the time the flush ended */
    /* MPI: ref is the communicator; payload a = bytes, b = peer << 32 | tag */
    SP_REC_MPI_SEND,
    SP_REC_MPI_RECV,
    SP_REC_MPI_ISEND,        /* + second payload a = request */
    SP_REC_MPI_IRECV,        /* + second payload a = request */
    SP_REC_MPI_ISEND_COMPLETE, /* payload a = request */
    SP_REC_MPI_IRECV_REQUEST,  /* payload a = request */
    SP_REC_MPI_REQUEST_TEST,   /* payload a = request */
    SP_REC_MPI_COLLECTIVE_BEGIN,
    SP_REC_MPI_COLLECTIVE_END, /* payload a = sent, b = received; second a = op, b = root */
};

typedef struct sp_trace_record {
    uint64_t time;
    uint32_t kind;
    uint32_t ref; /* region, parameter or communicator id */
} sp_trace_record;

/* Records with 64-bit values take the following one or two records as payload. */
typedef struct {
    uint64_t a;
    uint64_t b;
} sp_trace_payload;

typedef struct sp_trace {
    OTF2_Archive *archive; /* open only at the end */
    sp_measurement *meas;
    bool collective;       /* written by all MPI ranks together */
    double ns_per_tick;    /* timestamp conversion, fixed at the end */
    uint64_t errors;       /* OTF2 calls that failed */
    char first_error[256];
    uint64_t spill_failures; /* flushes during the run that could not be written */
    char spill_error[256];   /* why the first one failed */
    char spill_prefix[4096];
} sp_trace;

int sp_trace_init(sp_trace *trace, sp_measurement *meas);

/* Removes what a failed sp_trace_encode left in `dir` (traces.otf2, traces.def, traces/),
 * so that no half-written trace remains. */
void sp_trace_remove_files(const char *dir);

/* Flushes during the run write spill files into `dir` (until it is known, chunks are
 * taken over budget instead). */
void sp_trace_set_spill_dir(sp_trace *trace, const char *dir);

/* Gives the location its first chunk. */
int sp_trace_location_open(sp_trace *trace, sp_location *loc);

/* The current chunk is full: hands out the next one (flushing when the budget is used
 * up). Returns where `count` records can go. */
sp_trace_record *sp_trace_next_chunk(sp_trace *trace, sp_location *loc, unsigned count);

static inline sp_trace_record *sp_trace_reserve(sp_trace *trace, sp_location *loc,
                                                unsigned count)
{
    sp_trace_record *r = loc->trace_pos;
    if (__builtin_expect(r + count > loc->trace_end, 0))
        r = sp_trace_next_chunk(trace, loc, count);
    loc->trace_pos = r + count;
    return r;
}

static inline void sp_trace_record_put(sp_trace *trace, sp_location *loc, uint64_t time,
                                       uint32_t kind, uint32_t ref)
{
    sp_trace_record *r = sp_trace_reserve(trace, loc, 1);
    r->time = time;
    r->kind = kind;
    r->ref = ref;
}

static inline void sp_trace_record_put_value(sp_trace *trace, sp_location *loc, uint64_t time,
                                             uint32_t kind, uint32_t ref, uint64_t a, uint64_t b)
{
    sp_trace_record *r = sp_trace_reserve(trace, loc, 2);
    r->time = time;
    r->kind = kind;
    r->ref = ref;
    ((sp_trace_payload *)(r + 1))->a = a;
    ((sp_trace_payload *)(r + 1))->b = b;
}

static inline void sp_trace_record_put_values(sp_trace *trace, sp_location *loc, uint64_t time,
                                              uint32_t kind, uint32_t ref, uint64_t a,
                                              uint64_t b, uint64_t c, uint64_t d)
{
    sp_trace_record *r = sp_trace_reserve(trace, loc, 3);
    r->time = time;
    r->kind = kind;
    r->ref = ref;
    ((sp_trace_payload *)(r + 1))->a = a;
    ((sp_trace_payload *)(r + 1))->b = b;
    ((sp_trace_payload *)(r + 2))->a = c;
    ((sp_trace_payload *)(r + 2))->b = d;
}

static inline void sp_trace_enter(sp_trace *trace, sp_location *loc, uint64_t time,
                                  uint32_t region)
{
    sp_trace_record_put(trace, loc, time, SP_REC_ENTER, region);
}

static inline void sp_trace_leave(sp_trace *trace, sp_location *loc, uint64_t time,
                                  uint32_t region)
{
    sp_trace_record_put(trace, loc, time, SP_REC_LEAVE, region);
}

static inline void sp_trace_program_begin(sp_trace *trace, sp_location *loc, uint64_t time)
{
    sp_trace_record_put(trace, loc, time, SP_REC_PROGRAM_BEGIN, 0);
}

static inline void sp_trace_program_end(sp_trace *trace, sp_location *loc, uint64_t time,
                                        int64_t exit_status)
{
    sp_trace_record_put_value(trace, loc, time, SP_REC_PROGRAM_END, 0, (uint64_t)exit_status, 0);
}

static inline void sp_trace_measurement_on_off(sp_trace *trace, sp_location *loc,
                                               uint64_t time, bool on)
{
    sp_trace_record_put(trace, loc, time, on ? SP_REC_MEASUREMENT_ON : SP_REC_MEASUREMENT_OFF, 0);
}

static inline void sp_trace_parameter_int(sp_trace *trace, sp_location *loc, uint64_t time,
                                          uint32_t parameter, int64_t value)
{
    sp_trace_record_put_value(trace, loc, time, SP_REC_PARAMETER_INT, parameter, (uint64_t)value, 0);
}

static inline void sp_trace_parameter_uint(sp_trace *trace, sp_location *loc, uint64_t time,
                                           uint32_t parameter, uint64_t value)
{
    sp_trace_record_put_value(trace, loc, time, SP_REC_PARAMETER_UINT, parameter, value, 0);
}

static inline void sp_trace_parameter_string(sp_trace *trace, sp_location *loc, uint64_t time,
                                             uint32_t parameter, uint32_t string)
{
    sp_trace_record_put_value(trace, loc, time, SP_REC_PARAMETER_STRING, parameter, string, 0);
}

/* Writes the location's full chunks to its spill file now, giving their memory back to
 * the budget (when the profile needs memory); the pause shows as a BufferFlush. */
void sp_trace_flush_location(sp_trace *trace, sp_location *loc);

/* The location's thread has ended: its buffers go to its spill file and back to the
 * budget, and the file is closed (thousands of ended threads must hold neither chunks nor
 * descriptors). Records written later start a new chunk as usual. */
void sp_trace_location_retire(sp_trace *trace, sp_location *loc);

/* Rewind points: where the location's trace stands now, and going back there. */
void sp_trace_mark(sp_location *loc, void **chunk, void **pos, uint32_t *flushes);
/* Drops every record written since the mark; false when a flush wrote them to disk. */
bool sp_trace_rewind(sp_trace *trace, sp_location *loc, void *chunk, void *pos,
                     uint32_t flushes);

/* The end, step 1 (collective when `collective`): opens the archive in `dir`, encodes
 * every location's records (location ids must be final) and closes the event files; each
 * location's trace_events tells how many events it got. */
int sp_trace_encode(sp_trace *trace, const char *dir, bool collective, char *err, size_t errlen);

/* The end, step 2: local definitions (mapping tables to the unified ids, clock offsets),
 * the global definitions (rank 0), and the archive closed. */
int sp_trace_finish(sp_trace *trace, const sp_unified *u, char *err, size_t errlen);

/* Tears down without writing anything more (spill files are removed). */
void sp_trace_abort(sp_trace *trace);

#endif
