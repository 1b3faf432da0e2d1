/* Parts of an experiment: the results of a process that ends on its own, without the group
 * that writes the experiment -- a rank of a world started with MPI_Comm_spawn ends when its
 * pool is shut down, long before its parent. It writes everything the group's root needs
 * into one file in the experiment directory (<experiment>/.spawned/): its definitions as
 * it would report them to the unification, and each substrate's section (raw trace records
 * with times in nanoseconds, call trees with local ids). The root adopts the parts at the
 * end as further ranks of the experiment: their definitions join the unification, the
 * trace encodes their records with their own mapping tables, the profile merges their
 * trees. One traces.otf2 and one profile.cubex result. No daemon, no network: files.
 *
 * A spawning process announces each world it starts (its token and size), so that the root
 * knows which parts to wait for (bounded by SCOREP_MPI_FINALIZE_TIMEOUT). */
#ifndef SCOREP_CORE_PART_H
#define SCOREP_CORE_PART_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/location.h"
#include "core/serial.h"
#include "core/unify.h"

/* The directory of the parts and announcements inside the experiment directory. */
#define SP_PART_DIR ".spawned"

/* This process's clock against the experiment's root (what a rank's sp_clock_sync holds). */
typedef struct {
    int64_t offset_begin_ns, offset_end_ns;
    uint64_t sync_begin_ns, sync_end_ns;
    uint64_t first_ns, last_ns; /* its first and last event (CLOCK_MONOTONIC) */
} sp_part_clock;

/* Counters of a child process's results that its root's results include. */
typedef enum {
    SP_PART_ENTERS = 0,
    SP_PART_UNMATCHED_LEAVES,
    SP_PART_TRACE_FLUSHES,
    SP_PART_TRACE_LOST_RECORDS,
    SP_PART_PROFILE_FOLDED_CALLS,
    SP_PART_PROFILE_DROPPED_CALLS,
    SP_PART_PROFILE_FOLDED_PARAMETERS,
    SP_PART_TRACE_SPILL_FAILURES,
    SP_PART_MEMORY_OVER_BUDGET,
    SP_PART_LOCATIONS,
    SP_PART_COUNTERS,
} sp_part_counter;

/* What a part holds, for both kinds (a child process handing over to its root, core/
 * processes.c, and a spawned MPI process writing into .spawned/, here): one encoding, one
 * magic, one reader, so that the two cannot drift apart. The pointers point into memory the
 * caller owns (the encoded part, once decoded). What one kind does not have stays zero: a
 * child shares its root's clock and names its locations in its report; a spawned process
 * has no counters, its root adds nothing of its results. */
typedef struct {
    uint32_t world;    /* the spawned world's token; 0: a child process */
    uint32_t number;   /* a child: its process number; a spawned process: its world rank */
    sp_part_clock clock;
    uint32_t location_count;
    const unsigned char *locations; /* location_count u32 thread indices (sp_part_location) */
    const unsigned char *report;    /* its definitions, as sp_unify_report wrote them */
    uint64_t report_size;
    uint64_t counters[SP_PART_COUNTERS];
    const unsigned char *section[SP_SUBSTRATE_SLOTS]; /* by substrate slot; NULL: none */
    uint64_t section_size[SP_SUBSTRATE_SLOTS];
} sp_part_contents;

/* Appends the encoded part to `out` (out->failed when memory ran out). Empty sections are
 * left out: the reader sees them as none. */
void sp_part_encode(const sp_part_contents *c, sp_buffer *out);

/* Reads an encoded part; false when it is not a whole part (a process that died while
 * writing, another file). `c` points into `data` afterwards. */
SP_MUST_CHECK bool sp_part_decode(const void *data, uint64_t size, sp_part_contents *c);

/* The thread index of a decoded part's location i. */
uint32_t sp_part_location(const sp_part_contents *c, uint32_t i);

/* A spawned process's part, read at the experiment's root. */
typedef struct sp_part {
    sp_part_contents c;
    uint32_t world_index;       /* 1 for the first world spawned, ... (for its name) */
    uint32_t rank;              /* its location group in the experiment */
    unsigned char *data;        /* the file */
    uint64_t size;
    uint64_t *location_ids;     /* in the experiment: thread index << 32 | rank */
    uint64_t *location_events;  /* trace events written for each (by the trace substrate) */
    sp_unified_maps maps;       /* after the unification */
} sp_part;

/* In the ended process: writes its part (atomically: a reader never sees half of it) as
 * .spawned/part-<world>-<number>. */
SP_MUST_CHECK int sp_part_write(const char *dir, const sp_part_contents *c, char *err,
                                size_t errlen);

/* In the spawning process: a world of `size` processes with token `world` will write parts. */
SP_MUST_CHECK int sp_part_announce(const char *dir, uint32_t world, uint32_t size, char *err,
                                   size_t errlen);

/* At the experiment's root: waits (up to `timeout` seconds) for every announced part and
 * reads them, numbering their ranks from `first_rank` (world by world, in the order they
 * were announced; `first_rank`: after every other location group of the experiment, child
 * processes included). Parts that did not arrive are left out and described in `missing`
 * (empty when none). Returns 0 or -1 (out of memory). */
SP_MUST_CHECK int sp_parts_collect(const char *dir, double timeout, uint32_t first_rank,
                                   sp_part **parts, uint32_t *count, char *missing,
                                   size_t missing_len);

/* Frees what sp_parts_collect returned; `remove_files` deletes the parts directory. */
void sp_parts_free(const char *dir, sp_part *parts, uint32_t count, bool remove_files);

#endif
