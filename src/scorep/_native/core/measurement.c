#include "core/measurement.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/unify.h"

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
    free(sp_meas.output_dir);
    sp_meas.output_dir = NULL;
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

static void abandon_in_forked_child(void);

static void register_fork_handler_once(void)
{
    if (pthread_atfork(NULL, NULL, abandon_in_forked_child) != 0)
        return; /* then only the Python side's os.register_at_fork handler protects */
}

/* A child made by fork() (os.fork, multiprocessing's fork start method, a C library) shares
 * the parent's experiment files and may inherit core locks held by other threads: it stops
 * measuring at once and never writes. The Python side does the same for its own state. */
static void abandon_in_forked_child(void)
{
    sp_measurement_abandon();
}

static void register_fork_handler(void)
{
    /* pthread_atfork handlers cannot be removed: registered once per process. */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    (void)pthread_once(&once, register_fork_handler_once);
}

int sp_measurement_start(const sp_config *config, char *err, size_t errlen)
{
    register_fork_handler();
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
        sp_trace_init(&trace_substrate, m);
        m->trace = &trace_substrate;
        /* With MPI the directory exists only once the ranks agreed on it. */
        if (!m->config.mpi)
            sp_trace_set_spill_dir(m->trace, m->config.experiment_dir);
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
    /* A pending MeasurementOnOff record belongs before the rewind point, or a discard
     * would take it back too. */
    sync_recording(loc, time);
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

/* ---- sections of threads that record without the GIL ------------------------------- */

sp_location *sp_event_section_begin(void)
{
    sp_location *loc = sp_location_cache_valid() ? sp_thread.location : NULL;
    if (!loc)
        return NULL;
    atomic_store(&loc->busy, 1);
    /* Checked after announcing the section: the end of the measurement either sees the
     * section and waits for it, or the section sees that the measurement ended. */
    if (!sp_measurement_running() || !sp_location_cache_valid()) {
        atomic_store(&loc->busy, 0);
        return NULL;
    }
    return loc;
}

void sp_event_section_end(sp_location *loc)
{
    atomic_store(&loc->busy, 0);
}

static void wait_for_sections(sp_measurement *m)
{
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t i = 0; i < nlocs; i++)
        while (atomic_load(&m->locations[i]->busy))
            sched_yield();
}

/* ---- MPI --------------------------------------------------------------------------- */

static int make_directories(const char *path)
{
    char buffer[4096];
    if (snprintf(buffer, sizeof buffer, "%s", path) >= (int)sizeof buffer)
        return -1;
    for (char *p = buffer + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buffer, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buffer, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

/* Rank 0's part of MPI_Init: the experiment directory, as the single-process tool prepares
 * it (an existing non-empty one is moved aside, never deleted). */
static int prepare_experiment_dir(const char *path, bool overwrite, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "experiment directory %s exists and is not a directory", path);
            return -1;
        }
        bool empty = rmdir(path) == 0; /* an empty one goes and is made again below */
        if (!empty) {
            if (!overwrite) {
                snprintf(err, errlen,
                         "experiment directory %s exists and SCOREP_OVERWRITE_EXPERIMENT_DIRECTORY "
                         "is false", path);
                return -1;
            }
            struct tm tm;
            time_t when = st.st_mtime;
            localtime_r(&when, &tm);
            char aside[4200];
            size_t n = (size_t)snprintf(aside, sizeof aside, "%s-", path);
            strftime(aside + n, sizeof aside - n, "%Y%m%d_%H%M%S", &tm);
            char candidate[4300];
            snprintf(candidate, sizeof candidate, "%s", aside);
            for (int k = 2; access(candidate, F_OK) == 0; k++)
                snprintf(candidate, sizeof candidate, "%s-%d", aside, k);
            if (rename(path, candidate) != 0) {
                snprintf(err, errlen, "cannot move %s aside: %s", path, strerror(errno));
                return -1;
            }
        }
    }
    if (make_directories(path) != 0) {
        snprintf(err, errlen, "cannot create experiment directory %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int sp_mpi_initialized(uint32_t rank, uint32_t size, const sp_mpi_ops *ops, int requested,
                       int provided, char *err, size_t errlen)
{
    sp_measurement *m = &sp_meas;
    if (!sp_measurement_running() || !m->config.mpi)
        return 0;
    m->mpi.rank = rank;
    m->mpi.size = size;
    m->mpi.thread_requested = requested;
    m->mpi.thread_provided = provided;
    /* Rank 0 prepares the directory; everyone adopts its path (a default name carries a
     * time and would differ between ranks). */
    struct {
        int32_t status;
        char path[4096];
        char error[8192]; /* room for the path and the reason */
    } agreed;
    memset(&agreed, 0, sizeof agreed);
    if (rank == 0) {
        snprintf(agreed.path, sizeof agreed.path, "%s", m->config.experiment_dir);
        agreed.status = prepare_experiment_dir(agreed.path, m->config.overwrite, agreed.error,
                                               sizeof agreed.error);
    }
    if (ops->bcast(&agreed, sizeof agreed) != 0) {
        snprintf(err, errlen, "agreeing on the experiment directory failed");
        return -1;
    }
    if (agreed.status != 0) {
        snprintf(err, errlen, "%s", agreed.error);
        return -1;
    }
    char *path = strdup(agreed.path);
    if (!path) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    free((char *)m->config.experiment_dir);
    m->config.experiment_dir = path;
    if (m->trace)
        sp_trace_set_spill_dir(m->trace, path);
    int64_t offset = 0;
    ops->clock_offset(&offset);
    m->mpi.offset_begin_ns = offset;
    m->mpi.sync_begin_ns = sp_clock_monotonic_ns();
    m->mpi.ops = ops;
    return 0;
}

/* Set once by the bindings; read only on the MPI_Abort path. Global because the MPI
 * wrapper that triggers it carries no context from the host. */
static sp_abort_hook abort_hook;

void sp_measurement_set_abort_hook(sp_abort_hook hook)
{
    abort_hook = hook;
}

void sp_mpi_aborting(int errorcode)
{
    sp_measurement *m = &sp_meas;
    if (!sp_measurement_running() || !m->mpi.ops)
        return;
    m->mpi.aborting = true;
    m->mpi.abort_code = errorcode;
    m->mpi.status = sp_measurement_finalize(errorcode, &m->mpi.results, m->mpi.error,
                                            sizeof m->mpi.error);
    m->mpi.finalized = true;
    if (abort_hook)
        abort_hook();
}

void sp_mpi_finalizing(void)
{
    sp_measurement *m = &sp_meas;
    if (!sp_measurement_running() || !m->mpi.ops)
        return;
    /* The program's exit status is not known yet when it finalizes MPI itself. */
    m->mpi.status = sp_measurement_finalize(0, &m->mpi.results, m->mpi.error, sizeof m->mpi.error);
    m->mpi.finalized = true;
}

static void mpi_record_bytes(sp_location *loc, uint64_t sent, uint64_t received)
{
    if (!sp_meas.config.profiling || !loc->depth)
        return;
    uint32_t node = loc->stack[loc->depth - 1].profile_node;
    if (node == SP_PROFILE_NO_NODE)
        return;
    sp_profile_node *n = sp_profile_node_at(loc->profile, node);
    n->bytes_sent += sent;
    n->bytes_received += received;
}

static inline bool begin_mpi_event(sp_location *loc, uint64_t *time)
{
    if (*time < loc->last_time)
        *time = loc->last_time;
    sync_recording(loc, *time);
    loc->last_time = *time;
    return loc->recording;
}

void sp_mpi_send(sp_location *loc, uint64_t time, uint32_t receiver, uint32_t comm,
                 uint32_t tag, uint64_t bytes)
{
    if (!begin_mpi_event(loc, &time))
        return;
    if (sp_meas.trace)
        sp_trace_record_put_value(sp_meas.trace, loc, time, SP_REC_MPI_SEND, comm, bytes,
                                  (uint64_t)receiver << 32 | tag);
    mpi_record_bytes(loc, bytes, 0);
}

void sp_mpi_recv(sp_location *loc, uint64_t time, uint32_t sender, uint32_t comm, uint32_t tag,
                 uint64_t bytes)
{
    if (!begin_mpi_event(loc, &time))
        return;
    if (sp_meas.trace)
        sp_trace_record_put_value(sp_meas.trace, loc, time, SP_REC_MPI_RECV, comm, bytes,
                                  (uint64_t)sender << 32 | tag);
    mpi_record_bytes(loc, 0, bytes);
}

void sp_mpi_isend(sp_location *loc, uint64_t time, uint32_t receiver, uint32_t comm,
                  uint32_t tag, uint64_t bytes, uint64_t request)
{
    if (!begin_mpi_event(loc, &time))
        return;
    if (sp_meas.trace)
        sp_trace_record_put_values(sp_meas.trace, loc, time, SP_REC_MPI_ISEND, comm, bytes,
                                   (uint64_t)receiver << 32 | tag, request, 0);
    mpi_record_bytes(loc, bytes, 0);
}

void sp_mpi_isend_complete(sp_location *loc, uint64_t time, uint64_t request)
{
    if (begin_mpi_event(loc, &time) && sp_meas.trace)
        sp_trace_record_put_value(sp_meas.trace, loc, time, SP_REC_MPI_ISEND_COMPLETE, 0, request, 0);
}

void sp_mpi_irecv_request(sp_location *loc, uint64_t time, uint64_t request)
{
    if (begin_mpi_event(loc, &time) && sp_meas.trace)
        sp_trace_record_put_value(sp_meas.trace, loc, time, SP_REC_MPI_IRECV_REQUEST, 0, request, 0);
}

void sp_mpi_irecv(sp_location *loc, uint64_t time, uint32_t sender, uint32_t comm, uint32_t tag,
                  uint64_t bytes, uint64_t request)
{
    if (!begin_mpi_event(loc, &time))
        return;
    if (sp_meas.trace)
        sp_trace_record_put_values(sp_meas.trace, loc, time, SP_REC_MPI_IRECV, comm, bytes,
                                   (uint64_t)sender << 32 | tag, request, 0);
    mpi_record_bytes(loc, 0, bytes);
}

void sp_mpi_request_test(sp_location *loc, uint64_t time, uint64_t request)
{
    if (begin_mpi_event(loc, &time) && sp_meas.trace)
        sp_trace_record_put_value(sp_meas.trace, loc, time, SP_REC_MPI_REQUEST_TEST, 0, request, 0);
}

void sp_mpi_collective_begin(sp_location *loc, uint64_t time)
{
    if (begin_mpi_event(loc, &time) && sp_meas.trace)
        sp_trace_record_put(sp_meas.trace, loc, time, SP_REC_MPI_COLLECTIVE_BEGIN, 0);
}

void sp_mpi_collective_end(sp_location *loc, uint64_t time, uint32_t op, uint32_t comm,
                           uint32_t root, uint64_t sent, uint64_t received)
{
    if (!begin_mpi_event(loc, &time))
        return;
    if (sp_meas.trace)
        sp_trace_record_put_values(sp_meas.trace, loc, time, SP_REC_MPI_COLLECTIVE_END, comm, sent,
                                   received, op, root);
    mpi_record_bytes(loc, sent, received);
}

/* ---- the end --------------------------------------------------------------------------- */

/* Where this rank writes: the experiment, or its own part of it when not every rank
 * reached the end in time (the ranks cannot write one experiment together then). */
static char *choose_output_dir(sp_measurement *m)
{
    m->mpi.collective = false;
    if (!m->mpi.ops)
        return strdup(m->config.experiment_dir);
    if (!m->mpi.aborting && m->mpi.ops->agree(m->config.mpi_timeout) == 0) {
        m->mpi.collective = true;
        int64_t offset = 0;
        m->mpi.ops->clock_offset(&offset);
        m->mpi.offset_end_ns = offset;
        m->mpi.sync_end_ns = sp_clock_monotonic_ns();
        return strdup(m->config.experiment_dir);
    }
    size_t len = strlen(m->config.experiment_dir) + 32;
    char *dir = malloc(len);
    if (!dir)
        return NULL;
    snprintf(dir, len, "%s/rank-%u", m->config.experiment_dir, m->mpi.rank);
    make_directories(dir);
    if (m->mpi.aborting)
        fprintf(stderr, "scorep: rank %u: the program called MPI_Abort(%d); this rank's "
                        "results are in %s (the other ranks end without writing theirs)\n",
                m->mpi.rank, m->mpi.abort_code, dir);
    else
        fprintf(stderr,
                "scorep: rank %u: not all ranks reached the end of the measurement within "
                "%g s; this rank's results are in %s\n",
                m->mpi.rank, m->config.mpi_timeout, dir);
    fflush(stderr);
    return dir;
}

int sp_measurement_finalize(int64_t exit_status, sp_results *results, char *err, size_t errlen)
{
    sp_measurement *m = &sp_meas;
    if (m->mpi.finalized && atomic_load(&m->state) == SP_STATE_IDLE) {
        /* The MPI_Finalize wrapper wrote everything already. */
        m->mpi.finalized = false;
        if (results)
            *results = m->mpi.results;
        if (m->mpi.status != 0)
            snprintf(err, errlen, "%s", m->mpi.error);
        return m->mpi.status;
    }
    int expected = SP_STATE_RUNNING;
    if (!atomic_compare_exchange_strong(&m->state, &expected, SP_STATE_FINALIZING)) {
        snprintf(err, errlen, "no measurement is running");
        return -1;
    }
    atomic_fetch_add(&m->generation, 1);
    wait_for_sections(m);
    sp_clock_take_anchor(&m->end);
    uint64_t end_time = m->end.ticks;
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t i = 0; i < nlocs; i++)
        if (m->locations[i]->last_time > end_time)
            end_time = m->locations[i]->last_time;
    for (uint32_t i = 0; i < nlocs; i++)
        close_location(m->locations[i], end_time, exit_status);

    sp_results r;
    memset(&r, 0, sizeof r);
    r.ticks_per_second = sp_clock_ticks_per_second(&m->start, &m->end);
    r.start_time = m->start.ticks;
    r.end_time = end_time;
    r.realtime_start_ns = m->start.realtime_ns;
    r.locations = nlocs;
    r.regions = m->defs.region_count;
    r.mpi_rank = m->mpi.ops ? (int32_t)m->mpi.rank : -1;
    r.mpi_size = m->mpi.ops ? (int32_t)m->mpi.size : 0;
    for (uint32_t i = 0; i < nlocs; i++) {
        sp_location *loc = m->locations[i];
        r.enters += loc->enters;
        r.unmatched_leaves += loc->unmatched_leaves;
        if (loc->max_depth > r.max_depth)
            r.max_depth = loc->max_depth;
        if (m->config.profiling) {
            r.profile_folded_calls += loc->profile->folded_calls;
            r.profile_dropped_calls += loc->profile->dropped_calls;
            r.profile_folded_parameters += loc->profile->folded_parameters;
        }
    }

    int status = 0;
    bool trace_failed = false;
    sp_unified u;
    memset(&u, 0, sizeof u);
    m->output_dir = choose_output_dir(m);
    if (!m->output_dir) {
        snprintf(err, errlen, "out of memory");
        status = -1;
    }
    r.mpi_collective = m->mpi.collective;
    if (status == 0 && m->trace) {
        for (uint32_t i = 0; i < nlocs; i++)
            m->locations[i]->id = m->mpi.collective
                                      ? ((uint64_t)m->locations[i]->index << 32) | m->mpi.rank
                                      : m->locations[i]->index;
        status = sp_trace_encode(m->trace, m->output_dir, m->mpi.collective, err, errlen);
        if (status != 0 && !m->mpi.collective) {
            /* A full disk or a file size limit: no half-written trace stays, and the
             * profile (much smaller) is still written. Ranks writing together cannot
             * leave the collective write alone, so they report the failure instead. */
            snprintf(r.trace_error, sizeof r.trace_error, "%s", err);
            err[0] = '\0';
            status = 0;
            trace_failed = true;
            sp_trace_remove_files(m->output_dir);
        }
    }
    /* A thread may have stamped its last event after the end anchor was taken. */
    uint64_t end_ns_after_anchor = (uint64_t)((double)(end_time - m->end.ticks) * 1e9 /
                                                  (double)r.ticks_per_second +
                                              0.5);
    if (status == 0) {
        sp_unified_rank mine = {
            .rank = m->mpi.collective ? m->mpi.rank : 0,
            .host = sp_defs_string(&m->defs, m->config.node_name),
            .thread_requested = m->mpi.ops ? m->mpi.thread_requested : -1,
            .thread_provided = m->mpi.ops ? m->mpi.thread_provided : -1,
            .start_ns = (uint64_t)((int64_t)m->start.monotonic_ns + m->mpi.offset_begin_ns),
            .end_ns = (uint64_t)((int64_t)m->end.monotonic_ns + m->mpi.offset_end_ns) +
                      end_ns_after_anchor,
            .realtime_start_ns = m->start.realtime_ns,
            .location_count = nlocs,
            .locations = calloc(nlocs ? nlocs : 1, sizeof(sp_unified_location)),
        };
        if (!mine.locations) {
            snprintf(err, errlen, "out of memory");
            status = -1;
        } else {
            for (uint32_t i = 0; i < nlocs; i++) {
                mine.locations[i].id = m->locations[i]->id;
                mine.locations[i].name = sp_defs_string(&m->defs, m->locations[i]->name);
                mine.locations[i].events = m->locations[i]->trace_events;
            }
            status = sp_unify(m, &mine, &u, err, errlen);
            free(mine.locations);
        }
    }
    if (status == 0 && m->trace && !trace_failed)
        status = sp_trace_finish(m->trace, &u, err, errlen);
    if (m->trace) {
        r.trace_spill_failures = m->trace->spill_failures;
        snprintf(r.trace_spill_error, sizeof r.trace_spill_error, "%s", m->trace->spill_error);
        sp_trace_abort(m->trace); /* nothing left to write; removes spill files */
    }
    m->trace = NULL;
    if (status == 0 && m->config.profiling)
        status = sp_profile_write(m, &u, m->output_dir, r.ticks_per_second, err, errlen);
    sp_unified_free(&u);

    for (uint32_t i = 0; i < nlocs; i++) {
        r.trace_flushes += m->locations[i]->trace_flushes;
        r.trace_lost_records += m->locations[i]->trace_lost_records;
    }
    r.memory_peak_bytes = (uint64_t)m->pool.peak_chunks * m->pool.chunk_size;
    /* How far beyond the budget the measurement's memory went at its peak (chunks handed
     * out over budget and given back later are not counted twice). */
    r.memory_over_budget_bytes =
        m->pool.peak_chunks > m->pool.budget_chunks
            ? (uint64_t)(m->pool.peak_chunks - m->pool.budget_chunks) * m->pool.chunk_size
            : 0;
    if (m->output_dir)
        snprintf(r.output_dir, sizeof r.output_dir, "%s", m->output_dir);
    r.clock_offset_ns_abs = (uint32_t)(llabs(m->mpi.offset_end_ns) > UINT32_MAX
                                           ? UINT32_MAX : llabs(m->mpi.offset_end_ns));
    if (results)
        *results = r;
    m->mpi.ops = NULL;
    release_measurement();
    atomic_store(&m->state, SP_STATE_IDLE);
    return status;
}

void sp_measurement_thread_ended(void)
{
    sp_measurement *m = &sp_meas;
    if (!sp_measurement_running() || !sp_location_cache_valid() || !sp_thread.location)
        return;
    sp_location *loc = sp_thread.location;
    if (m->config.profiling)
        sp_profile_location_compact(loc);
    if (m->trace)
        sp_trace_location_retire(m->trace, loc);
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
