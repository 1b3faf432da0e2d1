/* The profile substrate: a call-path tree per location, updated on every enter and leave
 * without allocation once a node exists, written at the end as one CUBE4 profile.cubex
 * whose call tree unifies all locations of all processes.
 *
 * Per node: visits, inclusive time, minimum and maximum inclusive time of one visit.
 * Parameters (scorep.user.parameter_*) split the call path: the rest of the enclosing
 * region's visit goes into a child node per parameter value, as in Score-P. Nodes come
 * out of the SCOREP_TOTAL_MEMORY budget.
 *
 * Score-P's artificial regions appear where Score-P puts them:
 *  - COLLAPSE: a call one level deeper than SCOREP_PROFILING_MAX_CALLPATH_DEPTH becomes a
 *    visit of a COLLAPSE child of its caller, with its inclusive time; the calls inside it
 *    are part of that time and make no nodes of their own;
 *  - MEASUREMENT OFF: while recording is off (scorep.user.disable_recording), a child of the
 *    call path that was current when it went off (or of its callers, as frames open then are
 *    left) holds the time off, one visit per time recording went off;
 *  - TRACE BUFFER FLUSH: a pause to write trace buffers, a visit of a child of the call path
 *    that is current after the event that caused it.
 */
#ifndef SCOREP_SUBSTRATES_PROFILE_H
#define SCOREP_SUBSTRATES_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/measurement.h"
#include "core/measurement_state.h"
#include "core/serial.h"
#include "core/tables.h"
#include "core/unify.h"

#define SP_PROFILE_NO_NODE UINT32_MAX
/* Every location's tree starts at the program root. */
#define SP_PROFILE_ROOT 0u
/* Distinct values one parameter may take under one call path; more go into the parent. */
#define SP_PROFILE_MAX_PARAMETER_VALUES 256

typedef enum {
    SP_NODE_REGION = 0,
    SP_NODE_PARAMETER_INT,
    SP_NODE_PARAMETER_STRING,
} sp_profile_node_kind;

/* A call path of one location. Two cache lines: every enter and leave touches only the
 * first, of the node and of its parent (a node of 88 bytes straddled lines, and an event of
 * the profile cost more cache misses than one of the trace, whose records are appended). */
typedef struct sp_profile_node {
    /* First line: the event path's. */
    uint32_t region;         /* the callee; for a parameter node its enclosing region */
    uint32_t last_child_hit; /* the child found last: loops call the same callee */
    uint64_t visits;
    uint64_t time; /* inclusive, ticks */
    uint64_t min_time, max_time;
    uint32_t parent; /* SP_PROFILE_NO_NODE for the root */
    uint32_t first_child;
    uint32_t next_sibling;
    uint8_t kind; /* sp_profile_node_kind */
    /* A frame of the program's own stack seen by samples (not entered through an event):
     * until the end its `time` is the weight of the samples that ended in it, made
     * inclusive then (sp_profile_finish_samples). */
    uint8_t sampled;
    uint16_t level; /* the tree's level: the program root is 0 */
    uint32_t parameter;
    uint16_t parameter_children;
    /* Second line: what only parameters, MPI and samples use. */
    int64_t value __attribute__((aligned(64))); /* parameter value, or string id */
    uint64_t bytes_sent, bytes_received;        /* MPI */
    uint64_t bytes_put, bytes_get;              /* MPI one-sided */
    uint64_t hits; /* samples whose innermost frame was this call path (sampling) */
} __attribute__((aligned(64))) sp_profile_node;

_Static_assert(sizeof(sp_profile_node) % 64 == 0, "nodes are whole cache lines");

#define SP_PROFILE_BLOCK_NODES 2048

typedef struct sp_profile_location {
    sp_profile_node **blocks; /* node i is blocks[i / BLOCK][i % BLOCK]; nodes move only
                               * when a compacted tree grows again */
    uint32_t max_depth;       /* SCOREP_PROFILING_MAX_CALLPATH_DEPTH: levels of the tree */
    bool compact; /* one exactly-sized malloc'd block instead of a chunk of the budget */
    uint32_t block_count, block_capacity;
    uint32_t count;
    sp_u64map children; /* (parent << 32 | region) -> child, for region children */
    sp_location *location;
    uint64_t folded_calls;      /* deeper than the depth limit (COLLAPSE visits and the calls
                                 * inside them) */
    uint64_t dropped_calls;     /* no node: the memory budget was used up */
    uint64_t folded_parameters; /* beyond SP_PROFILE_MAX_PARAMETER_VALUES */
    uint64_t dropped_samples;   /* no node for their call path: the memory budget was used up */
    struct sp_profile_io *io;   /* bytes of I/O calls per node (io.c), NULL before the first */
    /* Calls beyond the depth limit per function and caller -> callee pair (folded.c), NULL
     * before the first. */
    struct sp_profile_folded *folded;
    /* Metric sums per node (metrics.c): metric_rows rows of the measurement's metric count,
     * NULL without metrics or before the first leave. */
    uint64_t *metric_sums;
    uint32_t metric_rows;
    uint64_t metric_lost; /* visits whose values found no memory */
    /* Wait-state times per node (waitstates.c): wait_state_rows rows of SP_WS_METRIC_COUNT
     * seconds, NULL unless the wait-state analysis charged this location. */
    double *wait_states;
    uint32_t wait_state_rows;
    /* While recording is off: the MEASUREMENT OFF node that holds the time (SP_PROFILE_NO_NODE
     * when recording is on or no node could be made) and since when. */
    uint32_t off_node;
    uint64_t off_since;
    /* Buffer flushes noted since the location's last event, settled at its next one. */
    uint32_t flushes_pending;
    uint64_t flush_ticks_pending, flush_min_pending, flush_max_pending;
} sp_profile_location;

static inline sp_profile_node *sp_profile_node_at(sp_profile_location *p, uint32_t index)
{
    return &p->blocks[index / SP_PROFILE_BLOCK_NODES][index % SP_PROFILE_BLOCK_NODES];
}

/* ---- life cycle (core/substrates.h calls these) ---------------------------------------- */

SP_MUST_CHECK int sp_profile_start(sp_measurement *m, unsigned slot, char *err, size_t errlen);

/* The location's tree, with the program root as its first node. */
SP_MUST_CHECK int sp_profile_location_open(sp_location *loc);

/* The location's thread has ended: a small tree moves out of its budget chunk into memory
 * of its own size and the chunk goes back to the budget (thousands of short threads would
 * otherwise hold a chunk each). A later call path moves it back. */
void sp_profile_location_retire(sp_location *loc);

void sp_profile_location_free(sp_location *loc);

/* Writes <dir>/<base name>.cubex from every location's tree of every process (collective
 * when the group writes together: the root writes). */
SP_MUST_CHECK int sp_profile_write(sp_measurement *m, const sp_unified *u, const char *dir,
                                   uint64_t ticks_per_second, char *err, size_t errlen);

/* This process's part of the experiment (a child process hands it over to its root, a
 * spawned MPI rank writes it into core/part.h's file): its trees with its local ids and
 * times in seconds; the root maps and merges them in sp_profile_write. */
void sp_profile_part(sp_measurement *m, uint64_t ticks_per_second, sp_buffer *out);

/* Folded, dropped and folded-parameter calls, for the results. */
void sp_profile_results(sp_measurement *m, sp_results *r);

void sp_profile_stop(sp_measurement *m);

/* The wait-state analysis' times (core/waitstates.h; the core passes them in before the
 * profile is written): each call path of `in` charges the node with the same regions under
 * the same location's root (or its deepest existing caller). */
struct sp_ws_input;
struct sp_ws_result;
void sp_profile_add_wait_states(sp_measurement *m, const struct sp_ws_input *in,
                                const struct sp_ws_result *r);

/* ---- the event path ----------------------------------------------------------------------- */

/* Creates the child when it does not exist yet (the slow path). */
uint32_t sp_profile_child_slow(sp_profile_location *p, uint32_t parent, uint32_t region);

/* A call deeper than the depth limit: a visit of the caller's COLLAPSE child, or no node
 * inside a COLLAPSE node (its time is the COLLAPSE node's). */
uint32_t sp_profile_collapse(sp_profile_location *p, uint32_t parent);

/* Whether a call at call-stack depth `depth` (the program root being level 0) is beyond the
 * depth limit: the tree has at most max_depth levels, the program root being the first; one
 * more for COLLAPSE. */
static inline bool sp_profile_too_deep(const sp_profile_location *p, uint32_t depth)
{
    return __builtin_expect(depth >= p->max_depth, 0);
}

/* A call of `region` by `caller` (a region) beyond the depth limit (folded.c): its node as
 * sp_profile_collapse gives it, and in `folded` its entry in the per-function table of folded
 * calls (SP_PROFILE_NO_NODE: none), to be passed to sp_profile_leave_deep. `parent_folded` is
 * the caller's entry (SP_PROFILE_NO_NODE: the caller is within the limit). */
uint32_t sp_profile_enter_deep(sp_profile_location *p, uint32_t parent, uint32_t parent_folded,
                               uint32_t caller, uint32_t region, uint32_t *folded);
void sp_profile_leave_deep(sp_profile_location *p, uint32_t folded, uint32_t parent_folded,
                           uint64_t duration);

/* The node of a call to `region` from `parent` within the depth limit (sp_profile_too_deep
 * is false), visited once more. */
static inline uint32_t sp_profile_enter(sp_profile_location *p, uint32_t parent, uint32_t region)
{
    if (parent == SP_PROFILE_NO_NODE)
        return SP_PROFILE_NO_NODE;
    sp_profile_node *pn = sp_profile_node_at(p, parent);
    uint32_t child = pn->last_child_hit;
    if (__builtin_expect(child != SP_PROFILE_NO_NODE, 1)) {
        sp_profile_node *cn = sp_profile_node_at(p, child);
        if (__builtin_expect(cn->region == region && cn->kind == SP_NODE_REGION, 1)) {
            cn->visits++;
            return child;
        }
        /* A function that calls several callees in turn (with C calls recorded, most do:
         * `set.add`, `list.append`, a method) calls them in the order of their first calls,
         * which is the order of the siblings: the next one, or the first again when the
         * loop starts over, is found without the hash table. */
        uint32_t next = cn->next_sibling;
        if (next == SP_PROFILE_NO_NODE)
            next = pn->first_child;
        sp_profile_node *nn = sp_profile_node_at(p, next);
        if (nn->region == region && nn->kind == SP_NODE_REGION) {
            pn->last_child_hit = next;
            nn->visits++;
            return next;
        }
    }
    child = sp_profile_child_slow(p, parent, region);
    if (child == SP_PROFILE_NO_NODE)
        return child;
    /* Fetched again: a compacted tree (sp_profile_location_retire) moves its nodes back
     * into a block when it grows. */
    sp_profile_node_at(p, parent)->last_child_hit = child;
    sp_profile_node_at(p, child)->visits++;
    return child;
}

static inline void sp_profile_leave(sp_profile_location *p, uint32_t node, uint64_t duration)
{
    if (node == SP_PROFILE_NO_NODE)
        return;
    sp_profile_node *n = sp_profile_node_at(p, node);
    n->time += duration;
    /* Branch-free: whether a visit sets a new minimum or maximum is not predictable. */
    n->min_time = duration < n->min_time ? duration : n->min_time;
    n->max_time = duration > n->max_time ? duration : n->max_time;
}

/* ---- calling contexts and samples (sampling) --------------------------------------------
 * Frames of the program's own call stack are call paths like any other: a sample adds its
 * weight and a hit to its innermost frame's node (the nodes' inclusive times, the samples'
 * estimate, are made at the end); frames that were not there at the location's last event
 * (from index `same` on) count a visit. Instrumented regions entered under them get their
 * visits and measured time as usual. */

/* The node of `region` entered below `parent` under the frames `frames` (outermost first). */
uint32_t sp_profile_enter_in_context(sp_profile_location *p, uint32_t parent,
                                     const sp_context_frame *frames, uint32_t count,
                                     uint32_t same, uint32_t region);

/* A sample below `parent` (the innermost open frame's node) with the frames `frames`. */
void sp_profile_sample(sp_profile_location *p, uint32_t parent, const sp_context_frame *frames,
                       uint32_t count, uint32_t same, uint64_t weight);

/* At the end: the sampled nodes' times become inclusive, each its own samples' weight plus
 * its children's time (measured for regions entered through events, estimated for the
 * others), so that a frame above a recorded region holds the region's time too. */
void sp_profile_finish_samples(sp_profile_location *p);

/* The node for a parameter value under `parent` (SP_PROFILE_NO_NODE: not split). */
uint32_t sp_profile_parameter(sp_profile_location *p, uint32_t parent, uint32_t region,
                              uint32_t parameter, sp_parameter_value value);

/* Recording went off: a visit of MEASUREMENT OFF under `parent` starts at `time`. */
void sp_profile_recording_off(sp_profile_location *p, uint32_t parent, uint64_t time);
/* Recording went on again: the time off ends. */
void sp_profile_recording_on(sp_profile_location *p, uint64_t time);
/* While off, the frame whose call path held the time off was left: the rest goes to
 * MEASUREMENT OFF under `parent` (the same visit, continued). */
void sp_profile_recording_off_moves(sp_profile_location *p, uint32_t parent, uint64_t time);

/* A buffer flush of `ticks`, noted now and settled under `parent` at the next event. */
void sp_profile_flush_noted(sp_profile_location *p, uint64_t ticks);
void sp_profile_flushes_settle(sp_profile_location *p, uint32_t parent);

/* MPI bytes of the call at `node`. */
static inline void sp_profile_bytes(sp_profile_location *p, uint32_t node, uint64_t sent,
                                    uint64_t received)
{
    if (node == SP_PROFILE_NO_NODE)
        return;
    sp_profile_node *n = sp_profile_node_at(p, node);
    n->bytes_sent += sent;
    n->bytes_received += received;
}

/* One-sided bytes of the call at `node`. */
static inline void sp_profile_rma_bytes(sp_profile_location *p, uint32_t node, uint64_t put,
                                        uint64_t got)
{
    if (node == SP_PROFILE_NO_NODE)
        return;
    sp_profile_node *n = sp_profile_node_at(p, node);
    n->bytes_put += put;
    n->bytes_get += got;
}

/* Bytes a read or write of `paradigm` moved, at `node` (the I/O call): Score-P's
 * io_bytes_read / io_bytes_written metrics. Kept apart from the nodes (few call paths do
 * I/O); out of memory, the bytes are not counted. */
void sp_profile_io_bytes(sp_profile_location *p, uint32_t node, sp_io_paradigm paradigm,
                         sp_io_mode mode, uint64_t bytes);

/* Metrics (core/metrics.h): the differences now - start of `count` metrics go to `node`. */
void sp_profile_metrics(sp_profile_location *p, uint32_t node, const uint64_t *start,
                        const uint64_t *now, uint32_t count);

/* I/O bytes of a node for the writer: bytes[paradigm][mode] (read 0, write 1); false when
 * the node did none. */
bool sp_profile_io_of(const sp_profile_location *p, uint32_t node,
                      uint64_t bytes[SP_IO_PARADIGM_COUNT][2]);

#endif
