/* What the core's own files share beyond the public core headers. Adapters and
 * substrates never include this. */
#ifndef SCOREP_CORE_INTERNAL_H
#define SCOREP_CORE_INTERNAL_H

#include "core/measurement.h"
#include "core/measurement_state.h"
#include "core/unify.h"

/* location.c: frees every location of the measurement. */
void sp_locations_free(sp_measurement *m);

/* events.c: closes every open frame of the location at `time` (after marking a pending
 * recording on/off change) and, on the main location, ends the program. */
void sp_location_close(sp_location *loc, uint64_t time, int64_t exit_status);

/* measurement.c: what this process reports to the unification about itself (its location
 * group -- `as_rank`: an MPI rank's -- and locations; mine->locations is malloc'ed), and
 * its results. */
SP_MUST_CHECK int sp_measurement_report(sp_measurement *m, uint64_t end_time,
                                        uint64_t ticks_per_second, bool as_rank,
                                        sp_unified_rank *mine, char *err, size_t errlen);
/* measurement.c: a part of the experiment (core/part.h) for this process at its end: its
 * report and each substrate's section (`spawned`: a spawned MPI process's, else a child
 * process's) into the buffers, `c` pointing at them; the caller fills in who it is, encodes
 * it and frees the buffers with sp_measurement_part_free (also after a failure). */
SP_MUST_CHECK int sp_measurement_part(sp_measurement *m, uint64_t end_time,
                                      uint64_t ticks_per_second, bool spawned,
                                      sp_part_contents *c, sp_buffer *report,
                                      sp_buffer sections[SP_SUBSTRATE_SLOTS], char *err,
                                      size_t errlen);
void sp_measurement_part_free(sp_buffer *report, sp_buffer sections[SP_SUBSTRATE_SLOTS]);
void sp_measurement_collect_results(sp_measurement *m, uint64_t end_time, sp_results *r);

/* processes.c: a member hands its part over to its root (location ids become final here);
 * the root adopts what its members handed over (m->processes.parts), adds their counters
 * to its results, and lets the parts go at the end. */
SP_MUST_CHECK int sp_processes_hand_over(sp_measurement *m, uint64_t end_time,
                                         uint64_t ticks_per_second, char *err, size_t errlen);
SP_MUST_CHECK int sp_processes_adopt(sp_measurement *m, char *err, size_t errlen);
/* Collective over the ranks writing together (after they agreed; every rank calls it when
 * the ranks follow child processes): the first location group id after every rank's and
 * every adopted child process's, at rank 0 (elsewhere: this rank's own bound). The parts
 * of spawned processes are numbered from there, so that no two location groups share an
 * id. */
SP_MUST_CHECK int sp_processes_numbers_end(sp_measurement *m, uint32_t *end, char *err,
                                           size_t errlen);
void sp_processes_add_counters(const sp_measurement *m, sp_results *r);
void sp_processes_release(sp_measurement *m);

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
/* Reads every metric of the location into loc->metrics->now, at the event's time (a source
 * read shortly before may keep its values: same_within_ns); SP_METRICS_READ_ALL reads every
 * source whatever the time. */
#define SP_METRICS_READ_ALL UINT64_MAX
void sp_metrics_read(sp_location *loc, uint64_t time);

#endif
