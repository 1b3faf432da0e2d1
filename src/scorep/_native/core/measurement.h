/* The measurement core: one measurement at a time per process, started and finalized as
 * often as needed (the Jupyter kernel measures cell after cell). Adapters turn what happens
 * into events (core/events.h) on the current thread's location; the core keeps definitions,
 * locations and configuration, decides with the other processes of the experiment how the
 * results are written (core/ipc.h), and hands events to the substrates (core/substrates.h). */
#ifndef SCOREP_CORE_MEASUREMENT_H
#define SCOREP_CORE_MEASUREMENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/clock.h"
#include "core/defs.h"
#include "core/error.h"
#include "core/events.h"
#include "core/filter.h"
#include "core/ipc.h"
#include "core/location.h"
#include "core/memory.h"
#include "core/metrics.h"

typedef struct sp_config {
    bool tracing;
    bool profiling;
    bool verbose;
    bool all_threads; /* measure every thread that runs code, not only registered ones */
    /* Where the results go. It exists when the measurement starts, except with `mpi`: then
     * rank 0 prepares it (or another one its ranks agree on) when MPI is initialized. */
    const char *experiment_dir;
    bool mpi;                /* the MPI adapter may take part (--mpp=mpi) */
    bool overwrite;          /* SCOREP_OVERWRITE_EXPERIMENT_DIRECTORY, for rank 0's preparation */
    double mpi_timeout;      /* seconds to wait for all ranks at the end */
    uint64_t total_memory;
    sp_timer_kind timer;
    uint32_t max_callpath_depth;
    const char *profile_base_name;
    /* SCOREP_PROFILING_WRITE_SLICE: the rows of profile.cubex are written by several ranks
     * when each writer's slice of a row is on average at least this many bytes (0: the
     * default, 64 KB; UINT64_MAX: rank 0 writes them alone) */
    uint64_t profile_write_slice;
    const char *program_name;  /* the program root's name (the script's base name) */
    const char *program_path;  /* what ProgramBegin names: the script's absolute path, or the
                                * command (NULL or "": program_name) */
    const char *const *program_args; /* the program's own arguments (argv[1:]) */
    uint32_t program_argc;
    const char *machine_name;
    const char *node_name;
    const char *creator;
    const char *filter_file; /* SCOREP_FILTERING_FILE; NULL or "" for none */
    const char *mpi_groups;  /* SCOREP_MPI_ENABLE_GROUPS, for the MPI adapter ("" default) */
    /* What a process started with MPI_Comm_spawn gets after "python -m scorep" to run under
     * this measurement's configuration (the MPI adapter rewrites Python spawns with it). */
    const char *const *spawn_args;
    uint32_t spawn_argc;
    bool spawned; /* this process was started so: it joins its parent's experiment */
    bool io_posix;           /* SCOREP_IO_POSIX: record POSIX and ISO C I/O calls */
    /* SCOREP_ENABLE_UNWINDING: calling contexts (the adapter sets an unwinder) and, with a
     * sampling event, samples; the event's name (as SCOREP_SAMPLING_EVENTS gives it, the
     * trace's interrupt generator), its period in microseconds (0: no samples) and whether
     * the period is CPU time (else wall-clock time). */
    bool unwinding;
    const char *sampling_event;
    uint64_t sampling_period_us;
    bool sampling_cpu;
    bool c_calls; /* C functions called from Python are regions (SCOREP_PYTHON_C_CALLS) */
    bool wait_states; /* SCOREP_MPI_WAIT_STATES: the wait-state analysis of a traced MPI run */
    /* The metrics asked for (SCOREP_METRIC_*, --memory); read at the start only. */
    const sp_metric_request *metric_requests;
    uint32_t metric_request_count;
    /* Another process of the job says what all would say (a launcher's rank other than 0):
     * warnings about metrics that are not recorded are left to it. */
    bool quiet_warnings;
} sp_config;

/* What the caller starts on top of the core (the Python adapter, its hooks), in order:
 * `run` returns 0, or -1 with the reason in err (or already reported to the caller, err
 * left empty); `undo` (may be NULL) takes back a step that ran. */
typedef struct sp_start_step {
    int (*run)(void *context, char *err, size_t errlen);
    void (*undo)(void *context);
} sp_start_step;

/* The defaults of the configuration; the bindings override what the user set. */
#define SP_DEFAULT_MAX_CALLPATH_DEPTH 128
#define SP_DEFAULT_TOTAL_MEMORY ((uint64_t)16000 * 1024)

typedef enum {
    SP_STATE_IDLE = 0,
    SP_STATE_RUNNING = 1,
    SP_STATE_FINALIZING = 2,
} sp_state;

/* What a finished measurement reports to its caller (summary, verbose output). */
typedef struct sp_results {
    uint64_t ticks_per_second;
    uint64_t start_time, end_time;
    uint64_t realtime_start_ns;
    uint32_t locations;
    uint32_t regions;
    uint64_t enters;
    uint64_t samples; /* samples recorded (sampling) */
    uint64_t unmatched_leaves;
    uint64_t trace_flushes;
    uint64_t trace_lost_records;
    uint64_t profile_folded_calls;      /* deeper than SCOREP_PROFILING_MAX_CALLPATH_DEPTH */
    uint64_t profile_dropped_calls;     /* no memory left for their call-path node */
    uint64_t profile_dropped_samples;   /* no memory left for their call path */
    uint64_t profile_folded_parameters; /* values beyond the per-call-path limit */
    uint64_t memory_peak_bytes;
    uint64_t memory_over_budget_bytes;
    /* Metrics: the CPU time this process's threads spent reading them (estimated from the
     * calibrated cost per read; not in the CPU-time metrics) and that cost per event. */
    uint64_t metric_reads_ns;
    uint64_t metric_read_cost_ns;
    uint32_t max_depth;
    int32_t mpi_rank, mpi_size; /* -1, 0 without MPI */
    bool mpi_collective;        /* all ranks wrote one experiment together */
    uint32_t clock_offset_ns_abs; /* |this rank's clock - rank 0's| at the end (capped) */
    uint32_t processes;            /* location groups written (this process and its members) */
    bool process_member;           /* this process handed its part over to its root */
    bool process_alone;            /* a member whose root had ended: it wrote alone */
    bool process_named;            /* ... and the root named it on stderr: it stays quiet */
    uint32_t process_number;
    uint32_t process_trace_failures; /* child processes whose events could not be written */
    char process_trace_error[512];   /* why the first one's could not */
    uint64_t trace_spill_failures; /* flushes that could not be written (full disk, limit) */
    char trace_spill_error[256];   /* why the first one failed */
    char trace_error[512];         /* the trace could not be written (the profile was) */
    bool part_written;             /* a spawned process wrote its part of the experiment */
    uint32_t spawned_ranks;        /* processes of spawned worlds adopted (the root) */
    char parts_missing[512];       /* spawned processes whose parts did not arrive */
    char output_dir[4096];         /* where the results are */
    /* The wait-state analysis (core/waitstates.h) at the end of a traced MPI run. */
    bool wait_states;               /* it ran; its metrics are in the profile */
    uint64_t wait_state_violations; /* messages received before they were sent */
    uint64_t wait_state_unmatched;  /* receives whose send was not found */
    uint64_t wait_state_ns;         /* how long it took on this process */
    char wait_state_error[256];     /* why it did not run when it should have */
} sp_results;

/* This process's clock against the group's root (rank 0): the offsets measured when the
 * group formed and at the end, with this process's times of measuring them. Readers
 * interpolate between the two. */
typedef struct sp_clock_sync {
    int64_t offset_begin_ns, offset_end_ns; /* root's clock minus ours */
    uint64_t sync_begin_ns, sync_end_ns;
} sp_clock_sync;

#define SP_MAX_LOCATIONS 65536

/* This process in the group of the processes one program started (child processes: see
 * adapters/process/process.h, which implements the group through files). A member hands
 * its part of the experiment over to the group's root when it ends; the root adopts the
 * parts of the members that ended and writes one experiment with them. */
typedef struct sp_process_info {
    bool member;
    uint32_t number;     /* a member's process number (the root's is its rank, else 0) */
    uint32_t parent;     /* the number of the process that started this member */
    uint64_t pid, parent_pid;
    char method[16];     /* how a member was started: fork, spawn, forkserver, subprocess, ... */
    char name[128];      /* a member's name: multiprocessing's, or its program's */
    char part_dir[4096]; /* a member: where the files it hands over go (also its spills) */
    char alone_dir[4096]; /* a member: its own experiment when its root ended before it */
    double timeout;      /* the root: seconds it waits for its members at its end */
} sp_process_info;

/* The measurement's state lives in core/measurement_state.h, for the core and the
 * substrates only; adapters and the bindings go through the functions here
 * (tools/check_layers.py checks it). What the event path reads of it inline: */
typedef struct sp_measurement sp_measurement;
typedef struct sp_measurement_live {
    _Atomic int state; /* sp_state */
    /* Bumped at every start and finalize: a thread whose cached location is of another
     * generation looks its location up again. */
    _Atomic uint32_t generation;
} sp_measurement_live;

/* Global because adapters are entered from interpreter hooks, signal handlers and MPI
 * wrappers that carry no context pointer. */
extern sp_measurement_live sp_live;

/* Thread-local data in the initial-exec model: a plain %fs-relative load on the event
 * path instead of a __tls_get_addr call (this core lives in a dlopen'ed module). */
#define SP_TLS _Thread_local __attribute__((tls_model("initial-exec")))

typedef struct sp_thread_state {
    sp_location *location; /* NULL: not measured (valid for `generation` only) */
    uint32_t generation;
    uint32_t busy; /* an adapter is already handling an event on this thread */
} sp_thread_state;

/* The calling thread's cached location. Thread-local because each thread records into its
 * own location without a lock. */
extern SP_TLS sp_thread_state sp_thread;

/* The calling thread's Python allocation counters (core/metrics.h), added to by the Python
 * adapter's allocator hook while --memory is on. */
extern SP_TLS sp_python_memory sp_thread_memory;

SP_MUST_CHECK int sp_measurement_start(const sp_config *config, char *err, size_t errlen);

/* Starts the measurement, then each step in order; when a step fails, the steps that ran
 * are undone in reverse order and the measurement is cancelled, so that nothing of a failed
 * start remains. */
SP_MUST_CHECK int sp_measurement_start_with(const sp_config *config, const sp_start_step *steps,
                                            size_t count, void *context, char *err,
                                            size_t errlen);

/* The calling thread's work is done (a Python thread's run() returned): its substrates
 * give their buffers back to the budget. Events that still follow are recorded. */
void sp_measurement_thread_ended(void);

/* Closes every open frame, writes all outputs and frees the measurement. */
SP_MUST_CHECK int sp_measurement_finalize(int64_t exit_status, sp_results *results, char *err,
                                          size_t errlen);

/* The running measurement's experiment directory (NULL when none runs). */
const char *sp_measurement_experiment_dir(void);

/* Before the end of a measurement whose process never joined the group it expected (an
 * MPI-mode run that never initialized MPI): the directory prepared for this process alone.
 * Returns 0, or -1 with one line in err (nothing changes then). */
SP_MUST_CHECK int sp_measurement_set_experiment_dir(const char *path, char *err, size_t errlen);

/* Called by the MPI adapter right after MPI_Init: the group of ranks and the thread levels.
 * Rank 0 prepares the experiment directory and all ranks adopt it. Returns 0, or -1 with
 * one line in err (the measurement then stays rank-local). `ipc` must live until the
 * measurement ends. */
SP_MUST_CHECK int sp_mpi_initialized(const sp_ipc *ipc, uint32_t world, int requested,
                                     int provided, char *err, size_t errlen);

/* Called by the MPI adapter in a process started with MPI_Comm_spawn by a measured parent,
 * before sp_mpi_initialized: it joins the parent's experiment in `experiment_dir` and
 * writes its part there at the end; `root_offset_ns` is its world's rank 0's clock against
 * the experiment's root. Returns 0, or -1 with one line in err. */
SP_MUST_CHECK int sp_mpi_spawned(const char *experiment_dir, int64_t root_offset_ns, char *err,
                                 size_t errlen);

/* Called by the MPI adapter after MPI_Comm_spawn started `size` measured processes as world
 * `world`: the experiment's root waits for their parts. */
SP_MUST_CHECK int sp_mpi_spawn_announce(uint32_t world, uint32_t size, char *err, size_t errlen);

/* Called by the child processes' adapter when this process joins their group, as the root
 * or as a member. `ipc` must live until the measurement ends. */
void sp_processes_joined(const sp_ipc *ipc, const sp_process_info *info);

/* A member's name, known late (multiprocessing names a process when it bootstraps). */
void sp_processes_set_name(const char *name);

/* A member whose root ended first, and named it on stderr as still running with where its
 * results go: writing alone, it says nothing more (its notes are in its MANIFEST.md). */
void sp_processes_named_by_root(void);

/* This rank and the group's size while a larger group is joined (false: none). */
bool sp_measurement_group(uint32_t *rank, uint32_t *size);

/* Called by the MPI_Finalize wrapper before PMPI_Finalize: writes everything while MPI
 * still works; the next sp_measurement_finalize returns what was written. */
void sp_mpi_finalizing(void);

/* The program's exit status as far as known, for the results written at MPI_Finalize
 * (the program may end after it). */
void sp_measurement_set_exit_status(int64_t status);

/* Called by the MPI_Abort wrapper before PMPI_Abort ends the job: this rank writes what
 * it has into <experiment>/rank-N/ without waiting for the others, then the host's abort
 * hook (the Python side: scorep.cfg, MANIFEST.md) runs. */
void sp_mpi_aborting(int errorcode);

/* What the host (the Python bindings) does once the results were written because of
 * MPI_Abort, while the process still exists. */
typedef void (*sp_abort_hook)(void);
void sp_measurement_set_abort_hook(sp_abort_hook hook);

/* Stops a measurement that was just started without writing anything (its host could not
 * set up the rest): everything it holds is freed. */
void sp_measurement_cancel(void);

/* Stops the measurement without writing or freeing anything: for the child of a fork,
 * whose copy of the parent's buffers must never reach the parent's files. */
void sp_measurement_abandon(void);

/* What adapters and the bindings read of the measurement (not on the event path). */
/* The configuration it started with (copied; valid while it runs and until the next start). */
const sp_config *sp_measurement_config(void);
/* The metrics it reads at every enter and leave (core/metrics.h). */
const sp_metric_set *sp_measurement_metrics(void);
/* Whether recording is on (scorep.user.enable_recording). */
bool sp_measurement_recording(void);
/* This process's clock against its group's root at the start (0 alone). */
int64_t sp_measurement_clock_offset_ns(void);
/* Whether a larger group (MPI) joined. */
bool sp_measurement_grouped(void);

static inline bool sp_measurement_running(void)
{
    return atomic_load_explicit(&sp_live.state, memory_order_acquire) == SP_STATE_RUNNING;
}

/* Bumped at every start and end of a measurement: what an adapter caches per measurement
 * carries the generation it was made in. */
static inline uint32_t sp_measurement_generation(void)
{
    return atomic_load(&sp_live.generation);
}

/* Whether the calling thread's cached location (possibly NULL: not measured) belongs to
 * the current generation. The event path checks this and otherwise calls
 * sp_location_attach with the thread's identity. */
static inline bool sp_location_cache_valid(void)
{
    return sp_thread.generation == atomic_load_explicit(&sp_live.generation, memory_order_relaxed);
}

/* Adapters compiled into the core library (adapters/<name>/, other than python and mpi)
 * take part in every measurement's life cycle through these hooks, as Score-P's subsystems
 * do: the core calls what was registered and never names an adapter. An adapter registers
 * once, from a constructor of the library. */
typedef struct sp_adapter_hooks {
    const char *name;
    /* The measurement is about to run (definitions exist, no location yet): set up what
     * records. Returns 0, or -1 with one line in err (the start fails). */
    int (*begin)(const sp_config *config, char *err, size_t errlen);
    /* The measurement stops recording (finalize, cancel): undo what begin set up. Events
     * that still arrive find no running measurement. */
    void (*end)(void);
} sp_adapter_hooks;

#define SP_MAX_ADAPTERS 8

/* Returns 0, or -1 when SP_MAX_ADAPTERS are registered already. */
int sp_adapter_register(const sp_adapter_hooks *hooks);

/* The calling thread does the tool's own work (its verbose output, its files) until the
 * matching end: nothing it does meanwhile is recorded (calls, I/O). Nests. */
static inline void sp_measurement_quiet_begin(void)
{
    sp_thread.busy++;
}

static inline void sp_measurement_quiet_end(void)
{
    if (sp_thread.busy)
        sp_thread.busy--;
}

/* Sizes of the measurement's memory and records that the tools' models need (scorep-score
 * estimates a trace's size and SCOREP_TOTAL_MEMORY from a profile); the bindings export them
 * so that no number is repeated by hand. */
typedef struct sp_layout {
    uint32_t chunk_bytes;             /* every chunk of the SCOREP_TOTAL_MEMORY budget */
    uint32_t trace_record_bytes;      /* one raw trace record */
    uint32_t trace_chunk_header_bytes; /* the header of a chunk of raw records */
    uint32_t profile_nodes_per_chunk; /* call-path nodes in one chunk */
    uint32_t profile_max_parameter_values; /* values of one parameter under one call path */
    uint32_t max_locations;
    uint32_t default_max_callpath_depth;
    uint64_t default_total_memory;
} sp_layout;

void sp_measurement_layout(sp_layout *layout);

/* How many raw trace records an event takes, by the event's name ("enter", "io_seek", ...):
 * the trace substrate's own table (the one its decoder walks the records by), which
 * scorep-score's trace-size estimate reads through the bindings. */
typedef struct sp_trace_event_records {
    const char *event;
    uint32_t records;
} sp_trace_event_records;

/* Fills up to `cap` entries; returns how many there are. */
size_t sp_measurement_trace_records(sp_trace_event_records *out, size_t cap);

/* --- definitions of the running measurement (its filter decides) ------------------------ */

/* A Python function's region: a new one per code object. SP_NO_ID when the filter leaves
 * it out (or out of memory). */
uint32_t sp_region_define_code(const char *name, const char *canonical, const char *file,
                               int32_t line);

/* A C function called from Python (`name`: module[.Type]:function; `canonical`: how cProfile
 * spells it, the region's mangled name): a new region of paradigm compiler, in its module's
 * group. SP_NO_ID when the filter's region rules leave it out (file rules never do: it has
 * no source file) or out of memory. */
uint32_t sp_region_define_c(const char *name, const char *canonical);

/* A native (compiled) frame of a sample: "symbol [library]" with the library's path as its
 * file, made on first use; SP_NO_ID when the filter leaves it out. */
uint32_t sp_region_define_native(const char *name, const char *library);

/* A named region of `kind` (user regions), made on first use; *excluded tells whether the
 * filter leaves it out. SP_NO_ID when out of memory. */
uint32_t sp_region_define_named(const char *name, const char *file, int32_t line,
                                sp_region_kind kind, bool *excluded);

/* An existing named region (SP_NO_ID: none); *excluded as above. */
uint32_t sp_region_find_named(const char *name, sp_region_kind kind, bool *excluded);

/* The region of a function of a paradigm (an MPI function), made on first use. */
uint32_t sp_region_define_paradigm(const char *name, sp_paradigm paradigm, sp_role role,
                                   sp_region_kind kind);

/* Communicators, MPI groups and RMA windows of the running measurement (core/defs.h). */
uint32_t sp_comm_define(const sp_comm_spec *spec);
void sp_comm_set_name(uint32_t comm, const char *name, bool root);
uint32_t sp_rma_win_define(uint64_t key, uint32_t comm, const char *name);
void sp_rma_win_set_name(uint32_t win, const char *name);

uint32_t sp_parameter_define(const char *name, sp_param_type type);
uint32_t sp_string_define(const char *text);

#endif
