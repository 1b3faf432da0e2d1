/* What the core's own files share beyond the public core headers. Adapters and
 * substrates never include this. */
#ifndef SCOREP_CORE_INTERNAL_H
#define SCOREP_CORE_INTERNAL_H

#include "core/measurement.h"

/* location.c: frees every location of the measurement. */
void sp_locations_free(sp_measurement *m);

/* events.c: closes every open frame of the location at `time` (after marking a pending
 * recording on/off change) and, on the main location, ends the program. */
void sp_location_close(sp_location *loc, uint64_t time, int64_t exit_status);

#endif
