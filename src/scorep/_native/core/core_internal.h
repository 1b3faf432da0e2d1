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

/* io.c: the bindings of native I/O handles, made at start and freed at the end. */
int sp_io_registry_init(sp_measurement *m);
void sp_io_registry_free(sp_measurement *m);

/* measurement.c: the in-core adapters' hooks (sp_adapter_register). */
int sp_adapters_begin(const sp_config *config, char *err, size_t errlen);
void sp_adapters_end(void);

#endif
