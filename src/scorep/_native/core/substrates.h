/* The substrates: what records the events the core receives. This is the only core file
 * that names them. Each event is dispatched by static inline code (no function-pointer
 * table on the hot path) to the substrates enabled in sp_meas.substrates, and each
 * substrate keeps its per-location state in the slot of sp_location.substrate given here.
 *
 * Adding a substrate: a folder under substrates/ with its header, one id below, and one
 * line in each dispatch function it takes part in. Substrates never include each other;
 * when they compete for memory, the chunk pool's reclaim callback arbitrates. */
#ifndef SCOREP_CORE_SUBSTRATES_H
#define SCOREP_CORE_SUBSTRATES_H

#include <stdio.h>
#include <string.h>

#include "core/measurement.h"
#include "core/measurement_state.h"
#include "core/serial.h"
#include "core/unify.h"
#include "core/waitstates.h"
#include "substrates/lines/lines.h"
#include "substrates/profile/profile.h"
#include "substrates/trace/trace.h"

typedef enum {
    SP_SUBSTRATE_PROFILE = 0, /* call-path profile -> profile.cubex */
    SP_SUBSTRATE_TRACE,       /* event trace -> traces.otf2 */
    SP_SUBSTRATE_LINES,       /* line-level profiles of chosen functions -> lines.json */
    SP_SUBSTRATE_COUNT,
} sp_substrate_id;

_Static_assert(SP_SUBSTRATE_COUNT <= SP_SUBSTRATE_SLOTS, "a location has a slot per substrate");

#define SP_SUBSTRATE_BIT(id) (1u << (id))

static inline bool sp_substrate_on(sp_substrate_id id)
{
    return sp_meas.substrates & SP_SUBSTRATE_BIT(id);
}

static inline sp_profile_location *sp_profile_of(const sp_location *loc)
{
    return (sp_profile_location *)loc->substrate[SP_SUBSTRATE_PROFILE];
}

static inline sp_trace_location *sp_trace_of(const sp_location *loc)
{
    return (sp_trace_location *)loc->substrate[SP_SUBSTRATE_TRACE];
}

/* ---- life cycle ------------------------------------------------------------------------ */

/* At measurement start, after the definitions exist. */
SP_MUST_CHECK static inline int sp_substrates_start(sp_measurement *m, char *err, size_t errlen)
{
    m->substrates = 0;
    if (m->config.profiling) {
        if (sp_profile_start(m, SP_SUBSTRATE_PROFILE, err, errlen) != 0)
            return -1;
        m->substrates |= SP_SUBSTRATE_BIT(SP_SUBSTRATE_PROFILE);
    }
    if (m->config.tracing) {
        if (sp_trace_start(m, SP_SUBSTRATE_TRACE, err, errlen) != 0)
            return -1;
        m->substrates |= SP_SUBSTRATE_BIT(SP_SUBSTRATE_TRACE);
    }
    /* Always there: only the lines of chosen functions reach it, and a location gets its
     * table at its first line. */
    if (sp_lines_start(m, SP_SUBSTRATE_LINES, err, errlen) != 0)
        return -1;
    m->substrates |= SP_SUBSTRATE_BIT(SP_SUBSTRATE_LINES);
    return 0;
}

/* Where spill files go during the run, once the experiment directory is known. */
static inline void sp_substrates_output_dir_known(const char *dir)
{
    if (sp_substrate_on(SP_SUBSTRATE_TRACE))
        sp_trace_set_spill_dir(dir);
}

/* A new location: each substrate sets up its slot. Returns 0 or -1 (out of memory). */
SP_MUST_CHECK static inline int sp_substrates_location_open(sp_location *loc)
{
    if (sp_substrate_on(SP_SUBSTRATE_TRACE) && sp_trace_location_open(loc) != 0)
        return -1;
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE) && sp_profile_location_open(loc) != 0)
        return -1;
    return 0;
}

/* The location's thread ended: buffers go back to the budget. */
static inline void sp_substrates_location_retire(sp_location *loc)
{
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE))
        sp_profile_location_retire(loc);
    if (sp_substrate_on(SP_SUBSTRATE_TRACE))
        sp_trace_location_retire(loc);
}

/* Frees what the substrates hold for the location (also after a failed open). */
static inline void sp_substrates_location_free(sp_location *loc)
{
    sp_profile_location_free(loc);
    sp_trace_location_free(loc);
    sp_lines_location_free(loc);
}

/* ---- events ------------------------------------------------------------------------------ */

/* `frame` was just pushed (loc->depth counts it); `parent` is the frame below or NULL. The
 * call-path substrate goes first: a buffer flush the trace makes while recording the enter
 * then finds the frame's call path in place (see sp_location_paused). */
static inline void sp_substrates_enter(sp_location *loc, sp_frame *frame, const sp_frame *parent,
                                       uint64_t time)
{
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE)) {
        sp_profile_location *p = sp_profile_of(loc);
        uint32_t node = parent ? parent->callpath : SP_PROFILE_ROOT;
        frame->folded = SP_PROFILE_NO_NODE;
        if (sp_profile_too_deep(p, loc->depth))
            frame->callpath = sp_profile_enter_deep(
                p, node, parent ? parent->folded : SP_PROFILE_NO_NODE,
                parent ? parent->region : sp_meas.program_region, frame->region,
                &frame->folded);
        else
            frame->callpath = sp_profile_enter(p, node, frame->region);
    }
    if (sp_substrate_on(SP_SUBSTRATE_TRACE))
        sp_trace_enter(sp_trace_of(loc), time, frame->region);
}

/* The same while calling contexts are recorded (sampling): the frame is entered under
 * `frames` (outermost first), the part of the thread's own call stack entered since
 * `parent`; of those, the first `same` were there at the location's last event already. */
static inline void sp_substrates_enter_in_context(sp_location *loc, sp_frame *frame,
                                                  const sp_frame *parent,
                                                  const sp_context_frame *frames, uint32_t count,
                                                  uint32_t same, uint64_t time)
{
    /* Folded calls are not counted per function here: the tree's depth is not the stack's
     * (README, "Sampling"). */
    frame->folded = SP_PROFILE_NO_NODE;
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE))
        frame->callpath = sp_profile_enter_in_context(
            sp_profile_of(loc), parent ? parent->callpath : SP_PROFILE_ROOT, frames, count,
            same, frame->region);
    if (sp_substrate_on(SP_SUBSTRATE_TRACE))
        sp_trace_enter_in_context(sp_trace_of(loc), time, loc->depth - 1, frames, count, same,
                                  frame->region);
}

/* A sample: the thread's call stack below the innermost open frame `top` (NULL: the program
 * root) is `frames`, of which the first `same` were there at the location's last event;
 * it stands for `weight` ticks. */
static inline void sp_substrates_sample(sp_location *loc, const sp_frame *top,
                                        const sp_context_frame *frames, uint32_t count,
                                        uint32_t same, uint64_t weight, uint64_t time)
{
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE))
        sp_profile_sample(sp_profile_of(loc), top ? top->callpath : SP_PROFILE_ROOT, frames,
                          count, same, weight);
    if (sp_substrate_on(SP_SUBSTRATE_TRACE))
        sp_trace_sample(sp_trace_of(loc), time, loc->depth, frames, count, same);
}

/* A frame entered while recording is off: calls inside it belong to its caller's path. */
static inline void sp_substrates_enter_unrecorded(sp_frame *frame, const sp_frame *parent)
{
    frame->callpath = parent ? parent->callpath : SP_PROFILE_ROOT;
    frame->folded = SP_PROFILE_NO_NODE;
}

/* The frame was taken off the stack (loc->depth no longer counts it): its caller's frame
 * is the one below it. */
static inline void sp_profile_leave_frame(sp_location *loc, const sp_frame *frame, uint64_t time)
{
    sp_profile_location *p = sp_profile_of(loc);
    uint64_t duration = time - frame->enter_time;
    if (__builtin_expect(frame->folded != SP_PROFILE_NO_NODE, 0))
        sp_profile_leave_deep(p, frame->folded,
                              loc->depth ? loc->stack[loc->depth - 1].folded : SP_PROFILE_NO_NODE,
                              duration);
    sp_profile_leave(p, frame->callpath, duration);
}

static inline void sp_substrates_leave(sp_location *loc, const sp_frame *frame, uint64_t time)
{
    if (sp_substrate_on(SP_SUBSTRATE_TRACE) && !(frame->flags & SP_FRAME_CALLPATH_ONLY))
        sp_trace_leave(sp_trace_of(loc), time, frame->region, loc->depth);
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE))
        sp_profile_leave_frame(loc, frame, time);
}

/* A MeasurementOnOff marker in the trace only (a rewind's dropped span). */
static inline void sp_substrates_measurement_on_off(sp_location *loc, uint64_t time, bool on)
{
    if (sp_substrate_on(SP_SUBSTRATE_TRACE))
        sp_trace_measurement_on_off(sp_trace_of(loc), time, on);
}

/* Recording went off or on for the location (scorep.user.disable_recording): the trace marks
 * it, the call-path substrate enters or leaves Score-P's MEASUREMENT OFF region under the
 * call path of `top` (the innermost open frame, NULL: the program root), as Score-P does. */
static inline void sp_substrates_recording_changed(sp_location *loc, const sp_frame *top,
                                                   uint64_t time, bool on)
{
    if (sp_substrate_on(SP_SUBSTRATE_TRACE))
        sp_trace_measurement_on_off(sp_trace_of(loc), time, on);
    if (!sp_substrate_on(SP_SUBSTRATE_PROFILE))
        return;
    if (on)
        sp_profile_recording_on(sp_profile_of(loc), time);
    else
        sp_profile_recording_off(sp_profile_of(loc), top ? top->callpath : SP_PROFILE_ROOT,
                                 time);
}

/* While recording is off, a frame that was open when it went off was left: the time off
 * from now on belongs to the caller's call path (`top`, NULL: the program root). */
static inline void sp_substrates_left_while_off(sp_location *loc, const sp_frame *top,
                                                uint64_t time)
{
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE))
        sp_profile_recording_off_moves(sp_profile_of(loc), top ? top->callpath
                                                               : SP_PROFILE_ROOT, time);
}

/* The trace paused the location to write its buffers (a flush, from `begin` to `end`); the
 * call-path substrate accounts the pause at the location's next event, when the call path
 * it belongs to is known (sp_substrates_settle). */
static inline void sp_substrates_paused(sp_location *loc, uint64_t begin, uint64_t end)
{
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE))
        sp_profile_flush_noted(sp_profile_of(loc), end > begin ? end - begin : 0);
}

/* What the substrates noted for the location's next event (sp_substrates_paused) goes under
 * the call path of `top` (NULL: the program root): Score-P's TRACE BUFFER FLUSH region. */
static inline void sp_substrates_settle(sp_location *loc, const sp_frame *top)
{
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE))
        sp_profile_flushes_settle(sp_profile_of(loc), top ? top->callpath : SP_PROFILE_ROOT);
}

static inline void sp_substrates_program_begin(sp_location *loc, uint64_t time)
{
    if (sp_substrate_on(SP_SUBSTRATE_TRACE))
        sp_trace_program_begin(sp_trace_of(loc), time);
}

static inline void sp_substrates_program_end(sp_location *loc, uint64_t time, int64_t status)
{
    if (sp_substrate_on(SP_SUBSTRATE_TRACE))
        sp_trace_program_end(sp_trace_of(loc), time, status);
}

/* A parameter value: the trace records it; the call-path substrate splits the path of the
 * enclosing frame `top` (NULL: the program root). Returns the call-path node the rest of
 * the enclosing visit goes to, or SP_PROFILE_NO_NODE (no split). */
static inline uint32_t sp_substrates_parameter(sp_location *loc, const sp_frame *top,
                                               uint32_t parameter, sp_parameter_value value,
                                               uint64_t time)
{
    if (sp_substrate_on(SP_SUBSTRATE_TRACE))
        sp_trace_parameter(sp_trace_of(loc), time, parameter, value);
    if (!sp_substrate_on(SP_SUBSTRATE_PROFILE))
        return SP_PROFILE_NO_NODE;
    return sp_profile_parameter(sp_profile_of(loc), top ? top->callpath : SP_PROFILE_ROOT,
                                top ? top->region : sp_meas.program_region, parameter, value);
}

/* An MPI event: the trace keeps it, the profile adds its bytes to `top` (the MPI call). */
static inline void sp_substrates_mpi(sp_location *loc, const sp_frame *top, const sp_mpi_event *e,
                                     uint64_t time)
{
    if (sp_substrate_on(SP_SUBSTRATE_TRACE))
        sp_trace_mpi(sp_trace_of(loc), time, e);
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE) && top && (e->bytes_sent || e->bytes_received)) {
        if (e->kind >= SP_RMA_WIN_CREATE) /* one-sided: bytes_put and bytes_get, as Score-P */
            sp_profile_rma_bytes(sp_profile_of(loc), top->callpath, e->bytes_sent,
                                 e->bytes_received);
        else
            sp_profile_bytes(sp_profile_of(loc), top->callpath, e->bytes_sent,
                             e->bytes_received);
    }
}

/* An I/O event: the trace keeps it, the profile adds the bytes a read or write moved to
 * `top` (the I/O call) under its paradigm. */
static inline void sp_substrates_io(sp_location *loc, const sp_frame *top, const sp_io_event *e,
                                    uint64_t time)
{
    if (sp_substrate_on(SP_SUBSTRATE_TRACE))
        sp_trace_io(sp_trace_of(loc), time, e);
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE) && top && e->kind == SP_IO_OPERATION_COMPLETE &&
        e->mode != SP_IO_MODE_FLUSH && e->bytes != SP_IO_UNKNOWN_BYTES)
        sp_profile_io_bytes(sp_profile_of(loc), top->callpath, (sp_io_paradigm)e->paradigm,
                            (sp_io_mode)e->mode, e->bytes);
}

/* A line of a chosen function ran `hits` more times for `duration` more ticks. */
static inline void sp_substrates_line(sp_location *loc, uint32_t region, uint32_t line,
                                      uint32_t hits, uint64_t duration)
{
    if (sp_substrate_on(SP_SUBSTRATE_LINES))
        sp_lines_record(loc, region, line, hits, duration);
}

/* A frame closed by a rewind that dropped its events: only the call-path substrate, which
 * cannot take visits back, still closes it. */
static inline void sp_substrates_leave_rewound(sp_location *loc, const sp_frame *frame,
                                               uint64_t time)
{
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE))
        sp_profile_leave_frame(loc, frame, time);
}

/* Rewind points (only the trace can go back; the profile keeps the visits). */
static inline bool sp_substrates_mark(sp_location *loc, sp_substrate_mark *mark)
{
    return sp_substrate_on(SP_SUBSTRATE_TRACE) && sp_trace_mark(sp_trace_of(loc), mark);
}

static inline bool sp_substrates_rewind(sp_location *loc, const sp_substrate_mark *mark)
{
    return sp_substrate_on(SP_SUBSTRATE_TRACE) && sp_trace_rewind(sp_trace_of(loc), mark);
}

/* ---- metrics (core/metrics.h) ------------------------------------------------------------ */

/* The location's metric values (loc->metrics->now) at a recorded enter, just before the
 * enter itself: the trace writes them as a Metric record with the enter's time, as
 * Score-P's tracing substrate does. */
static inline void sp_substrates_metrics_enter(sp_location *loc, uint64_t time)
{
    if (sp_substrate_on(SP_SUBSTRATE_TRACE))
        sp_trace_metrics(sp_trace_of(loc), time, loc->metrics);
}

/* At a leave of `frame`, whose enter read `start`: the trace records the values (not for a
 * parameter's call-path-only frame, which has no Leave record), the call-path substrate
 * adds the differences to the frame's node (Score-P's dense metrics). */
static inline void sp_substrates_metrics_leave(sp_location *loc, const sp_frame *frame,
                                               const uint64_t *start, uint64_t time)
{
    if (sp_substrate_on(SP_SUBSTRATE_TRACE) && !(frame->flags & SP_FRAME_CALLPATH_ONLY))
        sp_trace_metrics(sp_trace_of(loc), time, loc->metrics);
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE))
        sp_profile_metrics(sp_profile_of(loc), frame->callpath, start, loc->metrics->now,
                           loc->metrics->count);
}

/* A frame closed by a rewind: only the call-path substrate still takes its values. */
static inline void sp_substrates_metrics_leave_rewound(sp_location *loc, const sp_frame *frame,
                                                       const uint64_t *start)
{
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE))
        sp_profile_metrics(sp_profile_of(loc), frame->callpath, start, loc->metrics->now,
                           loc->metrics->count);
}

/* The location ended: its root (the program, or the thread's top level) gets everything
 * since the location began. */
static inline void sp_substrates_metrics_root(sp_location *loc)
{
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE))
        sp_profile_metrics(sp_profile_of(loc), SP_PROFILE_ROOT, loc->metrics->base,
                           loc->metrics->now, loc->metrics->count);
}

/* ---- the end ------------------------------------------------------------------------------ */

/* Step 1, after every location is closed and the location ids are final (collective over
 * the group when m->collective): what must happen before the definitions are unified.
 * A trace that cannot be written by this process alone is given up here (the profile is
 * still written; sp_substrates_results tells why). */
/* The wait-state analysis of a traced MPI run (core/waitstates.h), before the trace's
 * records are encoded: the trace gives this rank's MPI operations, all ranks replay them
 * together, the profile gets the waiting times per call path. Never fails the end: when it
 * cannot run, the results say why. */
static inline void sp_substrates_wait_states(sp_measurement *m)
{
    memset(&m->wait_states, 0, sizeof m->wait_states);
    if (!m->collective || !m->grouped || !m->config.wait_states ||
        m->ipc.size < 2 || !m->ipc.ops->send || !m->ipc.ops->recv ||
        !sp_substrate_on(SP_SUBSTRATE_TRACE) || !sp_substrate_on(SP_SUBSTRATE_PROFILE))
        return;
    uint64_t begin = sp_clock_monotonic_ns();
    sp_ws_input in;
    sp_ws_result r;
    memset(&r, 0, sizeof r);
    char *err = m->wait_states.error;
    size_t errlen = sizeof m->wait_states.error;
    bool ready = sp_trace_wait_state_input(m, &in, err, errlen) == 0;
    if (ready && sp_ws_result_init(&r, in.path_count) != 0) {
        ready = false;
        sp_error(err, errlen, "out of memory in the wait-state analysis");
    }
    if (sp_ws_run(&m->ipc, ready, &in, &r, err, errlen) == 0) {
        sp_profile_add_wait_states(m, &in, &r);
        m->wait_states.ran = true;
        m->wait_states.violations = r.clock_violations;
        m->wait_states.unmatched = r.unmatched;
    }
    if (ready)
        sp_ws_input_free(&in);
    sp_ws_result_free(&r);
    m->wait_states.ns = sp_clock_monotonic_ns() - begin;
}

SP_MUST_CHECK static inline int sp_substrates_prepare(sp_measurement *m, const char *dir,
                                                      char *err, size_t errlen)
{
    sp_substrates_wait_states(m);
    if (sp_substrate_on(SP_SUBSTRATE_TRACE) && sp_trace_encode(m, dir, err, errlen) != 0)
        return -1;
    return 0;
}

/* What a location contributes to the unified definitions: its number of trace events. */
static inline uint64_t sp_substrates_location_events(const sp_location *loc)
{
    return sp_substrate_on(SP_SUBSTRATE_TRACE) ? sp_trace_location_events(loc) : 0;
}

/* Step 2, with the unified definitions: every output file. */
SP_MUST_CHECK static inline int sp_substrates_write(sp_measurement *m, sp_unified *u,
                                                    const char *dir, uint64_t ticks_per_second,
                                                    char *err, size_t errlen)
{
    if (sp_substrate_on(SP_SUBSTRATE_TRACE) && sp_trace_finish(m, u, err, errlen) != 0)
        return -1;
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE) &&
        sp_profile_write(m, u, dir, ticks_per_second, err, errlen) != 0)
        return -1;
    if (sp_substrate_on(SP_SUBSTRATE_LINES) &&
        sp_lines_write(m, u, dir, ticks_per_second, err, errlen) != 0)
        return -1;
    return 0;
}

/* ---- child processes (adapters/process) ------------------------------------------------ */

/* Each substrate's section of a part (core/part.h), sections[id] by substrate id. A child
 * process's (`handed_over`, at its end after step 1, sp_substrates_prepare into its part
 * directory): the root finds them in m->processes.parts[].section[slot] and takes them into
 * its own steps 1 and 2. A spawned process's: the root adopts them after the group's ranks.
 * The profile's section is the same for both; the trace's differs (a child encoded its own
 * event files, sp_trace_hand_over; a spawned process brings raw records, sp_trace_part).
 * The lines substrate has none: line profiles of other processes are not kept. */
static inline void sp_substrates_part(sp_measurement *m, uint64_t ticks_per_second,
                                      bool handed_over, sp_buffer *sections)
{
    if (sp_substrate_on(SP_SUBSTRATE_TRACE)) {
        if (handed_over)
            sp_trace_hand_over(m, &sections[SP_SUBSTRATE_TRACE]);
        else
            sp_trace_part(m, &sections[SP_SUBSTRATE_TRACE]);
    }
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE))
        sp_profile_part(m, ticks_per_second, &sections[SP_SUBSTRATE_PROFILE]);
}

/* The trace's raw records per event (core/measurement.h: sp_measurement_trace_records). */
static inline size_t sp_substrates_trace_records(sp_trace_event_records *out, size_t cap)
{
    return sp_trace_event_record_counts(out, cap);
}

/* Each substrate's part of the results (after writing or failing). */
static inline void sp_substrates_results(sp_measurement *m, sp_results *r)
{
    r->wait_states = m->wait_states.ran;
    r->wait_state_violations = m->wait_states.violations;
    r->wait_state_unmatched = m->wait_states.unmatched;
    r->wait_state_ns = m->wait_states.ns;
    snprintf(r->wait_state_error, sizeof r->wait_state_error, "%s", m->wait_states.error);
    if (sp_substrate_on(SP_SUBSTRATE_TRACE))
        sp_trace_results(m, r);
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE))
        sp_profile_results(m, r);
}

/* Everything the substrates still hold goes (files they leave behind are removed). */
static inline void sp_substrates_stop(sp_measurement *m)
{
    if (sp_substrate_on(SP_SUBSTRATE_TRACE))
        sp_trace_stop(m);
    if (sp_substrate_on(SP_SUBSTRATE_PROFILE))
        sp_profile_stop(m);
    if (sp_substrate_on(SP_SUBSTRATE_LINES))
        sp_lines_stop(m);
}

#endif
