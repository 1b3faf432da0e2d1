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

/* metrics.c: the metrics of a measurement (core/metrics.h). */
SP_MUST_CHECK int sp_metrics_start(sp_measurement *m, const sp_metric_request *requests,
                                   size_t count, char *err, size_t errlen);
void sp_metrics_stop(sp_measurement *m);
/* The location's sources and value rows (on the location's own thread); 0 or -1. */
SP_MUST_CHECK int sp_metrics_location_open(sp_location *loc);
/* Room for a start row per stack slot after the stack grew; 0 or -1. */
SP_MUST_CHECK int sp_metrics_grow(sp_location *loc);
void sp_metrics_location_free(sp_location *loc);
/* The location's thread ended (on that thread): its last values are read and its sources'
 * per-thread state (perf descriptors) goes; later events keep those last values. */
void sp_metrics_location_retire(sp_location *loc);
/* Whether the calling thread is the location's own (only it can read its metrics). */
bool sp_metrics_own(const sp_location *loc);
/* Reads every metric of the location into loc->metrics->now. */
void sp_metrics_read(sp_location *loc);

#endif
