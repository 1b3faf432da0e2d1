/* The trace substrate: one OTF2 archive per measurement (traces.otf2, traces.def,
 * traces/<location>.evt|.def), one event writer per location, buffers drawn from the
 * measurement's memory budget and flushed to disk when it is used up. */
#ifndef SCOREP_SUBSTRATES_TRACE_H
#define SCOREP_SUBSTRATES_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <otf2/otf2.h>

#include "core/measurement.h"

/* Event chunks of this size come out of the budget (OTF2's smallest allowed). */
#define SP_TRACE_CHUNK_SIZE (256 * 1024)

typedef struct sp_trace {
    OTF2_Archive *archive;
    sp_measurement *meas;
    uint64_t errors;           /* OTF2 calls that failed during the run */
    char first_error[256];
} sp_trace;

int sp_trace_open(sp_trace *trace, sp_measurement *meas, char *err, size_t errlen);

/* Gives the location its event writer; the location's id must be set. */
int sp_trace_location_open(sp_trace *trace, sp_location *loc);

void sp_trace_program_begin(sp_trace *trace, sp_location *loc, uint64_t time);
void sp_trace_program_end(sp_trace *trace, sp_location *loc, uint64_t time, int64_t exit_status);
void sp_trace_measurement_on_off(sp_trace *trace, sp_location *loc, uint64_t time, bool on);
void sp_trace_parameter_int(sp_trace *trace, sp_location *loc, uint64_t time, uint32_t parameter,
                            int64_t value);
void sp_trace_parameter_uint(sp_trace *trace, sp_location *loc, uint64_t time, uint32_t parameter,
                             uint64_t value);
void sp_trace_parameter_string(sp_trace *trace, sp_location *loc, uint64_t time,
                               uint32_t parameter, uint32_t string);
void sp_trace_store_rewind_point(sp_trace *trace, sp_location *loc, uint32_t id);
/* Drops the events since the rewind point; false when that is no longer possible. */
bool sp_trace_rewind(sp_trace *trace, sp_location *loc, uint32_t id);
void sp_trace_clear_rewind_point(sp_trace *trace, sp_location *loc, uint32_t id);

/* Writes definitions, closes all writers and the archive. */
int sp_trace_close(sp_trace *trace, char *err, size_t errlen);

/* Tears down after a failed open or close without writing anything more. */
void sp_trace_abort(sp_trace *trace);

static inline void sp_trace_check(sp_trace *trace, OTF2_ErrorCode status, const char *what)
{
    if (status != OTF2_SUCCESS) {
        if (trace->errors++ == 0) {
            size_t n = 0;
            const char *name = OTF2_Error_GetName(status);
            for (const char *p = what; *p && n + 1 < sizeof trace->first_error; p++)
                trace->first_error[n++] = *p;
            for (const char *p = ": "; *p && n + 1 < sizeof trace->first_error; p++)
                trace->first_error[n++] = *p;
            for (const char *p = name; p && *p && n + 1 < sizeof trace->first_error; p++)
                trace->first_error[n++] = *p;
            trace->first_error[n] = '\0';
        }
    }
}

static inline void sp_trace_enter(sp_trace *trace, sp_location *loc, uint64_t time,
                                  uint32_t region)
{
    sp_trace_check(trace, OTF2_EvtWriter_Enter(loc->trace_writer, NULL, time, region), "Enter");
}

static inline void sp_trace_leave(sp_trace *trace, sp_location *loc, uint64_t time,
                                  uint32_t region)
{
    sp_trace_check(trace, OTF2_EvtWriter_Leave(loc->trace_writer, NULL, time, region), "Leave");
}

#endif
