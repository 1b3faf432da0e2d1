/* The lines substrate: hits and time per source line of the functions chosen for line-level
 * profiling (--lines, scorep.user.lines), per location, written at the end as lines.json.
 *
 * The adapter measures how long each line ran (until the next line event, call or return of
 * the same frame; callees' time belongs to the calling line, as line_profiler counts it) and
 * hands over (region, line, hits, duration). Nothing is recorded for other functions: a
 * location gets its table at its first line. */
#ifndef SCOREP_SUBSTRATES_LINES_H
#define SCOREP_SUBSTRATES_LINES_H

#include <stdint.h>

#include "core/measurement.h"
#include "core/measurement_state.h"
#include "core/tables.h"
#include "core/unify.h"

typedef struct {
    uint32_t region, line;
    uint64_t hits;
    uint64_t time; /* ticks */
} sp_line_entry;

typedef struct sp_lines_location {
    sp_u64map index; /* region << 32 | line -> entry */
    sp_line_entry *entries;
    uint32_t count, capacity;
    uint64_t dropped; /* no memory for a new line's entry */
} sp_lines_location;

SP_MUST_CHECK int sp_lines_start(sp_measurement *m, unsigned slot, char *err, size_t errlen);

/* Frees the location's table. */
void sp_lines_location_free(sp_location *loc);

/* `hits` more executions of the line and `duration` ticks more of its time. */
void sp_lines_record(sp_location *loc, uint32_t region, uint32_t line, uint32_t hits,
                     uint64_t duration);

/* Writes <dir>/lines.json with every process's lines (collective when the group writes
 * together: the root writes); nothing when no line was recorded anywhere. */
SP_MUST_CHECK int sp_lines_write(sp_measurement *m, const sp_unified *u, const char *dir,
                                 uint64_t ticks_per_second, char *err, size_t errlen);

void sp_lines_stop(sp_measurement *m);

#endif
