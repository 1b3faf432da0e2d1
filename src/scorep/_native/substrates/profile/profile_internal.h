/* What the profile substrate's files share. Nothing outside substrates/profile/ includes
 * this. */
#ifndef SCOREP_SUBSTRATES_PROFILE_INTERNAL_H
#define SCOREP_SUBSTRATES_PROFILE_INTERNAL_H

#include "core/serial.h"
#include "substrates/profile/profile.h"

typedef struct sp_profile_state {
    sp_measurement *meas;
    unsigned slot; /* this substrate's slot in sp_location.substrate */
} sp_profile_state;

/* The profile of the running measurement. Global because the event path's slow paths carry
 * no context of ours, and there is one measurement per process. */
extern sp_profile_state sp_profile;

/* remapping_spec.c: the remapping.spec member of every profile.cubex. */
extern const char sp_profile_remapping_spec[];

static inline sp_profile_location *profile_location(const sp_location *loc)
{
    return (sp_profile_location *)loc->substrate[sp_profile.slot];
}

/* write.c: the program roots' visits and times, before the trees are written; every
 * location's tree serialized (ids through `maps`, NULL: local ids) for location group
 * `group`, the count including `extra_locations` appended after them. */
void sp_profile_finish_roots(sp_measurement *m);
void sp_profile_serialize_trees(sp_measurement *m, const sp_unified_maps *maps, uint32_t group,
                                uint32_t extra_locations, double seconds_per_tick, sp_buffer *b);

/* write.c: the locations of a part's profile section (sp_profile_part), and its trees
 * appended with unified ids (see there). */
uint32_t sp_profile_part_locations(const unsigned char *data, uint64_t size);
void sp_profile_remap_trees(const unsigned char *data, uint64_t size, const sp_unified_maps *maps,
                            uint32_t group, uint32_t root, sp_buffer *b);

/* write.c: every rank's trees (`mine`, sp_profile_serialize_trees' layout; NULL when this
 * rank's failed, it still takes part) collected over `ipc` and profile.cubex written at its
 * root: gathered and merged there (groups without point-to-point messages), or streamed
 * (stream.c). Collective. */
int sp_profile_write_collected(sp_measurement *m, const sp_unified *u, const sp_ipc *ipc,
                               const void *mine, uint64_t size, const char *dir, char *err,
                               size_t errlen);
/* write.c, at the root: the adopted spawned parts' trees, one chunk each (sizes[k] bytes for
 * each of m->part_count parts), appended to `b`. */
void sp_profile_parts_chunks(sp_measurement *m, const sp_unified *u, sp_buffer *b,
                             uint64_t *sizes);

/* stream.c: the same for groups with point-to-point messages: the call paths reduced along
 * the binomial tree, then the file written at the root while the rows arrive in blocks, each
 * block reduced along the same tree. Rank 0 holds the call tree, the locations' names and one
 * block of rows (sp_profile_stream_block_bytes), never every location's values. The file is
 * the flat writer's, byte for byte apart from the archive's times. */
int sp_profile_stream_write(sp_measurement *m, const sp_unified *u, const sp_ipc *ipc,
                            const void *mine, uint64_t size, const char *dir, char *err,
                            size_t errlen);
/* The most bytes of values one block of rows holds (rows x locations x 8): 32 MB, settable
 * for tests and benchmarks (0: the default). Global: it configures every stream of the process
 * alike, set before the ranks start. */
extern uint64_t sp_profile_stream_block_bytes;
/* The least bytes of a row one writer's ranks hold on average for the rows to be written by
 * several ranks (each the ranks [w, w + G) of a power of two G, their contiguous slice of every
 * row with pwrite into the one file), for tests and benchmarks: 0 (the default) takes the
 * configuration's (SCOREP_PROFILING_WRITE_SLICE, 64 KB); UINT64_MAX: rank 0 writes alone.
 * Global for the same reason. */
extern uint64_t sp_profile_stream_write_bytes;
/* For tests: this rank finds another file under the archive's path (a file system that is
 * not shared), so rank 0 writes the rows alone. UINT32_MAX: none. Global for the same reason. */
extern uint32_t sp_profile_stream_unshared_rank;

/* parts.c, child processes at the root: the locations of the adopted parts, and their
 * trees with global ids appended in the same layout. */
uint32_t sp_profile_adopted_locations(const sp_measurement *m);
void sp_profile_append_adopted(const sp_measurement *m, const sp_unified *u, sp_buffer *b);

#include "core/serial.h"

/* io.c */
void sp_profile_io_free(sp_profile_location *p);
/* The location's I/O bytes for the writer: a count, then per node its index and
 * bytes[paradigm][read, write] (write.c reads them back). */
void sp_profile_io_serialize(const sp_profile_location *p, sp_buffer *b);

/* folded.c */
void sp_profile_folded_free(sp_profile_location *p);
/* The location's folded calls for the writer, regions through `region_map` (NULL: local
 * ids): the function count, per function [u32 COLLAPSE node][u32 region][u64 primitive]
 * [f64 outermost inclusive s][f64 min s][f64 max s], the pair count, per pair [u32 function]
 * [u32 caller region][u64 calls][u64 primitive][f64 inclusive s][f64 outermost inclusive s]
 * [f64 exclusive s] (write.c reads them back). */
void sp_profile_folded_serialize(const sp_profile_location *p, const uint32_t *region_map,
                                 uint32_t region_count, double seconds_per_tick, sp_buffer *b);

/* metrics.c */
void sp_profile_metrics_free(sp_profile_location *p);
/* The location's metric sums for the writer: the metric count, the rows, then rows x count
 * values (write.c reads them back). */
void sp_profile_metrics_serialize(const sp_profile_location *p, sp_buffer *b);

/* waitstates.c */
void sp_profile_wait_states_free(sp_profile_location *p);
void sp_profile_wait_states_serialize(const sp_profile_location *p, sp_buffer *b);

#endif
