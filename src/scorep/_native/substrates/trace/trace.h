/* The trace substrate: one OTF2 archive per measurement (traces.otf2, traces.def,
 * traces/<location>.evt|.def), written at the end.
 *
 * The event path does not call libotf2: it appends 16-byte raw records to the location's
 * current chunk (a few ns, against ~20 ns for an OTF2 record). Chunks come out of the
 * SCOREP_TOTAL_MEMORY budget. When the budget is used up the location writes its full
 * chunks to a spill file on disk (a flush: the pause shows in the trace as a BufferFlush
 * record) and reuses the memory. At the end the OTF2 archive is opened (collectively over
 * the group of processes, or by this process alone) and every location's records --
 * spilled ones first, then those in memory -- are encoded in the order they were written.
 * Timestamps become CLOCK_MONOTONIC nanoseconds then, whatever timer recorded them.
 *
 * Only core headers are included here: the OTF2 library stays inside this substrate's
 * .c files. */
#ifndef SCOREP_SUBSTRATES_TRACE_H
#define SCOREP_SUBSTRATES_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/measurement.h"
#include "core/measurement_state.h"
#include "core/serial.h"
#include "core/unify.h"

/* Raw chunks and the OTF2 writers' buffers are chunks of the budget. */
#define SP_TRACE_CHUNK_SIZE SP_CHUNK_SIZE
/* Each chunk of raw records starts with a header (its list link and end). */
#define SP_TRACE_CHUNK_HEADER_BYTES 16

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
    SP_REC_MPI_FIRST = SP_REC_MPI_SEND,
    SP_REC_MPI_RECV,
    SP_REC_MPI_ISEND,        /* + second payload a = request */
    SP_REC_MPI_IRECV,        /* + second payload a = request */
    SP_REC_MPI_ISEND_COMPLETE, /* payload a = request */
    SP_REC_MPI_IRECV_REQUEST,  /* payload a = request */
    SP_REC_MPI_REQUEST_TEST,   /* payload a = request */
    SP_REC_MPI_COLLECTIVE_BEGIN,
    SP_REC_MPI_COLLECTIVE_END, /* payload a = sent, b = received; second a = op, b = root */
    SP_REC_MPI_REQUEST_CANCELLED, /* payload a = request */
    SP_REC_MPI_ICOLL_REQUEST,     /* payload a = request */
    SP_REC_MPI_ICOLL_COMPLETE,    /* as COLLECTIVE_END; second a = op | root << 32, b = request */
    SP_REC_MPI_COMM_CREATE,       /* ref: communicator */
    SP_REC_MPI_COMM_DESTROY,
    /* one-sided: ref is the window */
    SP_REC_RMA_WIN_CREATE,
    SP_REC_RMA_WIN_DESTROY,
    SP_REC_RMA_COLLECTIVE_BEGIN,
    SP_REC_RMA_COLLECTIVE_END, /* a = sent, b = received; a = op | level << 16 | root << 32 */
    SP_REC_RMA_GROUP_SYNC,     /* a = sync level, b = group (communicator id) */
    SP_REC_RMA_REQUEST_LOCK,   /* a = target | lock type << 32, b = lock id */
    SP_REC_RMA_ACQUIRE_LOCK,
    SP_REC_RMA_TRY_LOCK,
    SP_REC_RMA_RELEASE_LOCK,   /* a = target, b = lock id */
    SP_REC_RMA_SYNC,           /* a = target, b = sync type */
    SP_REC_RMA_WAIT_CHANGE,
    SP_REC_RMA_PUT,            /* a = bytes, b = target; second a = matching id */
    SP_REC_RMA_GET,
    SP_REC_RMA_ATOMIC,         /* a = put, b = got; second a = target | type << 32, b = matching */
    SP_REC_RMA_OP_COMPLETE_BLOCKING, /* a = matching id */
    SP_REC_RMA_OP_COMPLETE_NON_BLOCKING,
    SP_REC_RMA_OP_TEST,
    SP_REC_RMA_OP_COMPLETE_REMOTE,
    SP_REC_MPI_LAST = SP_REC_RMA_OP_COMPLETE_REMOTE,

    /* I/O (io.c), of any paradigm; ref is the io handle. Numbered apart from the MPI kinds
     * so that those can grow. */
    SP_REC_IO_CREATE_HANDLE = 64, /* payload a = creation | status flags << 32, b = mode */
    SP_REC_IO_DESTROY_HANDLE,     /* no payload */
    SP_REC_IO_DUPLICATE_HANDLE,   /* payload a = new handle, b = status flags */
    SP_REC_IO_SEEK,               /* payload a = offset, b = resulting offset; second a = whence */
    SP_REC_IO_OPERATION_BEGIN,    /* payload a = bytes, b = matching id << 8 | flags << 2 | mode */
    SP_REC_IO_OPERATION_COMPLETE, /* payload a = bytes, b = matching id */
    SP_REC_IO_OPERATION_ISSUED,   /* payload a = matching id */
    SP_REC_IO_OPERATION_TEST,
    SP_REC_IO_OPERATION_CANCELLED,
    SP_REC_IO_LAST = SP_REC_IO_OPERATION_CANCELLED,

    /* Metrics (metrics.c): ref 0 strict, 1 per-process; the values follow, two per payload
     * record. */
    SP_REC_METRIC = 96,

    /* Calling contexts (sampling, contexts.c); ref is the calling context. Numbered apart. */
    SP_REC_CC_ENTER = 100, /* payload a = unwind distance */
    SP_REC_CC_LEAVE,       /* no payload */
    SP_REC_CC_SAMPLE,      /* payload a = unwind distance, b = interrupt generator */
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

_Static_assert(sizeof(sp_trace_record) == 16 && sizeof(sp_trace_payload) == 16,
               "raw records are 16 bytes (scorep-score's model counts them)");

/* The raw records each event scorep-score counts takes, read from sp_trace_record_length
 * (the decoder's table: an encoder that wrote another count would break the trace). */
size_t sp_trace_event_record_counts(sp_trace_event_records *out, size_t cap);

/* A location's trace: the event path appends raw records at `pos`; full chunks wait in a
 * list until they are encoded into OTF2 (at a flush or at the end). */
typedef struct sp_trace_location {
    sp_trace_record *pos, *end; /* first: the only fields the event path touches */
    void *chunk;                /* the current chunk */
    void *full_first, *full_last;
    sp_location *location;
    void *writer;         /* OTF2_EvtWriter, at the end */
    FILE *spill;          /* the chunks flushed to disk during the run */
    bool spill_closed;    /* that file exists but was closed when the thread ended */
    uint32_t flushes;     /* buffer flushes to disk during the run */
    uint64_t lost_records; /* not even an over-budget chunk could be allocated */
    uint64_t events;      /* OTF2 events written for it */
    /* While calling contexts are recorded (sampling): the calling context of each open
     * frame, and a cache of context lookups (contexts.c); NULL otherwise. */
    struct sp_trace_contexts *contexts;
} sp_trace_location;

/* ---- life cycle (core/substrates.h calls these) ---------------------------------------- */

SP_MUST_CHECK int sp_trace_start(sp_measurement *m, unsigned slot, char *err, size_t errlen);

/* Flushes during the run write spill files into `dir` (until it is known, chunks are
 * taken over budget instead). */
void sp_trace_set_spill_dir(const char *dir);

/* Gives the location its state and first chunk. */
SP_MUST_CHECK int sp_trace_location_open(sp_location *loc);

/* The location's thread has ended: its buffers go to its spill file and back to the
 * budget, and the file is closed (thousands of ended threads must hold neither chunks nor
 * descriptors). Records written later start a new chunk as usual. */
void sp_trace_location_retire(sp_location *loc);

void sp_trace_location_free(sp_location *loc);

/* Rewind points: where the location's trace stands now, and going back there; false when
 * a flush wrote the records since then to disk. */
bool sp_trace_mark(sp_trace_location *tl, sp_substrate_mark *mark);
bool sp_trace_rewind(sp_trace_location *tl, const sp_substrate_mark *mark);

/* The end, step 1 (collective when m->collective): opens the archive in `dir`, encodes
 * every location's records (location ids must be final) and closes the event files. When
 * the trace cannot be written by this process alone, its files are removed and the reason
 * is kept for the results (0 is returned: the profile is still written). */
SP_MUST_CHECK int sp_trace_encode(sp_measurement *m, const char *dir, char *err, size_t errlen);

/* A spawned process's trace for its part of the experiment (core/part.h): its raw records
 * with times in nanoseconds; the root encodes them in sp_trace_encode. */
void sp_trace_part(sp_measurement *m, sp_buffer *b);

/* Before step 1: this process's MPI operations for the wait-state analysis, read from the
 * records in memory and spilled (core/waitstates.h). */
struct sp_ws_input;
SP_MUST_CHECK int sp_trace_wait_state_input(sp_measurement *m, struct sp_ws_input *in,
                                            char *err, size_t errlen);

/* OTF2 events written for the location in step 1. */
uint64_t sp_trace_location_events(const sp_location *loc);

/* The end, step 2: local definitions (mapping tables to the unified ids, clock offsets),
 * the global definitions (the group's root, which adds the few strings they need to `u`),
 * and the archive closed. */
SP_MUST_CHECK int sp_trace_finish(sp_measurement *m, sp_unified *u, char *err, size_t errlen);

/* Child processes: a member's section of the part it hands over to its root (the event
 * files it encoded itself into its part directory, which the root moves into its archive;
 * the archive is closed without definitions). Unlike a spawned process's part (raw records
 * the root encodes with that process's own clock), a member shares its root's host and
 * clock, and its root's end is not slowed down by encoding the children's events. */
void sp_trace_hand_over(sp_measurement *m, sp_buffer *out);

/* Flushes, lost records, spill failures and a failed trace, for the results. */
void sp_trace_results(sp_measurement *m, sp_results *r);

/* Tears down without writing anything more (spill files are removed). */
void sp_trace_stop(sp_measurement *m);

/* ---- the event path ----------------------------------------------------------------------- */

/* The current chunk is full: hands out the next one (flushing when the budget is used
 * up). Returns where `count` records can go. */
sp_trace_record *sp_trace_next_chunk(sp_trace_location *tl, unsigned count);

static inline sp_trace_record *sp_trace_reserve(sp_trace_location *tl, unsigned count)
{
    sp_trace_record *r = tl->pos;
    if (__builtin_expect(r + count > tl->end, 0))
        r = sp_trace_next_chunk(tl, count);
    tl->pos = r + count;
    return r;
}

static inline void sp_trace_put(sp_trace_location *tl, uint64_t time, uint32_t kind, uint32_t ref)
{
    sp_trace_record *r = sp_trace_reserve(tl, 1);
    r->time = time;
    r->kind = kind;
    r->ref = ref;
}

static inline void sp_trace_put_value(sp_trace_location *tl, uint64_t time, uint32_t kind,
                                      uint32_t ref, uint64_t a, uint64_t b)
{
    sp_trace_record *r = sp_trace_reserve(tl, 2);
    r->time = time;
    r->kind = kind;
    r->ref = ref;
    ((sp_trace_payload *)(r + 1))->a = a;
    ((sp_trace_payload *)(r + 1))->b = b;
}

static inline void sp_trace_put_values(sp_trace_location *tl, uint64_t time, uint32_t kind,
                                       uint32_t ref, uint64_t a, uint64_t b, uint64_t c,
                                       uint64_t d)
{
    sp_trace_record *r = sp_trace_reserve(tl, 3);
    r->time = time;
    r->kind = kind;
    r->ref = ref;
    ((sp_trace_payload *)(r + 1))->a = a;
    ((sp_trace_payload *)(r + 1))->b = b;
    ((sp_trace_payload *)(r + 2))->a = c;
    ((sp_trace_payload *)(r + 2))->b = d;
}

static inline void sp_trace_enter(sp_trace_location *tl, uint64_t time, uint32_t region)
{
    sp_trace_put(tl, time, SP_REC_ENTER, region);
}

/* ---- calling contexts (sampling, contexts.c) ------------------------------------------- */

/* The frame at stack index `index` enters `region` under the context frames `frames`
 * (below the frame at index - 1; the first `same` frames were there at the last event). */
void sp_trace_enter_in_context(sp_trace_location *tl, uint64_t time, uint32_t index,
                               const sp_context_frame *frames, uint32_t count, uint32_t same,
                               uint32_t region);
/* The frame at stack index `index` is left. */
void sp_trace_leave_context(sp_trace_location *tl, uint64_t time, uint32_t index);
/* A sample with `depth` open frames and the context frames `frames` below the innermost. */
void sp_trace_sample(sp_trace_location *tl, uint64_t time, uint32_t depth,
                     const sp_context_frame *frames, uint32_t count, uint32_t same);

/* `index`: the left frame's place on the location's stack (for its calling context). */
static inline void sp_trace_leave(sp_trace_location *tl, uint64_t time, uint32_t region,
                                  uint32_t index)
{
    if (__builtin_expect(tl->contexts != NULL, 0)) {
        sp_trace_leave_context(tl, time, index);
        return;
    }
    sp_trace_put(tl, time, SP_REC_LEAVE, region);
}

/* On the thread that begins the program: its process and thread ids go with ProgramBegin. */
void sp_trace_program_begin(sp_trace_location *tl, uint64_t time);

static inline void sp_trace_program_end(sp_trace_location *tl, uint64_t time, int64_t status)
{
    sp_trace_put_value(tl, time, SP_REC_PROGRAM_END, 0, (uint64_t)status, 0);
}

static inline void sp_trace_measurement_on_off(sp_trace_location *tl, uint64_t time, bool on)
{
    sp_trace_put(tl, time, on ? SP_REC_MEASUREMENT_ON : SP_REC_MEASUREMENT_OFF, 0);
}

static inline void sp_trace_parameter(sp_trace_location *tl, uint64_t time, uint32_t parameter,
                                      sp_parameter_value value)
{
    uint32_t kind = value.type == SP_PARAM_INT64    ? SP_REC_PARAMETER_INT
                    : value.type == SP_PARAM_UINT64 ? SP_REC_PARAMETER_UINT
                                                    : SP_REC_PARAMETER_STRING;
    sp_trace_put_value(tl, time, kind, parameter, (uint64_t)value.value, 0);
}

/* MPI calls take microseconds: one out-of-line function serves every kind. */
void sp_trace_mpi(sp_trace_location *tl, uint64_t time, const sp_mpi_event *e);

/* The metric values a location read at an enter or leave (metrics.c), written before the
 * enter or leave record with its time. */
void sp_trace_metrics(sp_trace_location *tl, uint64_t time, const sp_location_metrics *lm);

/* So do I/O calls (io.c). */
void sp_trace_io(sp_trace_location *tl, uint64_t time, const sp_io_event *e);

#endif
