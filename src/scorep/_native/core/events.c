/* Events on a location: its call stack and time order are kept here; what is recorded
 * goes to the substrates (core/substrates.h). */
#include "core/core_internal.h"
#include "core/substrates.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every event starts the same way: time never goes back within a location, and a change
 * of recording on/off since the location's last event is marked first. Returns whether
 * recording is on. */
static inline bool stamp(sp_location *loc, uint64_t *time);

static inline sp_frame *top_frame(sp_location *loc)
{
    return loc->depth ? &loc->stack[loc->depth - 1] : NULL;
}

/* Frames open and recorded when recording goes off are marked: leaving one of them while
 * still off moves the time off to its caller (see leave_frame). */
static void mark_frames_holding_off(sp_location *loc, bool off)
{
    for (uint32_t i = 0; i < loc->depth; i++) {
        if (!off)
            loc->stack[i].flags &= ~SP_FRAME_HOLDS_OFF;
        else if (loc->stack[i].flags & SP_FRAME_RECORDED)
            loc->stack[i].flags |= SP_FRAME_HOLDS_OFF;
    }
}

static void recording_changed(sp_location *loc, uint64_t at, bool on)
{
    loc->recording = on;
    loc->last_time = at;
    mark_frames_holding_off(loc, !on);
    sp_substrates_recording_changed(loc, top_frame(loc), at, on);
}

static void settle_pending(sp_location *loc)
{
    /* Cleared first: settling may itself cause a pause, which waits for the next event. */
    loc->substrate_pending = false;
    sp_substrates_settle(loc, top_frame(loc));
}

static inline void sync_recording(sp_location *loc, uint64_t time)
{
    uint32_t epoch = atomic_load_explicit(&sp_meas.recording_epoch, memory_order_relaxed);
    if (epoch == loc->recording_epoch)
        return;
    loc->recording_epoch = epoch;
    if (loc->substrate_pending)
        settle_pending(loc);
    bool on = atomic_load_explicit(&sp_meas.recording, memory_order_relaxed);
    if (on == loc->recording)
        return;
    uint64_t at = atomic_load_explicit(&sp_meas.recording_changed_at, memory_order_relaxed);
    if (at < loc->last_time)
        at = loc->last_time;
    if (at > time)
        at = time;
    recording_changed(loc, at, on);
}

static inline bool stamp(sp_location *loc, uint64_t *time)
{
    if (*time < loc->last_time)
        *time = loc->last_time;
    sync_recording(loc, *time);
    loc->last_time = *time;
    return loc->recording;
}

void sp_location_paused(sp_location *loc, uint64_t begin, uint64_t end)
{
    sp_substrates_paused(loc, begin, end);
    loc->substrate_pending = true;
    loc->recording_epoch =
        ~atomic_load_explicit(&sp_meas.recording_epoch, memory_order_relaxed);
}

static void enter_in_context(sp_location *loc, sp_frame *frame, const sp_frame *parent,
                             uint64_t time);
/* ---- metrics (core/metrics.h): read at every recorded enter and leave ----------------- */

/* Every location of a measurement with metrics has its metric state, none without: the
 * location at hand says it without a load of the measurement's globals. */
static inline bool metrics_on(const sp_location *loc)
{
    return __builtin_expect(loc->metrics != NULL, 0);
}

/* The start row of the frame in stack slot `slot`. */
static inline uint64_t *metric_start(sp_location *loc, uint32_t slot)
{
    return &loc->metrics->start[(size_t)slot * SP_MAX_METRICS];
}

/* The frame just pushed into slot depth - 1 starts with the values read now. */
__attribute__((noinline)) static void metrics_enter(sp_location *loc, uint64_t time,
                                                    bool record)
{
    sp_location_metrics *lm = loc->metrics;
    sp_metrics_read(loc, time);
    memcpy(metric_start(loc, loc->depth - 1), lm->now, lm->count * sizeof lm->now[0]);
    if (record)
        sp_substrates_metrics_enter(loc, time);
}

/* ---- what a sample stands for (see sp_location.covered) --------------------------------- */

/* The frame just pushed (stack depth loc->depth) starts with no measured callees. Under
 * unwinding only: enters there read the call stack already, and frames deeper than the
 * room found here keep no account (a later sample is then only capped by its top frame). */
static void covered_open(sp_location *loc)
{
    uint32_t depth = loc->depth;
    if (depth >= loc->covered_capacity) {
        uint32_t capacity = loc->covered_capacity ? loc->covered_capacity : 32;
        while (capacity <= depth)
            capacity *= 2;
        uint64_t *covered = realloc(loc->covered, capacity * sizeof *covered);
        if (!covered)
            return;
        memset(covered + loc->covered_capacity, 0,
               (capacity - loc->covered_capacity) * sizeof *covered);
        loc->covered = covered;
        loc->covered_capacity = capacity;
    }
    loc->covered[depth] = 0;
}

/* A recorded frame ended at `time` (loc->depth is its caller's depth): its time since the
 * last sample is measured, and no sample of its caller stands for it. */
static inline void covered_close(sp_location *loc, const sp_frame *frame, uint64_t time)
{
    if (loc->depth >= loc->covered_capacity)
        return;
    uint64_t from = frame->enter_time > loc->sample_since ? frame->enter_time : loc->sample_since;
    if (time > from)
        loc->covered[loc->depth] += time - from;
}

void sp_enter(sp_location *loc, uint32_t region, uintptr_t key, uint64_t time)
{
    bool recording = stamp(loc, &time);
    if (loc->depth == loc->capacity && !sp_location_grow_stack(loc))
        return; /* its leave will find no frame and be ignored */
    sp_frame *frame = &loc->stack[loc->depth++];
    frame->key = key;
    frame->region = region;
    frame->enter_time = time;
    if (loc->depth > loc->max_depth)
        loc->max_depth = loc->depth;
    const sp_frame *parent = loc->depth > 1 ? frame - 1 : NULL;
    frame->unwound = parent ? parent->unwound : 0;
    if (!recording) {
        frame->flags = 0;
        sp_substrates_enter_unrecorded(frame, parent);
        return;
    }
    frame->flags = SP_FRAME_RECORDED;
    loc->enters++;
    if (metrics_on(loc))
        metrics_enter(loc, time, true);
    if (__builtin_expect(sp_meas.unwinder != NULL, 0)) {
        covered_open(loc);
        enter_in_context(loc, frame, parent, time);
        return;
    }
    sp_substrates_enter(loc, frame, parent, time);
}

/* ---- calling contexts and samples ----------------------------------------------------- */

void sp_set_unwinder(sp_unwinder unwinder)
{
    sp_meas.unwinder = unwinder;
}

static bool context_reserve(sp_context_stack *c, uint32_t count)
{
    if (count <= c->capacity)
        return true;
    uint32_t capacity = c->capacity ? c->capacity : 64;
    while (capacity < count)
        capacity *= 2;
    sp_context_frame *frames = realloc(c->frames, capacity * sizeof *frames);
    if (!frames)
        return false;
    c->frames = frames;
    c->capacity = capacity;
    return true;
}

/* How many leading frames `frames` shares with the location's last calling context: the
 * frames that were already there at the last sample or enter (the same activation at the
 * same place), as opposed to those entered since. */
static uint32_t unchanged_frames(const sp_location *loc, const sp_context_frame *frames,
                                 uint32_t count)
{
    uint32_t n = count < loc->context.count ? count : loc->context.count;
    uint32_t i = 0;
    while (i < n && frames[i].frame == loc->context.frames[i].frame &&
           frames[i].region == loc->context.frames[i].region)
        i++;
    return i;
}

/* The part of a calling context below the innermost open frame `top`: the frames entered
 * after it (those below are part of its own path). A first frame of `top`'s own region is
 * the function a region of the same name wraps (@scorep.user.region): one node, not two. */
static uint32_t context_start(const sp_frame *top, const sp_context_frame *frames,
                              uint32_t count)
{
    uint32_t from = top ? top->unwound : 0;
    if (from > count)
        from = count; /* the frames that opened `top` returned while it stayed open */
    if (top && from < count && frames[from].region == top->region &&
        !(top->flags & SP_FRAME_CALLPATH_ONLY))
        from++;
    return from;
}

/* The enter of `frame` where the thread's own call stack says it happens. */
static void enter_in_context(sp_location *loc, sp_frame *frame, const sp_frame *parent,
                             uint64_t time)
{
    uint32_t count = sp_meas.unwinder(loc, loc->scratch.frames, loc->scratch.capacity);
    if (count > loc->scratch.capacity) {
        if (!context_reserve(&loc->scratch, count))
            count = 0;
        else
            count = sp_meas.unwinder(loc, loc->scratch.frames, loc->scratch.capacity);
        if (count > loc->scratch.capacity)
            count = loc->scratch.capacity;
    }
    const sp_context_frame *frames = loc->scratch.frames;
    uint32_t from = context_start(parent, frames, count);
    uint32_t same = unchanged_frames(loc, frames, count);
    frame->unwound = count;
    sp_substrates_enter_in_context(loc, frame, parent, frames + from, count - from,
                                   same > from ? same - from : 0, time);
    sp_context_stack swap = loc->context;
    loc->context = loc->scratch;
    loc->context.count = count;
    loc->scratch = swap;
}

bool sp_sample_begin(sp_location *loc)
{
    atomic_store(&loc->sampling, 1);
    /* Announced before looking: the location's thread either sees the sample and waits
     * for it (sp_event_section_begin), or the sample sees its event section and gives up. */
    if (atomic_load(&loc->busy)) {
        atomic_store(&loc->sampling, 0);
        return false;
    }
    return true;
}

void sp_sample_end(sp_location *loc)
{
    atomic_store(&loc->sampling, 0);
}

uint64_t sp_sample(sp_location *loc, uint64_t time, const sp_context_frame *frames,
                   uint32_t count, uint64_t weight)
{
    if (!stamp(loc, &time))
        return 0; /* recording is off: the profile has the time as MEASUREMENT OFF */
    const sp_frame *top = top_frame(loc);
    /* At most the time since the last sample or since the innermost open frame was entered
     * (the rest is its caller's), less what the frames that ended meanwhile measured: the
     * samples of a thread never add up to more than its time. */
    uint64_t start = top && top->enter_time > loc->sample_since ? top->enter_time
                                                                : loc->sample_since;
    uint64_t room = time > start ? time - start : 0;
    uint64_t measured = loc->depth < loc->covered_capacity ? loc->covered[loc->depth] : 0;
    room = room > measured ? room - measured : 0;
    /* Over a run the rooms add up to the time between the first and the last sample, as
     * the weights do; per sample they differ by how late each pass came after its read.
     * What a sample cannot take is owed to the next ones (it went to the program root). */
    bool regions = measured > 0 || start != loc->sample_since;
    uint64_t dropped = regions ? loc->sample_owed : 0;
    if (!regions)
        weight += loc->sample_owed;
    loc->sample_owed = 0;
    /* A location's first sample: its weight beyond the room is time before the location
     * was made (the sampler saw the thread before it made the location), none of its own;
     * owed, it counted as lost (1-12 ms a thread of 100 that ran 10 ms each, 1 000 Hz). */
    bool owes = !regions && loc->samples > 0;
    if (weight > room) {
        if (owes)
            loc->sample_owed = weight - room;
        weight = room;
    }
    uint32_t open = loc->depth < loc->covered_capacity ? loc->depth + 1 : loc->covered_capacity;
    for (uint32_t k = 0; k < open; k++)
        loc->covered[k] = 0;
    loc->sample_since = time;
    uint32_t from = context_start(top, frames, count);
    uint32_t same = unchanged_frames(loc, frames, count);
    loc->samples++;
    sp_substrates_sample(loc, top, frames + from, count - from, same > from ? same - from : 0,
                         weight, time);
    if (context_reserve(&loc->context, count)) {
        memcpy(loc->context.frames, frames, count * sizeof *frames);
        loc->context.count = count;
    } else {
        loc->context.count = 0;
    }
    return dropped;
}

/* The frame is already off the stack (loc->depth no longer counts it): during its leave the
 * top frame is its caller, which is where a pause caused by the leave belongs. */
/* Inlined into each caller, so that `metrics` is a constant there: without metrics the
 * leave path pays nothing for them. */
__attribute__((always_inline)) static inline void leave_frame_as(sp_location *loc,
                                                                const sp_frame *frame,
                                                                uint64_t time, bool metrics)
{
    uint32_t flags = frame->flags;
    if (!(flags & SP_FRAME_RECORDED))
        return;
    if (__builtin_expect(sp_meas.unwinder != NULL, 0))
        covered_close(loc, frame, time);
    /* The values were read once for all frames this event closes. */
    if (metrics)
        sp_substrates_metrics_leave(loc, frame, metric_start(loc, loc->depth), time);
    sp_substrates_leave(loc, frame, time);
    if (__builtin_expect(flags & SP_FRAME_HOLDS_OFF, 0) && !loc->recording)
        sp_substrates_left_while_off(loc, top_frame(loc), time);
}

static inline void leave_frame(sp_location *loc, const sp_frame *frame, uint64_t time)
{
    leave_frame_as(loc, frame, time, metrics_on(loc));
}

/* sp_leave's frames with metrics: out of line, so that without metrics the leave path has
 * one test of them. */
__attribute__((noinline)) static void leave_frames_with_metrics(sp_location *loc,
                                                                uint32_t target, uint64_t time)
{
    sp_metrics_read(loc, time);
    while (loc->depth > target) {
        loc->depth--;
        leave_frame_as(loc, &loc->stack[loc->depth], time, true);
    }
}

bool sp_leave(sp_location *loc, uintptr_t key, uint64_t time)
{
    uint32_t depth = loc->depth;
    uint32_t target;
    if (depth && loc->stack[depth - 1].key == key) {
        target = depth - 1;
    } else {
        /* A frame opened inside this one was never closed (a user region left open, a
         * generator abandoned by a greenlet switch): close it together with this one. */
        target = depth;
        for (uint32_t i = depth; i-- > 0;) {
            if (loc->stack[i].key == key) {
                target = i;
                break;
            }
        }
        if (target == depth) {
            loc->unmatched_leaves++;
            return false;
        }
    }
    stamp(loc, &time);
    if (metrics_on(loc)) {
        leave_frames_with_metrics(loc, target, time);
        return true;
    }
    while (loc->depth > target) {
        loc->depth--;
        leave_frame_as(loc, &loc->stack[loc->depth], time, false);
    }
    return true;
}

void sp_location_close(sp_location *loc, uint64_t time, int64_t exit_status)
{
    stamp(loc, &time);
    /* Recording is switched on again before the end, as Score-P does before it finalizes:
     * the time off ends here. */
    if (!loc->recording)
        recording_changed(loc, time, true);
    /* Another thread's frames close with the values its own thread read last. */
    if (metrics_on(loc) && sp_metrics_own(loc))
        sp_metrics_read(loc, SP_METRICS_READ_ALL);
    while (loc->depth > 0) {
        loc->depth--;
        leave_frame(loc, &loc->stack[loc->depth], time);
    }
    /* The program root's values: everything since the location began. */
    if (metrics_on(loc))
        sp_substrates_metrics_root(loc);
    if (loc->is_main)
        sp_substrates_program_end(loc, time, exit_status);
}

void sp_region_exit_without_enter(sp_location *loc, const char *region_name, uint64_t time)
{
    uint32_t value = sp_defs_string(&sp_meas.defs, region_name);
    uintptr_t key = SP_KEY_NAMED | sp_meas.error_region;
    sp_enter(loc, sp_meas.error_region, key, time);
    if (value != SP_NO_ID)
        sp_parameter_string(loc, sp_meas.error_parameter, value, time);
    sp_leave(loc, key, time);
    if (!sp_meas.error_reported) {
        sp_meas.error_reported = true;
        fputs("SCOREP_BINDING_PYTHON ERROR: There was a region exit without an enter!\n"
              "SCOREP_BINDING_PYTHON ERROR: For details look for \"error_region\" in the "
              "trace or profile.\n",
              stderr);
        fflush(stderr);
    }
}

/* The rest of the enclosing region's visit goes into a call-path node for the value: a
 * frame of the call-path substrate only, closed together with the region. */
static void record_parameter(sp_location *loc, uint32_t parameter, sp_parameter_value value,
                             uint64_t time)
{
    if (!stamp(loc, &time))
        return;
    const sp_frame *top = top_frame(loc);
    uint32_t node = sp_substrates_parameter(loc, top, parameter, value, time);
    if (node == SP_PROFILE_NO_NODE)
        return;
    if (loc->depth == loc->capacity && !sp_location_grow_stack(loc))
        return;
    sp_frame *frame = &loc->stack[loc->depth++];
    frame->key = SP_KEY_PARAMETER;
    frame->region = top ? top->region : sp_meas.program_region;
    frame->unwound = top ? top->unwound : 0;
    frame->flags = SP_FRAME_RECORDED | SP_FRAME_CALLPATH_ONLY;
    frame->enter_time = time;
    frame->callpath = node;
    frame->folded = SP_PROFILE_NO_NODE;
    if (sp_meas.unwinder)
        covered_open(loc);
    /* The parameter's node gets the metrics of the rest of the visit, as its time. */
    if (metrics_on(loc))
        metrics_enter(loc, time, false);
}

void sp_parameter_int(sp_location *loc, uint32_t parameter, int64_t value, uint64_t time)
{
    record_parameter(loc, parameter, (sp_parameter_value){SP_PARAM_INT64, value}, time);
}

void sp_parameter_uint(sp_location *loc, uint32_t parameter, uint64_t value, uint64_t time)
{
    record_parameter(loc, parameter, (sp_parameter_value){SP_PARAM_UINT64, (int64_t)value}, time);
}

void sp_parameter_string(sp_location *loc, uint32_t parameter, uint32_t string, uint64_t time)
{
    record_parameter(loc, parameter, (sp_parameter_value){SP_PARAM_STRING, string}, time);
}

void sp_line(sp_location *loc, uint32_t region, uint32_t line, uint32_t hits, uint64_t duration)
{
    if (loc->recording)
        sp_substrates_line(loc, region, line, hits, duration);
}

void sp_set_recording(bool on, uint64_t time)
{
    if (atomic_load(&sp_meas.recording) == on)
        return;
    atomic_store(&sp_meas.recording_changed_at, time);
    atomic_store(&sp_meas.recording, on);
    atomic_fetch_add(&sp_meas.recording_epoch, 1);
}

/* ---- rewind ------------------------------------------------------------------------------ */

void sp_rewind_begin(sp_location *loc, uint32_t region, uint64_t time)
{
    /* A pending MeasurementOnOff record belongs before the rewind point, or a discard
     * would take it back too. */
    stamp(loc, &time);
    if (loc->rewind_count < SP_MAX_REWIND_DEPTH) {
        __typeof__(loc->rewind[0]) *point = &loc->rewind[loc->rewind_count++];
        point->region = region;
        point->depth = loc->depth;
        point->time = time;
        point->mpi_events = loc->mpi_events;
        point->marked = sp_substrates_mark(loc, &point->mark);
    }
    sp_enter(loc, region, SP_KEY_NAMED | region, time);
}

bool sp_rewind_end(sp_location *loc, uint32_t region, bool discard, uint64_t time)
{
    uint32_t r = loc->rewind_count;
    while (r > 0 && loc->rewind[r - 1].region != region)
        r--;
    if (r == 0)
        return sp_leave(loc, SP_KEY_NAMED | region, time);
    __typeof__(loc->rewind[0]) point = loc->rewind[r - 1];
    loc->rewind_count = r - 1;
    uint32_t depth = point.depth;
    bool recording = stamp(loc, &time);
    bool rewound = discard && recording && depth < loc->depth && point.marked &&
                   sp_substrates_rewind(loc, &point.mark);
    if (!rewound)
        return sp_leave(loc, SP_KEY_NAMED | region, time);
    /* The substrates that can forgot every event since the rewind point; the frames opened
     * since then are closed in the others (which cannot take visits back). */
    if (metrics_on(loc))
        sp_metrics_read(loc, time);
    while (loc->depth > depth) {
        loc->depth--;
        if (loc->stack[loc->depth].flags & SP_FRAME_RECORDED) {
            if (metrics_on(loc))
                sp_substrates_metrics_leave_rewound(loc, &loc->stack[loc->depth],
                                                    metric_start(loc, loc->depth));
            sp_substrates_leave_rewound(loc, &loc->stack[loc->depth], time);
        }
    }
    if (loc->mpi_events != point.mpi_events)
        atomic_store_explicit(&sp_meas.mpi_events_unrecorded, true, memory_order_relaxed);
    sp_substrates_measurement_on_off(loc, point.time, false);
    sp_substrates_measurement_on_off(loc, time, true);
    return true;
}

/* ---- MPI ------------------------------------------------------------------------------- */

static void record_mpi(sp_location *loc, uint64_t time, const sp_mpi_event *e)
{
    if (stamp(loc, &time)) {
        loc->mpi_events++;
        sp_substrates_mpi(loc, top_frame(loc), e, time);
    } else {
        atomic_store_explicit(&sp_meas.mpi_events_unrecorded, true, memory_order_relaxed);
    }
}

/* The MPI event functions, a family: each fills one sp_mpi_event for record_mpi (the one
 * place that records them); the same shape, one per event kind of core/events.h. */
void sp_mpi_send(sp_location *loc, uint64_t time, uint32_t receiver, uint32_t comm,
                 uint32_t tag, uint64_t bytes)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_MPI_SEND, .comm = comm, .peer = receiver,
                                          .tag = tag, .bytes_sent = bytes});
}

void sp_mpi_recv(sp_location *loc, uint64_t time, uint32_t sender, uint32_t comm, uint32_t tag,
                 uint64_t bytes)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_MPI_RECV, .comm = comm, .peer = sender,
                                          .tag = tag, .bytes_received = bytes});
}

void sp_mpi_isend(sp_location *loc, uint64_t time, uint32_t receiver, uint32_t comm,
                  uint32_t tag, uint64_t bytes, uint64_t request)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_MPI_ISEND, .comm = comm, .peer = receiver,
                                          .tag = tag, .bytes_sent = bytes, .request = request});
}

void sp_mpi_isend_complete(sp_location *loc, uint64_t time, uint64_t request)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_MPI_ISEND_COMPLETE, .request = request});
}

void sp_mpi_irecv_request(sp_location *loc, uint64_t time, uint64_t request)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_MPI_IRECV_REQUEST, .request = request});
}

void sp_mpi_irecv(sp_location *loc, uint64_t time, uint32_t sender, uint32_t comm, uint32_t tag,
                  uint64_t bytes, uint64_t request)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_MPI_IRECV, .comm = comm, .peer = sender,
                                          .tag = tag, .bytes_received = bytes,
                                          .request = request});
}

void sp_mpi_request_test(sp_location *loc, uint64_t time, uint64_t request)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_MPI_REQUEST_TEST, .request = request});
}

void sp_mpi_request_cancelled(sp_location *loc, uint64_t time, uint64_t request)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_MPI_REQUEST_CANCELLED, .request = request});
}

void sp_mpi_collective_begin(sp_location *loc, uint64_t time)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_MPI_COLLECTIVE_BEGIN});
}

void sp_mpi_collective_end(sp_location *loc, uint64_t time, sp_collective_op op, uint32_t comm,
                           uint32_t root, uint64_t sent, uint64_t received)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_MPI_COLLECTIVE_END, .comm = comm,
                                          .root = root, .op = op, .bytes_sent = sent,
                                          .bytes_received = received});
}

void sp_mpi_icoll_request(sp_location *loc, uint64_t time, uint64_t request)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_MPI_ICOLL_REQUEST, .request = request});
}

void sp_mpi_icoll_complete(sp_location *loc, uint64_t time, sp_collective_op op, uint32_t comm,
                           uint32_t root, uint64_t sent, uint64_t received, uint64_t request)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_MPI_ICOLL_COMPLETE, .comm = comm,
                                          .root = root, .op = op, .bytes_sent = sent,
                                          .bytes_received = received, .request = request});
}

void sp_mpi_comm_create(sp_location *loc, uint64_t time, uint32_t comm)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_MPI_COMM_CREATE, .comm = comm});
}

void sp_mpi_comm_destroy(sp_location *loc, uint64_t time, uint32_t comm)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_MPI_COMM_DESTROY, .comm = comm});
}

/* ---- one-sided communication ------------------------------------------------------------ */

void sp_rma_win_create(sp_location *loc, uint64_t time, uint32_t win)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_RMA_WIN_CREATE, .comm = win});
}

void sp_rma_win_destroy(sp_location *loc, uint64_t time, uint32_t win)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_RMA_WIN_DESTROY, .comm = win});
}

void sp_rma_collective_begin(sp_location *loc, uint64_t time)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_RMA_COLLECTIVE_BEGIN});
}

void sp_rma_collective_end(sp_location *loc, uint64_t time, sp_collective_op op,
                           uint32_t sync_level, uint32_t win, uint32_t root, uint64_t sent,
                           uint64_t received)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_RMA_COLLECTIVE_END, .comm = win,
                                          .root = root, .op = op, .detail = sync_level,
                                          .bytes_sent = sent, .bytes_received = received});
}

void sp_rma_group_sync(sp_location *loc, uint64_t time, uint32_t sync_level, uint32_t win,
                       uint32_t group)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_RMA_GROUP_SYNC, .comm = win,
                                          .detail = sync_level, .group = group});
}

void sp_rma_lock(sp_location *loc, uint64_t time, sp_mpi_event_kind kind, uint32_t win,
                 uint32_t target, uint64_t lock, uint32_t lock_type)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = kind, .comm = win, .peer = target,
                                          .request = lock, .detail = lock_type});
}

void sp_rma_release_lock(sp_location *loc, uint64_t time, uint32_t win, uint32_t target,
                         uint64_t lock)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_RMA_RELEASE_LOCK, .comm = win,
                                          .peer = target, .request = lock});
}

void sp_rma_sync(sp_location *loc, uint64_t time, uint32_t win, uint32_t target,
                 uint32_t sync_type)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_RMA_SYNC, .comm = win, .peer = target,
                                          .detail = sync_type});
}

void sp_rma_wait_change(sp_location *loc, uint64_t time, uint32_t win)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_RMA_WAIT_CHANGE, .comm = win});
}

void sp_rma_put(sp_location *loc, uint64_t time, uint32_t win, uint32_t target, uint64_t bytes,
                uint64_t matching)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_RMA_PUT, .comm = win, .peer = target,
                                          .bytes_sent = bytes, .request = matching});
}

void sp_rma_get(sp_location *loc, uint64_t time, uint32_t win, uint32_t target, uint64_t bytes,
                uint64_t matching)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_RMA_GET, .comm = win, .peer = target,
                                          .bytes_received = bytes, .request = matching});
}

void sp_rma_atomic(sp_location *loc, uint64_t time, uint32_t win, uint32_t target,
                   uint32_t type, uint64_t put, uint64_t got, uint64_t matching)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = SP_RMA_ATOMIC, .comm = win, .peer = target,
                                          .detail = type, .bytes_sent = put,
                                          .bytes_received = got, .request = matching});
}

void sp_rma_op(sp_location *loc, uint64_t time, sp_mpi_event_kind kind, uint32_t win,
               uint64_t matching)
{
    record_mpi(loc, time, &(sp_mpi_event){.kind = kind, .comm = win, .request = matching});
}

/* ---- I/O ------------------------------------------------------------------------------- */

static void record_io(sp_location *loc, uint64_t time, const sp_io_event *e)
{
    if (stamp(loc, &time))
        sp_substrates_io(loc, top_frame(loc), e, time);
}

void sp_io_create_handle(sp_location *loc, uint64_t time, sp_io_paradigm paradigm,
                         uint32_t handle, sp_io_access_mode mode, uint32_t creation_flags,
                         uint32_t status_flags)
{
    record_io(loc, time, &(sp_io_event){.kind = SP_IO_CREATE_HANDLE, .paradigm = paradigm,
                                        .handle = handle, .mode = (uint8_t)mode,
                                        .flags = creation_flags,
                                        .status_flags = status_flags});
}

void sp_io_destroy_handle(sp_location *loc, uint64_t time, sp_io_paradigm paradigm,
                          uint32_t handle)
{
    record_io(loc, time, &(sp_io_event){.kind = SP_IO_DESTROY_HANDLE, .paradigm = paradigm,
                                        .handle = handle});
}

void sp_io_duplicate_handle(sp_location *loc, uint64_t time, sp_io_paradigm paradigm,
                            uint32_t old_handle, uint32_t new_handle, uint32_t status_flags)
{
    record_io(loc, time, &(sp_io_event){.kind = SP_IO_DUPLICATE_HANDLE, .paradigm = paradigm,
                                        .handle = old_handle, .new_handle = new_handle,
                                        .status_flags = status_flags});
}

void sp_io_seek(sp_location *loc, uint64_t time, sp_io_paradigm paradigm, uint32_t handle,
                int64_t offset, sp_io_seek_whence whence, uint64_t offset_result)
{
    record_io(loc, time, &(sp_io_event){.kind = SP_IO_SEEK, .paradigm = paradigm,
                                        .handle = handle, .flags = whence, .offset = offset,
                                        .offset_result = offset_result});
}

void sp_io_operation_begin(sp_location *loc, uint64_t time, sp_io_paradigm paradigm,
                           uint32_t handle, sp_io_mode mode, uint32_t operation_flags,
                           uint64_t bytes_request, uint64_t matching_id)
{
    record_io(loc, time, &(sp_io_event){.kind = SP_IO_OPERATION_BEGIN, .paradigm = paradigm,
                                        .handle = handle, .mode = (uint8_t)mode,
                                        .flags = operation_flags, .bytes = bytes_request,
                                        .matching_id = matching_id});
}

void sp_io_operation_event(sp_location *loc, uint64_t time, sp_io_event_kind kind,
                           sp_io_paradigm paradigm, uint32_t handle, uint64_t matching_id)
{
    record_io(loc, time, &(sp_io_event){.kind = kind, .paradigm = paradigm, .handle = handle,
                                        .matching_id = matching_id});
}

void sp_io_operation_complete(sp_location *loc, uint64_t time, sp_io_paradigm paradigm,
                              uint32_t handle, sp_io_mode mode, uint64_t bytes_result,
                              uint64_t matching_id)
{
    record_io(loc, time, &(sp_io_event){.kind = SP_IO_OPERATION_COMPLETE, .paradigm = paradigm,
                                        .handle = handle, .mode = (uint8_t)mode,
                                        .bytes = bytes_result, .matching_id = matching_id});
}

/* ---- sections of threads that record without the GIL ------------------------------- */

sp_location *sp_event_section_begin(void)
{
    sp_location *loc = sp_location_cache_valid() ? sp_thread.location : NULL;
    if (!loc)
        return NULL;
    /* A count, not a flag: a section may open inside another one on the same thread (an
     * adapter defining something while it records). */
    atomic_fetch_add(&loc->busy, 1);
    /* Checked after announcing the section: the end of the measurement either sees the
     * section and waits for it, or the section sees that the measurement ended. */
    if (!sp_measurement_running() || !sp_location_cache_valid()) {
        atomic_fetch_sub(&loc->busy, 1);
        return NULL;
    }
    /* A sample being recorded into this location by another thread (sp_sample_begin) is
     * finished first: it takes microseconds. */
    while (__builtin_expect(atomic_load(&loc->sampling), 0))
        sched_yield();
    return loc;
}

void sp_event_section_end(sp_location *loc)
{
    atomic_fetch_sub(&loc->busy, 1);
}
