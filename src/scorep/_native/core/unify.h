/* Unified definitions: at the end of a measurement every rank's strings, regions,
 * parameters and communicators get global ids (rank 0 merges what all ranks report, as
 * Score-P does), and each rank learns the mapping from its local ids. Without MPI the
 * process merges its own definitions the same way (equal regions become one).
 *
 * A process may speak for other processes too: a root of child processes reports, besides
 * its own definitions, the parts its children handed over when they ended (each with
 * definitions of its own ids: a location group each), and learns a mapping for each. The
 * experiment's root also adopts the parts that processes started with MPI_Comm_spawn wrote
 * (core/part.h) as ranks after the group's.
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
#include "core/tables.h"

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
    /* The location group's id: the MPI rank (consecutive over every world of the job), or
     * a child process's number. */
    uint32_t rank;
    /* The MPI process (SP_PROCESS): its world and rank there (a child process: none). */
    uint32_t world, world_rank;
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

/* One set of local -> global maps: a process's own ids (sp_unified_own_maps), a child
 * process's part (sp_unified.part_maps) or a spawned process's part (core/part.h). */
typedef struct sp_unified_maps {
    uint32_t *string_map, *region_map, *parameter_map, *comm_map, *win_map;
    uint32_t string_count, region_count, parameter_count, comm_count, win_count;
    uint32_t *io_file_map, *io_handle_map;
    uint32_t io_file_count, io_handle_count;
    uint32_t *context_map; /* calling contexts (sampling) */
    uint32_t context_count;
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
    /* At the root: MPI process (SP_PROCESS) -> its index among the MPI ranks of the
     * experiment (OTF2's group of MPI locations; child processes are none). */
    sp_u64map process_index;
    /* This rank's local -> global maps. */
    sp_unified_maps maps;
    /* The maps of the child processes' parts, in the order given to sp_unify_parts (a
     * spawned process's part keeps its maps itself). */
    sp_unified_maps *part_maps;
    uint32_t part_count;
} sp_unified;

struct sp_part;

/* Collective over the group `ipc`. `defs` and `mine` are this process's definitions and
 * report (its string ids are local). The root also merges the reports of `parts` (core/
 * part.h: processes that ended on their own), as ranks after the group's, and leaves each
 * part's maps in it. Returns 0, or -1 with one line in err. */
SP_MUST_CHECK int sp_unify(const sp_ipc *ipc, const sp_defs *defs, const sp_unified_rank *mine,
                           struct sp_part *parts, uint32_t part_count, sp_unified *u, char *err,
                           size_t errlen);

/* The same, speaking also for `nchildren` child processes' parts: the process merges them
 * with its own definitions first, as a rank merges its subtree's, and the group unifies the
 * merged set (u->part_maps: their maps, in this order). */
SP_MUST_CHECK int sp_unify_parts(const sp_ipc *ipc, const sp_defs *defs,
                                 const sp_unified_rank *mine, const sp_unify_part *children,
                                 uint32_t nchildren, struct sp_part *parts, uint32_t part_count,
                                 sp_unified *u, char *err, size_t errlen);

/* A process's report to the unification, as it sends it: its definitions and report, as
 * bytes appended to `out` (out->failed when out of memory), for a child process's part or
 * a spawned process's part file. */
void sp_unify_report(const sp_defs *defs, const sp_unified_rank *mine, sp_buffer *out);

void sp_unified_maps_free(sp_unified_maps *maps);
void sp_unified_free(sp_unified *u);

static inline uint32_t sp_unified_string(const sp_unified *u, uint32_t local)
{
    return local < u->maps.string_count ? u->maps.string_map[local] : 0;
}

/* At the root: the MPI rank of a process in the experiment (consecutive over all worlds,
 * its index in OTF2's group of MPI locations), or UINT32_MAX when no rank of the
 * experiment is that process. */
uint32_t sp_unified_process_rank(const sp_unified *u, uint64_t process);

#endif
