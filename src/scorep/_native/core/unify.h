/* Unified definitions: at the end of a measurement every rank's strings, regions,
 * parameters and communicators get global ids (rank 0 merges what all ranks report, as
 * Score-P does), and each rank learns the mapping from its local ids. Without MPI the
 * process merges its own definitions the same way (equal regions become one).
 *
 * A process may speak for other processes too: a root of child processes reports, besides
 * its own definitions, the parts its children handed over when they ended (each with
 * definitions of its own ids: a location group each), and learns a mapping for each.
 *
 * Events keep their local ids: the trace maps them through OTF2 mapping tables, the
 * profile translates them when its call trees are merged. */
#ifndef SCOREP_CORE_UNIFY_H
#define SCOREP_CORE_UNIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "core/defs.h"
#include "core/error.h"
#include "core/ipc.h"
#include "core/serial.h"

/* What one rank reports about itself besides its definitions. */
typedef struct {
    uint64_t id;        /* the OTF2 location id */
    uint32_t name;      /* string id (local while reporting, global once merged) */
    uint64_t events;    /* OTF2 events written for it */
} sp_unified_location;

/* The parent of a location group that no process of the experiment started (an MPI rank,
 * the measured program's process). */
#define SP_NO_PARENT UINT32_MAX

typedef struct {
    uint32_t rank;      /* the location group's id: the MPI rank, or the process number */
    uint32_t name;      /* string id: the location group's name ("MPI Rank 3", "Process") */
    uint32_t host;      /* string id */
    uint32_t node;      /* once merged: index into sp_unified.nodes (the rank's host) */
    int32_t thread_requested, thread_provided; /* MPI_Init_thread levels, -1 unknown */
    uint64_t start_ns, end_ns;  /* on rank 0's clock */
    uint64_t realtime_start_ns;
    uint32_t location_count;
    sp_unified_location *locations;
    /* Child processes: the group of the process that started this one (SP_NO_PARENT),
     * the pids, and how it was started (string id: "fork", "spawn", ...; SP_NO_ID). */
    uint32_t parent;
    uint64_t pid, parent_pid;
    uint32_t method;
} sp_unified_rank;

/* One set of local -> global maps (a process's own ids, or an adopted part's). */
typedef struct sp_unified_maps {
    uint32_t *string_map, *region_map, *parameter_map, *comm_map;
    uint32_t string_count, region_count, parameter_count, comm_count;
    uint32_t *io_file_map, *io_handle_map;
    uint32_t io_file_count, io_handle_count;
} sp_unified_maps;

/* What a member process reported for itself (sp_unify_report's bytes), adopted by the
 * process that speaks for it. */
typedef struct sp_unify_part {
    const void *data;
    uint64_t size;
} sp_unify_part;

typedef struct sp_unified {
    /* The global definitions: complete on rank 0 (and without MPI), empty elsewhere. */
    sp_defs global;
    /* Every location group (on rank 0): each rank's own and those of the parts it
     * adopted. */
    sp_unified_rank *ranks;
    uint32_t rank_count;
    /* The hosts of the ranks, each once, in the order they first appear (global string
     * ids): the system tree's nodes. */
    uint32_t *nodes;
    uint32_t node_count;
    /* This rank's local -> global maps. */
    uint32_t *string_map, *region_map, *parameter_map, *comm_map;
    uint32_t string_count, region_count, parameter_count, comm_count;
    uint32_t *io_file_map, *io_handle_map;
    uint32_t io_file_count, io_handle_count;
    /* The maps of the adopted parts, in the order they were given to sp_unify_parts. */
    sp_unified_maps *part_maps;
    uint32_t part_count;
} sp_unified;

/* Collective over the group `ipc`. `defs` and `mine` are this process's definitions and
 * report (its string ids are local). Returns 0, or -1 with one line in err. */
SP_MUST_CHECK int sp_unify(const sp_ipc *ipc, const sp_defs *defs, const sp_unified_rank *mine,
                           sp_unified *u, char *err, size_t errlen);

/* The same, speaking also for `nparts` adopted parts: the process merges them with its own
 * definitions first, as a rank merges its subtree's, and the group unifies the merged set. */
SP_MUST_CHECK int sp_unify_parts(const sp_ipc *ipc, const sp_defs *defs,
                                 const sp_unified_rank *mine, const sp_unify_part *parts,
                                 uint32_t nparts, sp_unified *u, char *err, size_t errlen);

/* What a member hands over for the unification: its definitions and report, as bytes
 * appended to `out` (out->failed when out of memory). */
void sp_unify_report(const sp_defs *defs, const sp_unified_rank *mine, sp_buffer *out);

void sp_unified_free(sp_unified *u);

static inline uint32_t sp_unified_string(const sp_unified *u, uint32_t local)
{
    return local < u->string_count ? u->string_map[local] : 0;
}

#endif
