/* Builds one rank's operations for the wait-state engine (core/waitstates.h) from its MPI
 * events, whoever reads them: the trace substrate from its raw records at the end of a run
 * (substrates/trace/waitstates.c), the reports' reader from an OTF2 archive offline
 * (reader/rd_waitstates.c). Both feed the same calls, so the same events give the same
 * operations, and the same waiting, online and offline.
 *
 * The caller reads its events location by location, in the order they happened, converts
 * their times to ns on the group's common clock and calls the functions below; what only
 * it knows (a region's name, a communicator's members, a window's communicator) it answers
 * through an sp_ws_source. The builder keeps the frame stacks, interns the call paths, ties
 * each event to the leave of its call, marks the receives one call completed, carries a
 * probe's waiting over to the receive after it and remembers when each MPI_Irecv was
 * posted. Not thread-safe: one builder per rank being read. */
#ifndef SCOREP_CORE_WAITSTATES_BUILD_H
#define SCOREP_CORE_WAITSTATES_BUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "core/waitstates.h"

#define SP_WS_NO_RANK UINT32_MAX
#define SP_WS_NO_REQUEST UINT64_MAX

/* What the builder asks the caller, by the caller's own ids (regions, communicators and
 * windows as its events name them). */
typedef struct {
    void *ctx;
    uint32_t group_size;   /* ranks in the group (MPI_Init and MPI_Finalize involve all) */
    uint32_t region_count; /* ids at or above these counts are unknown */
    uint32_t comm_count;
    uint32_t win_count;
    /* The region's name (NULL when it has none). */
    const char *(*region_name)(void *ctx, uint32_t region);
    /* The communicator's key (the same on every rank) and size; false when it cannot take
     * part (an inter-communicator, a group, not defined). */
    bool (*comm)(void *ctx, uint32_t comm, uint64_t *key, uint32_t *size);
    /* Its member `i`'s rank in the group, SP_WS_NO_RANK when outside the group. */
    uint32_t (*member)(void *ctx, uint32_t comm, uint32_t i);
    /* The window's key (the same on every member) and its communicator; false if unknown. */
    bool (*window)(void *ctx, uint32_t win, uint64_t *key, uint32_t *comm);
    /* An MPI group (of an RMA epoch, as its events name it): its size, false if unknown,
     * and its member `i`'s rank in the group of ranks (SP_WS_NO_RANK: outside it). */
    uint32_t group_count;
    bool (*group)(void *ctx, uint32_t group, uint32_t *size);
    uint32_t (*group_member)(void *ctx, uint32_t group, uint32_t i);
} sp_ws_source;

typedef struct sp_ws_builder sp_ws_builder;

/* A builder that appends to `in` (zeroed by the caller, freed with sp_ws_input_free);
 * `source` must outlive it. NULL when out of memory. */
sp_ws_builder *sp_ws_builder_new(const sp_ws_source *source, sp_ws_input *in);
/* Ends the last location and frees the builder: 0, or -1 when any call failed (out of
 * memory); `in` then holds a partial build. */
SP_MUST_CHECK int sp_ws_builder_finish(sp_ws_builder *b);

/* The functions below return 0, or -1 once anything failed (out of memory): the build is
 * then incomplete and every later call does nothing. */

/* The events that follow are this location's: frames, pending requests and a probe's
 * waiting of the previous one end (calls still open leave at their enter). */
int sp_ws_builder_location(sp_ws_builder *b, uint32_t location);
int sp_ws_builder_enter(sp_ws_builder *b, uint32_t region, int64_t ns);
int sp_ws_builder_leave(sp_ws_builder *b, int64_t ns);
/* A message sent to `peer` (its rank in `comm`); `blocking_record`: recorded as a blocking
 * send (MPI_Send's record, not MPI_Isend's); `request`: MPI_Isend's request, or
 * SP_WS_NO_REQUEST. */
int sp_ws_builder_send(sp_ws_builder *b, uint32_t comm, uint32_t peer, uint32_t tag,
                       uint64_t bytes, bool blocking_record, uint64_t request);
/* The non-blocking send of `request` completed in the current call (Late Receiver counts
 * it when that call is an MPI_Wait*). */
int sp_ws_builder_isend_complete(sp_ws_builder *b, uint64_t request);
/* General active target synchronization on window `win` with MPI group `group` (the
 * current call is MPI_Win_post, _start, _complete, _wait or _test). */
int sp_ws_builder_rma_group_sync(sp_ws_builder *b, uint32_t win, uint32_t group);
/* A message received from `peer`; `request`: the MPI_Irecv's request whose completion
 * this is, or SP_WS_NO_REQUEST. */
int sp_ws_builder_recv(sp_ws_builder *b, uint32_t comm, uint32_t peer, uint32_t tag,
                       uint64_t bytes, uint64_t request);
/* MPI_Irecv posted `request` in the current call. */
int sp_ws_builder_irecv_request(sp_ws_builder *b, uint64_t request);
/* A collective's end: `op` an sp_collective_op, `root` its rank in `comm` (anything at or
 * above the size: no root). */
int sp_ws_builder_collective(sp_ws_builder *b, uint32_t comm, uint8_t op, uint64_t root);
/* An RMA collective's end on window `win`: a fence when the current call is MPI_Win_fence. */
int sp_ws_builder_rma_collective(sp_ws_builder *b, uint32_t win);

#endif
