/* The trace substrate: one OTF2 archive per measurement (traces.otf2, traces.def,
 * traces/<location>.evt|.def).
 *
 * The event path does not call libotf2: it appends 16-byte raw records to the location's
 * current chunk (a few ns, against ~20 ns for an OTF2 record). Chunks come out of the
 * SCOREP_TOTAL_MEMORY budget. When the budget is used up the location encodes its
 * records into its OTF2 event writer, which streams them to disk (a flush, marked in the
 * trace by a BufferFlush record); at the end every location's records are encoded the
 * same way. Records are encoded in the order they were written, so OTF2 sees exactly the
 * event stream of the location. */
#ifndef SCOREP_SUBSTRATES_TRACE_H
#define SCOREP_SUBSTRATES_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <otf2/otf2.h>

#include "core/measurement.h"

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
};

typedef struct sp_trace_record {
    uint64_t time;
    uint32_t kind;
    uint32_t ref; /* region or parameter id */
} sp_trace_record;

/* Records with a 64-bit value take the following record as payload. */
typedef struct {
    uint64_t value;
    uint64_t unused;
} sp_trace_payload;

typedef struct sp_trace {
    OTF2_Archive *archive;
    sp_measurement *meas;
    uint64_t errors; /* OTF2 calls that failed */
    char first_error[256];
} sp_trace;

int sp_trace_open(sp_trace *trace, sp_measurement *meas, char *err, size_t errlen);

/* Gives the location its event writer and first chunk; the location's id must be set. */
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
                                             uint32_t kind, uint32_t ref, uint64_t value)
{
    sp_trace_record *r = sp_trace_reserve(trace, loc, 2);
    r->time = time;
    r->kind = kind;
    r->ref = ref;
    ((sp_trace_payload *)(r + 1))->value = value;
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
    sp_trace_record_put_value(trace, loc, time, SP_REC_PROGRAM_END, 0, (uint64_t)exit_status);
}

static inline void sp_trace_measurement_on_off(sp_trace *trace, sp_location *loc,
                                               uint64_t time, bool on)
{
    sp_trace_record_put(trace, loc, time, on ? SP_REC_MEASUREMENT_ON : SP_REC_MEASUREMENT_OFF, 0);
}

static inline void sp_trace_parameter_int(sp_trace *trace, sp_location *loc, uint64_t time,
                                          uint32_t parameter, int64_t value)
{
    sp_trace_record_put_value(trace, loc, time, SP_REC_PARAMETER_INT, parameter, (uint64_t)value);
}

static inline void sp_trace_parameter_uint(sp_trace *trace, sp_location *loc, uint64_t time,
                                           uint32_t parameter, uint64_t value)
{
    sp_trace_record_put_value(trace, loc, time, SP_REC_PARAMETER_UINT, parameter, value);
}

static inline void sp_trace_parameter_string(sp_trace *trace, sp_location *loc, uint64_t time,
                                             uint32_t parameter, uint32_t string)
{
    sp_trace_record_put_value(trace, loc, time, SP_REC_PARAMETER_STRING, parameter, string);
}

/* Encodes the location's full chunks now, giving their memory back to the budget (when
 * the profile needs memory); the pause shows in the trace as a BufferFlush. */
void sp_trace_flush_location(sp_trace *trace, sp_location *loc);

/* Rewind points: where the location's trace stands now, and going back there. */
void sp_trace_mark(sp_location *loc, void **chunk, void **pos, uint32_t *flushes);
/* Drops every record written since the mark; false when a flush wrote them to disk. */
bool sp_trace_rewind(sp_trace *trace, sp_location *loc, void *chunk, void *pos,
                     uint32_t flushes);

/* Encodes what is left, writes definitions, closes all writers and the archive. */
int sp_trace_close(sp_trace *trace, char *err, size_t errlen);

/* Tears down after a failed open or close without writing anything more. */
void sp_trace_abort(sp_trace *trace);

#endif
