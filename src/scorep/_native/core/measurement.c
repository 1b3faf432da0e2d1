#include "core/measurement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "substrates/profile.h"
#include "substrates/trace.h"

sp_measurement sp_meas;
SP_TLS sp_thread_state sp_thread;

/* The trace substrate of the running measurement lives here rather than on the heap so
 * that starting a measurement allocates as little as possible. */
static sp_trace trace_substrate;

static char *copy_string(const char *text)
{
    return strdup(text ? text : "");
}

static void free_config_copies(sp_config *c)
{
    free((char *)c->experiment_dir);
    free((char *)c->profile_base_name);
    free((char *)c->program_name);
    free((char *)c->machine_name);
    free((char *)c->node_name);
    free((char *)c->creator);
    free((char *)c->filter_file);
    if (c->program_args) {
        for (uint32_t i = 0; i < c->program_argc; i++)
            free((char *)c->program_args[i]);
        free((void *)c->program_args);
    }
    memset(c, 0, sizeof *c);
}

static int copy_config(sp_config *dst, const sp_config *src)
{
    *dst = *src;
    dst->experiment_dir = copy_string(src->experiment_dir);
    dst->profile_base_name = copy_string(src->profile_base_name ? src->profile_base_name : "profile");
    dst->program_name = copy_string(src->program_name);
    dst->machine_name = copy_string(src->machine_name ? src->machine_name : "Linux");
    dst->node_name = copy_string(src->node_name ? src->node_name : "localhost");
    dst->creator = copy_string(src->creator ? src->creator : "scorep");
    dst->filter_file = copy_string(src->filter_file);
    dst->program_args = NULL;
    dst->program_argc = 0;
    if (src->program_argc) {
        const char **args = calloc(src->program_argc, sizeof *args);
        if (!args)
            return -1;
        dst->program_args = args;
        for (uint32_t i = 0; i < src->program_argc; i++) {
            args[i] = copy_string(src->program_args[i]);
            dst->program_argc = i + 1;
            if (!args[i])
                return -1;
        }
    }
    if (!dst->experiment_dir || !dst->profile_base_name || !dst->program_name ||
        !dst->machine_name || !dst->node_name || !dst->creator || !dst->filter_file)
        return -1;
    return 0;
}

static void free_locations(void)
{
    uint32_t n = atomic_load(&sp_meas.location_count);
    for (uint32_t i = 0; i < n; i++) {
        sp_location *loc = sp_meas.locations[i];
        if (!loc)
            continue;
        sp_profile_location_free(loc);
        free(loc->stack);
        free(loc->name);
        free(loc);
        sp_meas.locations[i] = NULL;
    }
    atomic_store(&sp_meas.location_count, 0);
}

/* Frees everything a started (or half-started) measurement holds. */
static void release_measurement(void)
{
    if (sp_meas.trace)
        sp_trace_abort(sp_meas.trace);
    sp_meas.trace = NULL;
    free_locations();
    sp_filter_free(sp_meas.filter);
    sp_meas.filter = NULL;
    sp_defs_free(&sp_meas.defs);
    sp_chunk_pool_destroy(&sp_meas.pool);
    pthread_mutex_destroy(&sp_meas.locations_lock);
    free_config_copies(&sp_meas.config);
}

static sp_location *create_location(uint64_t thread_ident, const char *name)
{
    sp_location *loc = calloc(1, sizeof *loc);
    if (!loc)
        return NULL;
    loc->name = copy_string(name);
    loc->thread_ident = thread_ident;
    loc->last_time = sp_meas.start.ticks;
    loc->recording = true;
    loc->recording_epoch = 0;
    if (!loc->name || !sp_location_grow_stack(loc)) {
        free(loc->name);
        free(loc);
        return NULL;
    }
    pthread_mutex_lock(&sp_meas.locations_lock);
    uint32_t index = atomic_load(&sp_meas.location_count);
    if (index >= SP_MAX_LOCATIONS) {
        pthread_mutex_unlock(&sp_meas.locations_lock);
        free(loc->stack);
        free(loc->name);
        free(loc);
        return NULL;
    }
    loc->index = index;
    loc->id = index;
    loc->is_main = index == 0;
    if ((sp_meas.trace && sp_trace_location_open(sp_meas.trace, loc) != 0) ||
        (sp_meas.config.profiling && sp_profile_location_init(loc, sp_meas.program_region) != 0)) {
        pthread_mutex_unlock(&sp_meas.locations_lock);
        sp_profile_location_free(loc);
        free(loc->stack);
        free(loc->name);
        free(loc);
        return NULL;
    }
    sp_meas.locations[index] = loc;
    atomic_store(&sp_meas.location_count, index + 1);
    pthread_mutex_unlock(&sp_meas.locations_lock);
    return loc;
}

int sp_measurement_start(const sp_config *config, char *err, size_t errlen)
{
    if (atomic_load(&sp_meas.state) != SP_STATE_IDLE) {
        snprintf(err, errlen, "a measurement is already running");
        return -1;
    }
    sp_measurement *m = &sp_meas;
    /* Keep the generation across measurements: threads compare against it. */
    uint32_t generation = atomic_load(&m->generation);
    memset(m, 0, sizeof *m);
    atomic_store(&m->generation, generation);
    if (pthread_mutex_init(&m->locations_lock, NULL) != 0 || sp_defs_init(&m->defs) != 0 ||
        sp_chunk_pool_init(&m->pool, config->total_memory, SP_CHUNK_SIZE) != 0 ||
        copy_config(&m->config, config) != 0) {
        snprintf(err, errlen, "out of memory while starting the measurement");
        release_measurement();
        return -1;
    }
    if (m->config.filter_file[0] &&
        sp_filter_load(m->config.filter_file, &m->filter, err, errlen) != 0) {
        release_measurement();
        return -1;
    }
    sp_clock_timer = config->timer;
    sp_clock_take_anchor(&m->start);

    m->program_region = sp_defs_named_region(&m->defs, m->config.program_name, "", -1,
                                             SP_PARADIGM_MEASUREMENT, SP_ROLE_ARTIFICIAL,
                                             SP_REGION_PROGRAM);
    m->error_region = sp_defs_named_region(&m->defs, "error_region", "", -1, SP_PARADIGM_USER,
                                           SP_ROLE_FUNCTION, SP_REGION_USER);
    m->error_parameter = sp_defs_parameter(&m->defs, "leave-region", SP_PARAM_STRING);
    if (m->program_region == SP_NO_ID || m->error_region == SP_NO_ID ||
        m->error_parameter == SP_NO_ID) {
        snprintf(err, errlen, "out of memory while starting the measurement");
        release_measurement();
        return -1;
    }
    atomic_store(&m->recording, true);

    if (m->config.tracing) {
        memset(&trace_substrate, 0, sizeof trace_substrate);
        if (sp_trace_open(&trace_substrate, m, err, errlen) != 0) {
            release_measurement();
            return -1;
        }
        m->trace = &trace_substrate;
    }
    atomic_store(&m->state, SP_STATE_RUNNING);
    atomic_fetch_add(&m->generation, 1);
    return 0;
}

sp_location *sp_location_attach(uint64_t thread_ident, const char *name, bool register_thread)
{
    uint32_t generation = atomic_load_explicit(&sp_meas.generation, memory_order_acquire);
    if (sp_thread.generation == generation && sp_thread.location) {
        if (register_thread && name)
            sp_location_set_name(sp_thread.location, name);
        return sp_thread.location;
    }
    sp_location *loc = NULL;
    if (sp_measurement_running() && (register_thread || sp_meas.config.all_threads))
        loc = create_location(thread_ident, name ? name : "Thread");
    sp_thread.location = loc;
    sp_thread.generation = generation;
    if (loc && loc->is_main && sp_meas.trace) {
        /* ProgramBegin goes first into the first location: no event of the process may be
         * older than it. */
        sp_trace_program_begin(sp_meas.trace, loc, sp_meas.start.ticks);
    }
    return loc;
}

void sp_location_set_name(sp_location *loc, const char *name)
{
    char *copy = copy_string(name);
    if (!copy)
        return;
    free(loc->name);
    loc->name = copy;
}

static inline void sync_recording(sp_location *loc, uint64_t time)
{
    uint32_t epoch = atomic_load_explicit(&sp_meas.recording_epoch, memory_order_relaxed);
    if (epoch == loc->recording_epoch)
        return;
    loc->recording_epoch = epoch;
    bool on = atomic_load_explicit(&sp_meas.recording, memory_order_relaxed);
    if (on == loc->recording)
        return;
    loc->recording = on;
    uint64_t at = atomic_load_explicit(&sp_meas.recording_changed_at, memory_order_relaxed);
    if (at < loc->last_time)
        at = loc->last_time;
    if (at > time)
        at = time;
    loc->last_time = at;
    if (sp_meas.trace)
        sp_trace_measurement_on_off(sp_meas.trace, loc, at, on);
}

void sp_enter(sp_location *loc, uint32_t region, uintptr_t key, uint64_t time)
{
    if (time < loc->last_time)
        time = loc->last_time;
    sync_recording(loc, time);
    loc->last_time = time;
    if (loc->depth == loc->capacity && !sp_location_grow_stack(loc))
        return; /* its leave will find no frame and be ignored */
    sp_frame *frame = &loc->stack[loc->depth++];
    frame->key = key;
    frame->region = region;
    frame->enter_time = time;
    if (loc->depth > loc->max_depth)
        loc->max_depth = loc->depth;
    uint32_t parent_node = loc->depth > 1 ? frame[-1].profile_node : 0;
    if (!loc->recording) {
        frame->flags = 0;
        /* Calls made inside it while recording is on again belong to its caller. */
        frame->profile_node = parent_node;
        return;
    }
    frame->flags = SP_FRAME_RECORDED;
    loc->enters++;
    if (sp_meas.trace)
        sp_trace_enter(sp_meas.trace, loc, time, region);
    frame->profile_node = sp_meas.config.profiling ? sp_profile_enter(loc, parent_node, region)
                                                   : SP_PROFILE_NO_NODE;
}

static inline void leave_frame(sp_location *loc, const sp_frame *frame, uint64_t time)
{
    if (!(frame->flags & SP_FRAME_RECORDED))
        return;
    if (sp_meas.trace && !(frame->flags & SP_FRAME_PROFILE_ONLY))
        sp_trace_leave(sp_meas.trace, loc, time, frame->region);
    if (sp_meas.config.profiling)
        sp_profile_leave(loc, frame->profile_node, time - frame->enter_time);
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
    if (time < loc->last_time)
        time = loc->last_time;
    sync_recording(loc, time);
    loc->last_time = time;
    for (uint32_t i = depth; i-- > target;)
        leave_frame(loc, &loc->stack[i], time);
    loc->depth = target;
    return true;
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

static inline bool begin_parameter(sp_location *loc, uint64_t *time)
{
    if (*time < loc->last_time)
        *time = loc->last_time;
    sync_recording(loc, *time);
    loc->last_time = *time;
    return loc->recording;
}

/* The rest of the enclosing region's visit goes into a call-path node for the value: a
 * frame of the profile only, closed together with the region. */
static void split_call_path(sp_location *loc, sp_profile_node_kind kind, uint32_t parameter,
                            int64_t value, uint64_t time)
{
    if (!sp_meas.config.profiling)
        return;
    sp_frame *top = loc->depth ? &loc->stack[loc->depth - 1] : NULL;
    uint32_t parent = top ? top->profile_node : 0;
    uint32_t region = top ? top->region : sp_meas.program_region;
    uint32_t node = sp_profile_parameter(loc, parent, region, kind, parameter, value);
    if (node == SP_PROFILE_NO_NODE)
        return;
    if (loc->depth == loc->capacity && !sp_location_grow_stack(loc))
        return;
    sp_frame *frame = &loc->stack[loc->depth++];
    frame->key = SP_KEY_PARAMETER;
    frame->region = region;
    frame->flags = SP_FRAME_RECORDED | SP_FRAME_PROFILE_ONLY;
    frame->enter_time = time;
    frame->profile_node = node;
}

void sp_parameter_int(sp_location *loc, uint32_t parameter, int64_t value, uint64_t time)
{
    if (!begin_parameter(loc, &time))
        return;
    if (sp_meas.trace)
        sp_trace_parameter_int(sp_meas.trace, loc, time, parameter, value);
    split_call_path(loc, SP_NODE_PARAMETER_INT, parameter, value, time);
}

void sp_parameter_uint(sp_location *loc, uint32_t parameter, uint64_t value, uint64_t time)
{
    if (!begin_parameter(loc, &time))
        return;
    if (sp_meas.trace)
        sp_trace_parameter_uint(sp_meas.trace, loc, time, parameter, value);
    /* CUBE's numeric parameters are signed 64-bit, as Score-P writes them. */
    split_call_path(loc, SP_NODE_PARAMETER_INT, parameter, (int64_t)value, time);
}

void sp_parameter_string(sp_location *loc, uint32_t parameter, uint32_t string, uint64_t time)
{
    if (!begin_parameter(loc, &time))
        return;
    if (sp_meas.trace)
        sp_trace_parameter_string(sp_meas.trace, loc, time, parameter, string);
    split_call_path(loc, SP_NODE_PARAMETER_STRING, parameter, string, time);
}

void sp_set_recording(bool on, uint64_t time)
{
    if (atomic_load(&sp_meas.recording) == on)
        return;
    atomic_store(&sp_meas.recording_changed_at, time);
    atomic_store(&sp_meas.recording, on);
    atomic_fetch_add(&sp_meas.recording_epoch, 1);
}

void sp_rewind_begin(sp_location *loc, uint32_t region, uint64_t time)
{
    if (time < loc->last_time)
        time = loc->last_time;
    if (loc->rewind_count < sizeof loc->rewind / sizeof loc->rewind[0]) {
        __typeof__(loc->rewind[0]) *point = &loc->rewind[loc->rewind_count++];
        point->region = region;
        point->depth = loc->depth;
        point->time = time;
        point->trace_chunk = point->trace_pos = NULL;
        if (sp_meas.trace)
            sp_trace_mark(loc, &point->trace_chunk, &point->trace_pos, &point->trace_flushes);
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
    uint64_t begin_time = point.time;
    if (time < loc->last_time)
        time = loc->last_time;
    sync_recording(loc, time);
    bool rewound = discard && loc->recording && depth < loc->depth && sp_meas.trace &&
                   sp_trace_rewind(sp_meas.trace, loc, point.trace_chunk, point.trace_pos,
                                   point.trace_flushes);
    if (!rewound)
        return sp_leave(loc, SP_KEY_NAMED | region, time);
    /* The trace forgot every event since the rewind point; the frames opened since then
     * must not be left in it either. The profile keeps them (it cannot take visits back). */
    if (sp_meas.config.profiling)
        for (uint32_t i = loc->depth; i-- > depth;)
            if (loc->stack[i].flags & SP_FRAME_RECORDED)
                sp_profile_leave(loc, loc->stack[i].profile_node, time - loc->stack[i].enter_time);
    loc->depth = depth;
    loc->last_time = time;
    sp_trace_measurement_on_off(sp_meas.trace, loc, begin_time, false);
    sp_trace_measurement_on_off(sp_meas.trace, loc, time, true);
    return true;
}

static void close_location(sp_location *loc, uint64_t time, int64_t exit_status)
{
    if (time < loc->last_time)
        time = loc->last_time;
    sync_recording(loc, time);
    for (uint32_t i = loc->depth; i-- > 0;)
        leave_frame(loc, &loc->stack[i], time);
    loc->depth = 0;
    loc->last_time = time;
    if (loc->is_main && sp_meas.trace)
        sp_trace_program_end(sp_meas.trace, loc, time, exit_status);
}

int sp_measurement_finalize(int64_t exit_status, sp_results *results, char *err, size_t errlen)
{
    int expected = SP_STATE_RUNNING;
    if (!atomic_compare_exchange_strong(&sp_meas.state, &expected, SP_STATE_FINALIZING)) {
        snprintf(err, errlen, "no measurement is running");
        return -1;
    }
    sp_measurement *m = &sp_meas;
    atomic_fetch_add(&m->generation, 1);
    sp_clock_take_anchor(&m->end);
    uint64_t end_time = m->end.ticks;
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t i = 0; i < nlocs; i++)
        if (m->locations[i]->last_time > end_time)
            end_time = m->locations[i]->last_time;
    for (uint32_t i = 0; i < nlocs; i++)
        close_location(m->locations[i], end_time, exit_status);

    sp_results r = {0};
    r.ticks_per_second = sp_clock_ticks_per_second(&m->start, &m->end);
    r.start_time = m->start.ticks;
    r.end_time = end_time;
    r.realtime_start_ns = m->start.realtime_ns;
    r.locations = nlocs;
    r.regions = m->defs.region_count;
    for (uint32_t i = 0; i < nlocs; i++) {
        sp_location *loc = m->locations[i];
        r.enters += loc->enters;
        r.unmatched_leaves += loc->unmatched_leaves;
        if (loc->max_depth > r.max_depth)
            r.max_depth = loc->max_depth;
    }

    for (uint32_t i = 0; i < nlocs && m->config.profiling; i++) {
        r.profile_folded_calls += m->locations[i]->profile->folded_calls;
        r.profile_dropped_calls += m->locations[i]->profile->dropped_calls;
        r.profile_folded_parameters += m->locations[i]->profile->folded_parameters;
    }

    int status = 0;
    if (m->trace) {
        status = sp_trace_close(m->trace, err, errlen);
        m->trace = NULL;
    }
    if (m->config.profiling) {
        char profile_err[512] = "";
        if (sp_profile_write(m, r.ticks_per_second, profile_err, sizeof profile_err) != 0 &&
            status == 0) {
            snprintf(err, errlen, "%s", profile_err);
            status = -1;
        }
    }
    for (uint32_t i = 0; i < nlocs; i++) {
        r.trace_flushes += m->locations[i]->trace_flushes;
        r.trace_lost_records += m->locations[i]->trace_lost_records;
    }
    r.memory_peak_bytes = (uint64_t)m->pool.peak_chunks * m->pool.chunk_size;
    r.memory_over_budget_bytes = (uint64_t)m->pool.over_budget_chunks * m->pool.chunk_size;
    if (results)
        *results = r;
    release_measurement();
    atomic_store(&m->state, SP_STATE_IDLE);
    return status;
}

void sp_measurement_abandon(void)
{
    if (atomic_load(&sp_meas.state) == SP_STATE_IDLE)
        return;
    /* The copies of buffers and writers are leaked on purpose: closing them would write. */
    sp_meas.trace = NULL;
    atomic_fetch_add(&sp_meas.generation, 1);
    atomic_store(&sp_meas.state, SP_STATE_IDLE);
}
