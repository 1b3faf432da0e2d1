/* Starting and finalizing the measurement: configuration, definitions, the group of
 * processes it writes with, and the order in which the substrates write at the end. */
#include "core/measurement.h"

#include <sched.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_internal.h"
#include "core/experiment_dir.h"
#include "core/part.h"
#include "core/substrates.h"
#include "core/unify.h"

sp_measurement sp_meas;
sp_measurement_live sp_live;

static char *copy_string(const char *text)
{
    return strdup(text ? text : "");
}

static void free_config_copies(sp_config *c)
{
    free((char *)c->experiment_dir);
    free((char *)c->profile_base_name);
    free((char *)c->program_name);
    free((char *)c->program_path);
    free((char *)c->machine_name);
    free((char *)c->node_name);
    free((char *)c->creator);
    free((char *)c->filter_file);
    free((char *)c->sampling_event);
    free((char *)c->mpi_groups);
    if (c->program_args) {
        for (uint32_t i = 0; i < c->program_argc; i++)
            free((char *)c->program_args[i]);
        free((void *)c->program_args);
    }
    if (c->spawn_args) {
        for (uint32_t i = 0; i < c->spawn_argc; i++)
            free((char *)c->spawn_args[i]);
        free((void *)c->spawn_args);
    }
    memset(c, 0, sizeof *c);
}

static int copy_config(sp_config *dst, const sp_config *src)
{
    *dst = *src;
    dst->experiment_dir = copy_string(src->experiment_dir);
    dst->profile_base_name = copy_string(src->profile_base_name ? src->profile_base_name : "profile");
    dst->program_name = copy_string(src->program_name);
    dst->program_path = copy_string(src->program_path && src->program_path[0]
                                        ? src->program_path : src->program_name);
    dst->machine_name = copy_string(src->machine_name ? src->machine_name : "Linux");
    dst->node_name = copy_string(src->node_name ? src->node_name : "localhost");
    dst->creator = copy_string(src->creator ? src->creator : "scorep");
    dst->filter_file = copy_string(src->filter_file);
    dst->sampling_event = copy_string(src->sampling_event);
    dst->mpi_groups = copy_string(src->mpi_groups);
    dst->program_args = NULL;
    dst->program_argc = 0;
    dst->spawn_args = NULL;
    dst->spawn_argc = 0;
    if (src->spawn_argc) {
        const char **args = calloc(src->spawn_argc, sizeof *args);
        if (!args)
            return -1;
        dst->spawn_args = args;
        for (uint32_t i = 0; i < src->spawn_argc; i++) {
            args[i] = copy_string(src->spawn_args[i]);
            dst->spawn_argc = i + 1;
            if (!args[i])
                return -1;
        }
    }
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
        !dst->program_path || !dst->machine_name || !dst->node_name || !dst->creator ||
        !dst->filter_file || !dst->mpi_groups || !dst->sampling_event)
        return -1;
    return 0;
}

/* Frees everything a started (or half-started) measurement holds. */
static void release_measurement(void)
{
    sp_measurement *m = &sp_meas;
    sp_substrates_stop(m);
    sp_io_registry_free(m);
    sp_locations_free(m);
    sp_processes_release(m);
    sp_metrics_stop(m);
    m->substrates = 0;
    free(m->output_dir);
    m->output_dir = NULL;
    if (m->experiment_lock >= 0)
        close(m->experiment_lock);
    m->experiment_lock = SP_NO_LOCK;
    free(m->spawned.dir);
    m->spawned.dir = NULL;
    m->spawned.active = false;
    sp_filter_free(m->filter);
    m->filter = NULL;
    sp_defs_free(&m->defs);
    sp_chunk_pool_destroy(&m->pool);
    pthread_mutex_destroy(&m->locations_lock);
    free_config_copies(&m->config);
}

/* ---- fork ------------------------------------------------------------------------------ */

/* A child made by fork() (os.fork, multiprocessing's fork start method, a C library) shares
 * the parent's experiment files and may inherit core locks held by other threads: it stops
 * measuring at once and never writes. The Python side does the same for its own state. */
static void abandon_in_forked_child(void)
{
    sp_measurement_abandon();
}

static void register_fork_handler_once(void)
{
    if (pthread_atfork(NULL, NULL, abandon_in_forked_child) != 0)
        return; /* then only the Python side's os.register_at_fork handler protects */
}

static void register_fork_handler(void)
{
    /* pthread_atfork handlers cannot be removed: registered once per process. */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    (void)pthread_once(&once, register_fork_handler_once);
}

/* ---- in-core adapters ------------------------------------------------------------------ */

/* Registered from library constructors, before any measurement; read-only after. Global
 * because a constructor has no other place to announce itself. */
static const sp_adapter_hooks *adapters[SP_MAX_ADAPTERS];
static unsigned adapter_count;
/* How many of them began in the running measurement (those end at its end). */
static unsigned adapters_begun;

int sp_adapter_register(const sp_adapter_hooks *hooks)
{
    if (adapter_count >= SP_MAX_ADAPTERS)
        return -1;
    adapters[adapter_count++] = hooks;
    return 0;
}

int sp_adapters_begin(const sp_config *config, char *err, size_t errlen)
{
    adapters_begun = 0;
    for (unsigned i = 0; i < adapter_count; i++) {
        if (adapters[i]->begin && adapters[i]->begin(config, err, errlen) != 0) {
            sp_adapters_end();
            return -1;
        }
        adapters_begun = i + 1;
    }
    return 0;
}

void sp_adapters_end(void)
{
    for (unsigned i = adapters_begun; i-- > 0;)
        if (adapters[i]->end)
            adapters[i]->end();
    adapters_begun = 0;
}

/* ---- start ------------------------------------------------------------------------------ */

/* The program root's canonical name, as Score-P builds it: the executable and its arguments,
 * separated by spaces (the full command line). */
static char *command_line(const sp_config *c)
{
    size_t len = strlen(c->program_path) + 1;
    for (uint32_t i = 0; i < c->program_argc; i++)
        len += strlen(c->program_args[i]) + 1;
    char *text = malloc(len);
    if (!text)
        return NULL;
    char *p = text;
    p += sprintf(p, "%s", c->program_path);
    for (uint32_t i = 0; i < c->program_argc; i++)
        p += sprintf(p, " %s", c->program_args[i]);
    return text;
}

/* The regions of the measurement itself, in Score-P's order: with profiling its artificial
 * regions first (ids 0 and 1, as in every profile Score-P writes), then the program root. */
static int define_measurement_regions(sp_measurement *m)
{
    m->measurement_off_region = m->buffer_flush_region = SP_NO_ID;
    atomic_store(&m->collapse_region, SP_NO_ID);
    if (m->config.profiling) {
        m->measurement_off_region =
            sp_defs_new_region(&m->defs, "MEASUREMENT OFF", NULL, "", -1, -1, SP_PARADIGM_USER,
                               SP_ROLE_ARTIFICIAL, SP_REGION_ARTIFICIAL);
        m->buffer_flush_region =
            sp_defs_new_region(&m->defs, "TRACE BUFFER FLUSH", NULL, "", -1, -1,
                               SP_PARADIGM_MEASUREMENT, SP_ROLE_ARTIFICIAL, SP_REGION_ARTIFICIAL);
        if (m->measurement_off_region == SP_NO_ID || m->buffer_flush_region == SP_NO_ID)
            return -1;
    }
    char *canonical = command_line(&m->config);
    if (!canonical)
        return -1;
    m->program_region = sp_defs_new_region(&m->defs, m->config.program_name, canonical, "", -1,
                                           -1, SP_PARADIGM_MEASUREMENT, SP_ROLE_ARTIFICIAL,
                                           SP_REGION_PROGRAM);
    free(canonical);
    m->error_region = sp_defs_named_region(&m->defs, "error_region", "", -1, SP_PARADIGM_USER,
                                           SP_ROLE_FUNCTION, SP_REGION_USER);
    m->error_parameter = sp_defs_parameter(&m->defs, "leave-region", SP_PARAM_STRING);
    if (m->program_region == SP_NO_ID || m->error_region == SP_NO_ID ||
        m->error_parameter == SP_NO_ID ||
        sp_defs_set_group(&m->defs, m->error_region, "error") != 0)
        return -1;
    return 0;
}

int sp_measurement_start(const sp_config *config, char *err, size_t errlen)
{
    register_fork_handler();
    if (atomic_load(&sp_live.state) != SP_STATE_IDLE)
        return sp_error(err, errlen, "a measurement is already running");
    sp_measurement *m = &sp_meas;
    /* sp_live (state, generation) stays: threads compare against the generation. */
    memset(m, 0, sizeof *m);
    m->ipc = sp_ipc_single;
    m->experiment_lock = SP_NO_LOCK;
    m->mpi.thread_requested = m->mpi.thread_provided = -1;
    if (pthread_mutex_init(&m->locations_lock, NULL) != 0 || sp_defs_init(&m->defs) != 0 ||
        sp_chunk_pool_init(&m->pool, config->total_memory, SP_CHUNK_SIZE) != 0 ||
        copy_config(&m->config, config) != 0 || sp_io_registry_init(m) != 0) {
        release_measurement();
        return sp_error(err, errlen, "out of memory while starting the measurement");
    }
    if (m->config.filter_file[0] &&
        sp_filter_load(m->config.filter_file, &m->filter, err, errlen) != 0) {
        release_measurement();
        return -1;
    }
    sp_clock_timer = config->timer;
    sp_clock_take_anchor(&m->start);

    if (define_measurement_regions(m) != 0) {
        release_measurement();
        return sp_error(err, errlen, "out of memory while starting the measurement");
    }
    atomic_store(&m->recording, true);
    /* Before the substrates: they size their records by the metrics defined. */
    if (sp_metrics_start(m, config->metric_requests, config->metric_request_count, err,
                         errlen) != 0) {
        release_measurement();
        return -1;
    }
    m->config.metric_requests = NULL; /* the caller's, valid only during the start */
    m->config.metric_request_count = 0;
    if (sp_substrates_start(m, err, errlen) != 0) {
        release_measurement();
        return -1;
    }
    /* With MPI the directory exists only once the ranks agreed on it. */
    if (!m->config.mpi)
        sp_substrates_output_dir_known(m->config.experiment_dir);
    if (sp_adapters_begin(&m->config, err, errlen) != 0) {
        release_measurement();
        return -1;
    }
    atomic_store(&sp_live.state, SP_STATE_RUNNING);
    atomic_fetch_add(&sp_live.generation, 1);
    return 0;
}

int sp_measurement_start_with(const sp_config *config, const sp_start_step *steps,
                              size_t count, void *context, char *err, size_t errlen)
{
    if (sp_measurement_start(config, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < count; i++) {
        if (steps[i].run(context, err, errlen) == 0)
            continue;
        while (i-- > 0)
            if (steps[i].undo)
                steps[i].undo(context);
        sp_measurement_cancel();
        return -1;
    }
    return 0;
}

void sp_measurement_layout(sp_layout *layout)
{
    *layout = (sp_layout){
        .chunk_bytes = SP_CHUNK_SIZE,
        .trace_record_bytes = sizeof(sp_trace_record),
        .trace_chunk_header_bytes = SP_TRACE_CHUNK_HEADER_BYTES,
        .profile_nodes_per_chunk = SP_PROFILE_BLOCK_NODES,
        .profile_max_parameter_values = SP_PROFILE_MAX_PARAMETER_VALUES,
        .max_locations = SP_MAX_LOCATIONS,
        .default_max_callpath_depth = SP_DEFAULT_MAX_CALLPATH_DEPTH,
        .default_total_memory = SP_DEFAULT_TOTAL_MEMORY,
    };
}

size_t sp_measurement_trace_records(sp_trace_event_records *out, size_t cap)
{
    return sp_substrates_trace_records(out, cap);
}

/* ---- definitions of the running measurement ---------------------------------------------- */

/* The group the Python bindings put a region into: the top-level package of its module,
 * i.e. what `name` (module[.qualname]:function) has before its first '.' or ':'. Names
 * without a module (rewind regions) have none: *group is "". */
static void module_group(const char *name, char group[static 256])
{
    group[0] = '\0';
    size_t len = strcspn(name, ".:");
    if (!strchr(name, ':') || len == 0 || len >= 256)
        return;
    memcpy(group, name, len);
    group[len] = '\0';
}

uint32_t sp_region_define_code(const char *name, const char *canonical, const char *file,
                               int32_t line)
{
    /* A filtered function is decided here, once: adapters cache the answer. */
    if (sp_filter_excludes(sp_meas.filter, name, canonical, file))
        return SP_NO_ID;
    /* The last line is unknown, as for Score-P's Python bindings (which give the first). */
    uint32_t region = sp_defs_new_region(&sp_meas.defs, name, canonical, file, line, -1,
                                         SP_PARADIGM_USER, SP_ROLE_FUNCTION, SP_REGION_PYTHON);
    char group[256];
    module_group(canonical ? canonical : name, group);
    if (region != SP_NO_ID && group[0])
        (void)sp_defs_set_group(&sp_meas.defs, region, group); /* none when out of memory */
    return region;
}

uint32_t sp_region_define_c(const char *name, const char *canonical)
{
    /* File rules do not apply: a C function has no source file of its own. */
    if (sp_filter_excludes(sp_meas.filter, name, canonical, NULL))
        return SP_NO_ID;
    uint32_t region = sp_defs_new_region(&sp_meas.defs, name, canonical, "", -1, -1,
                                         SP_PARADIGM_COMPILER, SP_ROLE_FUNCTION, SP_REGION_C);
    char group[256];
    module_group(name, group);
    if (region != SP_NO_ID && group[0])
        (void)sp_defs_set_group(&sp_meas.defs, region, group);
    return region;
}

uint32_t sp_region_define_native(const char *name, const char *library)
{
    /* One region per (symbol, library) name, in the group "native": the paradigm is that
     * of compiled code (Score-P's unwinding names its frames so too), the group tells them
     * from the C functions called from Python. Filter rules apply to the name. */
    bool excluded = false;
    uint32_t region = sp_defs_named_region_grouped(&sp_meas.defs, name, library, -1,
                                                   SP_PARADIGM_COMPILER, SP_ROLE_FUNCTION,
                                                   SP_REGION_C, sp_meas.filter, &excluded,
                                                   "native");
    return excluded ? SP_NO_ID : region;
}

uint32_t sp_region_define_named(const char *name, const char *file, int32_t line,
                                sp_region_kind kind, bool *excluded)
{
    char group[256];
    module_group(name, group);
    return sp_defs_named_region_grouped(&sp_meas.defs, name, file, line, SP_PARADIGM_USER,
                                        SP_ROLE_FUNCTION, kind, sp_meas.filter, excluded, group);
}

uint32_t sp_region_find_named(const char *name, sp_region_kind kind, bool *excluded)
{
    return sp_defs_find_named_region(&sp_meas.defs, name, kind, excluded);
}

uint32_t sp_region_define_paradigm(const char *name, sp_paradigm paradigm, sp_role role,
                                   sp_region_kind kind)
{
    /* Score-P's MPI regions name "MPI" as their module (the file of the CUBE region). */
    return sp_defs_named_region(&sp_meas.defs, name, paradigm == SP_PARADIGM_MPI ? "MPI" : "",
                                -1, paradigm, role, kind);
}

uint32_t sp_comm_define(const sp_comm_spec *spec)
{
    return sp_defs_comm(&sp_meas.defs, spec);
}

void sp_comm_set_name(uint32_t comm, const char *name, bool root)
{
    sp_defs_comm_set_name(&sp_meas.defs, comm, name, root);
}

uint32_t sp_rma_win_define(uint64_t key, uint32_t comm, const char *name)
{
    return sp_defs_rma_win(&sp_meas.defs, key, comm, name);
}

void sp_rma_win_set_name(uint32_t win, const char *name)
{
    sp_defs_rma_win_set_name(&sp_meas.defs, win, name);
}

uint32_t sp_parameter_define(const char *name, sp_param_type type)
{
    return sp_defs_parameter(&sp_meas.defs, name, type);
}

uint32_t sp_string_define(const char *text)
{
    return sp_defs_string(&sp_meas.defs, text);
}

/* ---- the experiment directory ------------------------------------------------------------ */

const sp_config *sp_measurement_config(void)
{
    return &sp_meas.config;
}

const sp_metric_set *sp_measurement_metrics(void)
{
    return &sp_meas.metrics;
}

bool sp_measurement_recording(void)
{
    return atomic_load(&sp_meas.recording);
}

int64_t sp_measurement_clock_offset_ns(void)
{
    return sp_meas.clock_sync.offset_begin_ns;
}

bool sp_measurement_grouped(void)
{
    return sp_meas.grouped;
}

const char *sp_measurement_experiment_dir(void)
{
    return sp_measurement_running() ? sp_meas.config.experiment_dir : NULL;
}

/* Adopts `path` as the experiment directory (it exists). */
static int adopt_experiment_dir(const char *path, char *err, size_t errlen)
{
    char *copy = strdup(path);
    if (!copy)
        return sp_error(err, errlen, "out of memory");
    free((char *)sp_meas.config.experiment_dir);
    sp_meas.config.experiment_dir = copy;
    sp_substrates_output_dir_known(copy);
    return 0;
}

int sp_measurement_set_experiment_dir(const char *path, char *err, size_t errlen)
{
    if (!sp_measurement_running())
        return sp_error(err, errlen, "no measurement is running");
    if (sp_meas.grouped)
        return sp_error(err, errlen, "the group of processes chose the experiment directory");
    return adopt_experiment_dir(path, err, errlen);
}

/* ---- the group of processes (MPI) -------------------------------------------------------- */

int sp_mpi_initialized(const sp_ipc *ipc, uint32_t world, int requested, int provided, char *err,
                       size_t errlen)
{
    sp_measurement *m = &sp_meas;
    if (!sp_measurement_running() || !m->config.mpi)
        return 0;
    m->world = world;
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
    if (m->spawned.active) {
        /* A spawned world joins its parent's experiment: nothing to prepare. */
        snprintf(agreed.path, sizeof agreed.path, "%s", m->spawned.dir);
    } else if (ipc->rank == 0) {
        snprintf(agreed.path, sizeof agreed.path, "%s", m->config.experiment_dir);
        sp_experiment_dir_claim claim;
        agreed.status = sp_experiment_dir_prepare(agreed.path, m->config.overwrite, &claim,
                                                  agreed.error, sizeof agreed.error);
        m->experiment_lock = claim.lock_fd;
    }
    if (ipc->ops->bcast(ipc->ctx, &agreed, sizeof agreed, 0) != 0)
        return sp_error(err, errlen, "agreeing on the experiment directory failed");
    if (agreed.status != 0)
        return sp_error(err, errlen, "%s", agreed.error);
    if (adopt_experiment_dir(agreed.path, err, errlen) != 0)
        return -1;
    int64_t offset = 0;
    if (ipc->ops->clock_offset(ipc->ctx, &offset) != 0)
        return sp_error(err, errlen, "measuring the clock offset to rank 0 failed");
    /* A spawned world's rank 0 knows its offset to the experiment's root. */
    m->clock_sync.offset_begin_ns = offset + (m->spawned.active ? m->spawned.root_offset_ns : 0);
    m->clock_sync.sync_begin_ns = sp_clock_monotonic_ns();
    m->ipc = *ipc;
    m->grouped = true;
    return 0;
}

int sp_mpi_spawned(const char *experiment_dir, int64_t root_offset_ns, char *err, size_t errlen)
{
    sp_measurement *m = &sp_meas;
    if (!sp_measurement_running() || !m->config.mpi)
        return 0;
    char *dir = strdup(experiment_dir);
    if (!dir)
        return sp_error(err, errlen, "out of memory");
    free(m->spawned.dir);
    m->spawned.dir = dir;
    m->spawned.active = true;
    m->spawned.root_offset_ns = root_offset_ns;
    return 0;
}

int sp_mpi_spawn_announce(uint32_t world, uint32_t size, char *err, size_t errlen)
{
    if (!sp_measurement_running() || !sp_meas.grouped)
        return 0;
    return sp_part_announce(sp_meas.config.experiment_dir, world, size, err, errlen);
}

bool sp_measurement_group(uint32_t *rank, uint32_t *size)
{
    if (!sp_measurement_running() || !sp_meas.grouped)
        return false;
    *rank = sp_meas.ipc.rank;
    *size = sp_meas.ipc.size;
    return true;
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
    if (!sp_measurement_running() || !m->grouped)
        return;
    m->mpi.aborting = true;
    m->mpi.abort_code = errorcode;
    m->mpi.status = sp_measurement_finalize(errorcode, &m->mpi.results, m->mpi.error,
                                            sizeof m->mpi.error);
    m->mpi.finalized = true;
    if (abort_hook)
        abort_hook();
}

void sp_measurement_set_exit_status(int64_t status)
{
    sp_meas.mpi.exit_status = status;
}

void sp_mpi_finalizing(void)
{
    sp_measurement *m = &sp_meas;
    if (!sp_measurement_running() || !m->grouped)
        return;
    /* The program's exit status is not known yet when it finalizes MPI itself (0 then);
     * at its exit the host tells it before MPI is finalized. */
    m->mpi.status = sp_measurement_finalize(m->mpi.exit_status, &m->mpi.results, m->mpi.error,
                                            sizeof m->mpi.error);
    m->mpi.finalized = true;
}

/* ---- the end --------------------------------------------------------------------------- */

static void wait_for_sections(sp_measurement *m)
{
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t i = 0; i < nlocs; i++)
        while (atomic_load(&m->locations[i]->busy))
            sched_yield();
}

/* Where this process writes: the experiment, or its own part of it when not every process
 * of the group reached the end in time (they cannot write one experiment together then). */
static char *choose_output_dir(sp_measurement *m)
{
    m->collective = false;
    if (!m->grouped)
        return strdup(m->config.experiment_dir);
    if (!m->mpi.aborting && m->ipc.ops->agree(m->ipc.ctx, m->config.mpi_timeout) == 0) {
        m->collective = true;
        int64_t offset = 0;
        if (m->ipc.ops->clock_offset(m->ipc.ctx, &offset) == 0) {
            m->clock_sync.offset_end_ns = offset;
            m->clock_sync.sync_end_ns = sp_clock_monotonic_ns();
        } else {
            m->clock_sync.offset_end_ns = m->clock_sync.offset_begin_ns;
            m->clock_sync.sync_end_ns = sp_clock_monotonic_ns();
        }
        return strdup(m->config.experiment_dir);
    }
    size_t len = strlen(m->config.experiment_dir) + 32;
    char *dir = malloc(len);
    if (!dir)
        return NULL;
    snprintf(dir, len, "%s/rank-%u", m->config.experiment_dir, m->ipc.rank);
    char why[512];
    if (sp_make_directories(dir, why, sizeof why) != 0)
        fprintf(stderr, "scorep: rank %u: %s\n", m->ipc.rank, why);
    if (m->mpi.aborting)
        fprintf(stderr, "scorep: rank %u: the program called MPI_Abort(%d); this rank's "
                        "results are in %s (the other ranks end without writing theirs)\n",
                m->ipc.rank, m->mpi.abort_code, dir);
    else
        fprintf(stderr,
                "scorep: rank %u: not all ranks reached the end of the measurement within "
                "%g s; this rank's results are in %s\n",
                m->ipc.rank, m->config.mpi_timeout, dir);
    fflush(stderr);
    return dir;
}

/* A child process whose root ended before it: its own experiment, in <experiment>/process-N. */
static char *choose_alone_dir(sp_measurement *m)
{
    char *dir = strdup(m->processes.info.alone_dir);
    if (!dir)
        return NULL;
    char why[512];
    if (sp_make_directories(dir, why, sizeof why) != 0)
        fprintf(stderr, "scorep: process %u: %s\n", m->processes.info.number, why);
    if (!m->processes.named) {
        fprintf(stderr,
                "scorep: process %u (pid %ld): the measured program's process ended before "
                "this one; its results are in %s\n",
                m->processes.info.number, (long)getpid(), dir);
        fflush(stderr);
    }
    return dir;
}

/* The name of this process's location group. */
static void group_name(const sp_measurement *m, bool as_rank, char *name, size_t size)
{
    const sp_process_info *info = &m->processes.info;
    if (as_rank)
        snprintf(name, size, "MPI Rank %u", m->ipc.rank);
    else if (m->processes.ipc && info->member)
        snprintf(name, size, "Process %u (pid %llu, %s)", info->number,
                 (unsigned long long)info->pid, info->name[0] ? info->name : "python");
    else if (m->processes.part_count)
        snprintf(name, size, "Process 0 (pid %llu, main)", (unsigned long long)getpid());
    else
        snprintf(name, size, "Process");
}

int sp_measurement_report(sp_measurement *m, uint64_t end_time, uint64_t ticks_per_second,
                          bool as_rank, sp_unified_rank *mine, char *err, size_t errlen)
{
    const sp_process_info *info = &m->processes.info;
    bool member = m->processes.ipc && info->member;
    uint32_t nlocs = atomic_load(&m->location_count);
    /* A thread may have stamped its last event after the end anchor was taken. */
    uint64_t end_ns_after_anchor =
        (uint64_t)((double)(end_time - m->end.ticks) * 1e9 / (double)ticks_per_second + 0.5);
    char name[300];
    group_name(m, as_rank, name, sizeof name);
    *mine = (sp_unified_rank){
        .rank = as_rank ? m->ipc.rank : member ? info->number : 0,
        .world = as_rank ? m->world : 0,
        .world_rank = as_rank ? m->ipc.rank : 0,
        .name = sp_defs_string(&m->defs, name),
        .host = sp_defs_string(&m->defs, m->config.node_name),
        .thread_requested = m->grouped ? m->mpi.thread_requested : -1,
        .thread_provided = m->grouped ? m->mpi.thread_provided : -1,
        .start_ns = (uint64_t)((int64_t)m->start.monotonic_ns + m->clock_sync.offset_begin_ns),
        .end_ns = (uint64_t)((int64_t)m->end.monotonic_ns + m->clock_sync.offset_end_ns) +
                  end_ns_after_anchor,
        .realtime_start_ns = m->start.realtime_ns,
        .location_count = nlocs,
        .locations = calloc(nlocs ? nlocs : 1, sizeof(sp_unified_location)),
        .parent = member ? info->parent : SP_NO_PARENT,
        .pid = (uint64_t)getpid(),
        .parent_pid = member ? info->parent_pid : 0,
        .method = member ? sp_defs_string(&m->defs, info->method) : SP_NO_ID,
    };
    if (!mine->locations)
        return sp_error(err, errlen, "out of memory while unifying the definitions");
    for (uint32_t i = 0; i < nlocs; i++) {
        mine->locations[i].id = m->locations[i]->id;
        mine->locations[i].name = sp_defs_string(&m->defs, m->locations[i]->name);
        mine->locations[i].events = sp_substrates_location_events(m->locations[i]);
    }
    return 0;
}

/* The unified definitions of this process, the child processes' parts it adopted, the
 * spawned processes' parts (the experiment's root) and the group it writes with. */
static int unify_definitions(sp_measurement *m, uint64_t end_time, uint64_t ticks_per_second,
                             sp_unified *u, char *err, size_t errlen)
{
    sp_unified_rank mine;
    if (sp_measurement_report(m, end_time, ticks_per_second, m->collective, &mine, err,
                              errlen) != 0)
        return -1;
    uint32_t nchildren = m->processes.part_count;
    sp_unify_part *children = calloc(nchildren ? nchildren : 1, sizeof *children);
    if (!children) {
        free(mine.locations);
        return sp_error(err, errlen, "out of memory while unifying the definitions");
    }
    for (uint32_t k = 0; k < nchildren; k++)
        children[k] = (sp_unify_part){m->processes.parts[k].report,
                                      m->processes.parts[k].report_size};
    const sp_ipc *ipc = m->collective ? &m->ipc : &sp_ipc_single;
    int status = sp_unify_parts(ipc, &m->defs, &mine, children, nchildren, m->parts,
                                m->part_count, u, err, errlen);
    free(children);
    free(mine.locations);
    return status;
}

int sp_measurement_part(sp_measurement *m, uint64_t end_time, uint64_t ticks_per_second,
                        bool spawned, sp_part_contents *c, sp_buffer *report,
                        sp_buffer sections[SP_SUBSTRATE_SLOTS], char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    sp_buffer_init(report);
    for (unsigned k = 0; k < SP_SUBSTRATE_SLOTS; k++)
        sp_buffer_init(&sections[k]);
    sp_unified_rank mine;
    if (sp_measurement_report(m, end_time, ticks_per_second, spawned, &mine, err, errlen) != 0)
        return -1;
    /* The sections first: the trace defines the strings of its program's name. */
    sp_substrates_part(m, ticks_per_second, !spawned, sections);
    sp_unify_report(&m->defs, &mine, report);
    free(mine.locations);
    bool failed = report->failed;
    c->report = report->data;
    c->report_size = report->size;
    for (unsigned k = 0; k < SP_SUBSTRATE_SLOTS; k++) {
        failed = failed || sections[k].failed;
        c->section[k] = sections[k].data;
        c->section_size[k] = sections[k].size;
    }
    if (failed)
        return sp_error(err, errlen, "out of memory while writing this process's part");
    return 0;
}

void sp_measurement_part_free(sp_buffer *report, sp_buffer sections[SP_SUBSTRATE_SLOTS])
{
    sp_buffer_free(report);
    for (unsigned k = 0; k < SP_SUBSTRATE_SLOTS; k++)
        sp_buffer_free(&sections[k]);
}

/* A process of a spawned world at its end: its part of the experiment, for the root to
 * adopt (core/part.h). Nothing collective: it ends without its parent's help. */
static int write_own_part(sp_measurement *m, uint64_t end_time, uint64_t ticks_per_second,
                          char *err, size_t errlen)
{
    uint32_t nlocs = atomic_load(&m->location_count);
    uint32_t *threads = calloc(nlocs ? nlocs : 1, sizeof *threads);
    if (!threads)
        return sp_error(err, errlen, "out of memory while writing this process's part");
    for (uint32_t i = 0; i < nlocs; i++) {
        threads[i] = m->locations[i]->index;
        m->locations[i]->id = ((uint64_t)m->locations[i]->index << 32) | m->ipc.rank;
    }
    sp_part_contents c;
    sp_buffer report, sections[SP_SUBSTRATE_SLOTS];
    int status = sp_measurement_part(m, end_time, ticks_per_second, true, &c, &report, sections,
                                     err, errlen);
    if (status == 0) {
        uint64_t last = (uint64_t)((double)(end_time - m->start.ticks) * 1e9 /
                                   (double)ticks_per_second + 0.5);
        c.world = m->world;
        c.number = m->ipc.rank;
        c.clock = (sp_part_clock){m->clock_sync.offset_begin_ns, m->clock_sync.offset_end_ns,
                                  m->clock_sync.sync_begin_ns, m->clock_sync.sync_end_ns,
                                  m->start.monotonic_ns, m->start.monotonic_ns + last};
        c.location_count = nlocs;
        c.locations = (const unsigned char *)threads;
        status = sp_part_write(m->config.experiment_dir, &c, err, errlen);
    }
    sp_measurement_part_free(&report, sections);
    free(threads);
    return status;
}

void sp_measurement_collect_results(sp_measurement *m, uint64_t end_time, sp_results *r)
{
    uint32_t nlocs = atomic_load(&m->location_count);
    r->start_time = m->start.ticks;
    r->end_time = end_time;
    r->realtime_start_ns = m->start.realtime_ns;
    r->locations = nlocs;
    r->regions = m->defs.region_count;
    r->mpi_rank = m->grouped ? (int32_t)m->ipc.rank : -1;
    r->mpi_size = m->grouped ? (int32_t)m->ipc.size : 0;
    r->mpi_collective = m->collective;
    for (uint32_t i = 0; i < nlocs; i++) {
        sp_location *loc = m->locations[i];
        r->enters += loc->enters;
        r->samples += loc->samples;
        r->unmatched_leaves += loc->unmatched_leaves;
        if (loc->metrics)
            r->metric_reads_ns += loc->metrics->own_ns;
        if (loc->max_depth > r->max_depth)
            r->max_depth = loc->max_depth;
    }
    for (unsigned s = 0; s < SP_METRIC_SOURCE_COUNT; s++)
        r->metric_read_cost_ns += m->metrics.read_cost_ns[s][0];
    sp_substrates_results(m, r);
    r->memory_peak_bytes = (uint64_t)m->pool.peak_chunks * m->pool.chunk_size;
    /* How far beyond the budget the measurement's memory went at its peak (chunks handed
     * out over budget and given back later are not counted twice). */
    r->memory_over_budget_bytes =
        m->pool.peak_chunks > m->pool.budget_chunks
            ? (uint64_t)(m->pool.peak_chunks - m->pool.budget_chunks) * m->pool.chunk_size
            : 0;
    if (m->output_dir)
        snprintf(r->output_dir, sizeof r->output_dir, "%s", m->output_dir);
    int64_t offset = m->clock_sync.offset_end_ns;
    uint64_t magnitude = offset < 0 ? (uint64_t)0 - (uint64_t)offset : (uint64_t)offset;
    r->clock_offset_ns_abs = magnitude > UINT32_MAX ? UINT32_MAX : (uint32_t)magnitude;
    sp_processes_add_counters(m, r);
    r->processes = 1 + m->processes.part_count;
    r->process_alone = m->processes.alone;
    r->process_named = m->processes.alone && m->processes.named;
    r->process_number = m->processes.info.member ? m->processes.info.number
                        : m->grouped             ? m->ipc.rank
                                                 : 0;
}

/* ---- the end of a measurement: one path, three ways for a process to leave its results --- */

/* A process of a spawned world (core/part.h): its part, adopted by the experiment's root
 * later. Nothing collective: it ends without its parent's help. */
static int end_as_spawned_part(sp_measurement *m, uint64_t end_time, sp_results *r, char *err,
                               size_t errlen)
{
    m->clock_sync.offset_end_ns = m->clock_sync.offset_begin_ns;
    m->clock_sync.sync_end_ns = sp_clock_monotonic_ns();
    int status = write_own_part(m, end_time, r->ticks_per_second, err, errlen);
    m->collective = false;
    m->output_dir = strdup(m->config.experiment_dir);
    sp_measurement_collect_results(m, end_time, r);
    r->part_written = status == 0;
    return status;
}

/* A child process whose root still waits: its part goes to the root (core/processes.c). */
static int end_as_handed_over(sp_measurement *m, uint64_t end_time, sp_results *r, char *err,
                              size_t errlen)
{
    int status = sp_processes_hand_over(m, end_time, r->ticks_per_second, err, errlen);
    sp_measurement_collect_results(m, end_time, r);
    r->process_member = true;
    snprintf(r->output_dir, sizeof r->output_dir, "%s", m->config.experiment_dir);
    return status;
}

/* An experiment: the root's (with the child processes' parts it adopts), the ranks'
 * together, a rank's own when the ranks did not meet, or a child's whose root had ended. */
static int end_as_experiment(sp_measurement *m, uint64_t end_time, sp_results *r, char *err,
                             size_t errlen)
{
    int status = 0;
    if (m->processes.alone) {
        m->output_dir = choose_alone_dir(m);
    } else {
        char why[512];
        if (m->processes.ipc && sp_processes_adopt(m, why, sizeof why) != 0) {
            fprintf(stderr, "scorep: %s\n", why);
            fflush(stderr);
        }
        m->output_dir = choose_output_dir(m);
    }
    /* The spawned processes' parts (core/part.h) are numbered after every location group
     * of the ranks and their child processes. */
    uint32_t first_spawned = m->ipc.size;
    if (m->output_dir && m->collective &&
        sp_processes_numbers_end(m, &first_spawned, err, errlen) != 0)
        status = -1;
    if (status == 0 && m->output_dir && m->collective && m->ipc.rank == 0 && m->config.mpi &&
        sp_parts_collect(m->output_dir, m->config.mpi_timeout, first_spawned, &m->parts,
                         &m->part_count, r->parts_missing, sizeof r->parts_missing) != 0)
        status = sp_error(err, errlen, "out of memory while reading the spawned processes' parts");
    if (!m->output_dir)
        status = sp_error(err, errlen, "out of memory");
    if (status == 0) {
        /* Location ids are final now: (thread index << 32) | group, as Score-P numbers them
         * with and without MPI (a process alone is rank 0; a child process that writes
         * alone, its process number). */
        uint32_t group = m->collective ? m->ipc.rank
                         : m->processes.alone ? m->processes.info.number
                                              : 0;
        uint32_t nlocs = atomic_load(&m->location_count);
        for (uint32_t i = 0; i < nlocs; i++)
            m->locations[i]->id = ((uint64_t)m->locations[i]->index << 32) | group;
        status = sp_substrates_prepare(m, m->output_dir, err, errlen);
    }
    sp_unified u;
    memset(&u, 0, sizeof u);
    if (status == 0)
        status = unify_definitions(m, end_time, r->ticks_per_second, &u, err, errlen);
    if (status == 0)
        status = sp_substrates_write(m, &u, m->output_dir, r->ticks_per_second, err, errlen);
    sp_unified_free(&u);
    sp_measurement_collect_results(m, end_time, r);
    r->spawned_ranks = m->part_count;
    /* The parts are in the experiment now; late ones (r->parts_missing) keep theirs. */
    sp_parts_free(m->output_dir, m->parts, m->part_count,
                  status == 0 && m->collective && m->ipc.rank == 0 && !r->parts_missing[0]);
    m->parts = NULL;
    m->part_count = 0;
    return status;
}

/* The three ways, as data: which one a process takes is decided once (end_way), what it
 * does is its entry. */
typedef enum { END_SPAWNED_PART, END_HANDED_OVER, END_EXPERIMENT } end_kind;

static const struct {
    int (*write)(sp_measurement *m, uint64_t end_time, sp_results *r, char *err, size_t errlen);
} end_ways[] = {
    [END_SPAWNED_PART] = {end_as_spawned_part},
    [END_HANDED_OVER] = {end_as_handed_over},
    [END_EXPERIMENT] = {end_as_experiment},
};

static end_kind end_way(sp_measurement *m)
{
    if (m->spawned.active && m->grouped && !m->mpi.aborting)
        return END_SPAWNED_PART;
    const sp_ipc *processes = m->processes.ipc;
    if (!processes || !m->processes.info.member)
        return END_EXPERIMENT;
    /* A child process hands its part over to its root, unless the root ended first: then
     * it writes an experiment of its own. */
    if (processes->ops->agree(processes->ctx, m->processes.info.timeout) == 0)
        return END_HANDED_OVER;
    m->processes.alone = true;
    return END_EXPERIMENT;
}

/* Stops recording: no event after this; every location's open frames are closed at the
 * returned end time (the latest event's or the end anchor's). */
static uint64_t stop_recording(sp_measurement *m, int64_t exit_status)
{
    atomic_fetch_add(&sp_live.generation, 1);
    sp_adapters_end();
    wait_for_sections(m);
    sp_clock_take_anchor(&m->end);
    uint64_t end_time = m->end.ticks;
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t i = 0; i < nlocs; i++)
        if (m->locations[i]->last_time > end_time)
            end_time = m->locations[i]->last_time;
    for (uint32_t i = 0; i < nlocs; i++)
        sp_location_close(m->locations[i], end_time, exit_status);
    return end_time;
}

int sp_measurement_finalize(int64_t exit_status, sp_results *results, char *err, size_t errlen)
{
    sp_measurement *m = &sp_meas;
    if (m->mpi.finalized && atomic_load(&sp_live.state) == SP_STATE_IDLE) {
        /* The MPI_Finalize wrapper wrote everything already. */
        m->mpi.finalized = false;
        if (results)
            *results = m->mpi.results;
        if (m->mpi.status != 0)
            snprintf(err, errlen, "%s", m->mpi.error);
        return m->mpi.status;
    }
    int expected = SP_STATE_RUNNING;
    if (!atomic_compare_exchange_strong(&sp_live.state, &expected, SP_STATE_FINALIZING))
        return sp_error(err, errlen, "no measurement is running");
    uint64_t end_time = stop_recording(m, exit_status);
    sp_results r;
    memset(&r, 0, sizeof r);
    r.ticks_per_second = sp_clock_ticks_per_second(&m->start, &m->end);
    int status = end_ways[end_way(m)].write(m, end_time, &r, err, errlen);
    if (results)
        *results = r;
    release_measurement();
    m->grouped = false;
    atomic_store(&sp_live.state, SP_STATE_IDLE);
    return status;
}

void sp_measurement_thread_ended(void)
{
    if (!sp_measurement_running() || !sp_location_cache_valid() || !sp_thread.location)
        return;
    sp_substrates_location_retire(sp_thread.location);
    sp_metrics_location_retire(sp_thread.location);
}

void sp_measurement_cancel(void)
{
    int expected = SP_STATE_RUNNING;
    if (!atomic_compare_exchange_strong(&sp_live.state, &expected, SP_STATE_FINALIZING))
        return;
    atomic_fetch_add(&sp_live.generation, 1);
    sp_adapters_end();
    wait_for_sections(&sp_meas);
    release_measurement();
    sp_meas.grouped = false;
    atomic_store(&sp_live.state, SP_STATE_IDLE);
}

void sp_measurement_abandon(void)
{
    if (atomic_load(&sp_live.state) == SP_STATE_IDLE)
        return;
    /* The copies of buffers and writers are leaked on purpose: closing them would write. */
    /* Closing the inherited descriptor leaves the parent's lock (the same open file) held. */
    if (sp_meas.experiment_lock >= 0)
        close(sp_meas.experiment_lock);
    sp_meas.experiment_lock = SP_NO_LOCK;
    sp_meas.substrates = 0;
    atomic_fetch_add(&sp_live.generation, 1);
    atomic_store(&sp_live.state, SP_STATE_IDLE);
}
