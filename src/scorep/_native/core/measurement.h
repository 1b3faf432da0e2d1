/* The measurement core: one measurement at a time per process, started and finalized as
 * often as needed (the Jupyter kernel measures cell after cell). Adapters turn what happens
 * into sp_enter/sp_leave/... on the current thread's location; the core keeps definitions
 * and locations and hands events to the substrates (trace, profile). */
#ifndef SCOREP_CORE_MEASUREMENT_H
#define SCOREP_CORE_MEASUREMENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/clock.h"
#include "core/defs.h"
#include "core/filter.h"
#include "core/location.h"
#include "core/memory.h"

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
    const char *program_name;
    const char *const *program_args;
    uint32_t program_argc;
    const char *machine_name;
    const char *node_name;
    const char *creator;
    const char *filter_file; /* SCOREP_FILTERING_FILE; NULL or "" for none */
} sp_config;

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
    uint64_t unmatched_leaves;
    uint64_t trace_flushes;
    uint64_t trace_lost_records;
    uint64_t profile_folded_calls;      /* deeper than SCOREP_PROFILING_MAX_CALLPATH_DEPTH */
    uint64_t profile_dropped_calls;     /* no memory left for their call-path node */
    uint64_t profile_folded_parameters; /* values beyond the per-call-path limit */
    uint64_t memory_peak_bytes;
    uint64_t memory_over_budget_bytes;
    uint32_t max_depth;
    int32_t mpi_rank, mpi_size; /* -1, 0 without MPI */
    bool mpi_collective;        /* all ranks wrote one experiment together */
    uint32_t clock_offset_ns_abs; /* |this rank's clock - rank 0's| at the end (capped) */
    uint64_t trace_spill_failures; /* flushes that could not be written (full disk, limit) */
    char trace_spill_error[256];   /* why the first one failed */
    char trace_error[512];         /* the trace could not be written (the profile was) */
    char output_dir[4096];         /* where the results are */
} sp_results;

/* What the MPI adapter lends the core for the end of the measurement: collectives over
 * MPI_COMM_WORLD through PMPI (the core itself does not link MPI). All return 0 on
 * success and are called by every rank in the same order. */
typedef struct sp_mpi_ops {
    /* 0 when every rank reached the end within `timeout` seconds (and agreed on it). */
    int (*agree)(double timeout);
    /* Rank 0 gets all ranks' bytes, concatenated in rank order (*all: malloc'ed, sizes[r]). */
    int (*gather)(const void *data, uint64_t size, void **all, uint64_t *sizes);
    /* Rank 0 sends parts[r] to rank r; every rank gets its own (*mine: malloc'ed). */
    int (*scatter)(void *const *parts, const uint64_t *sizes, void **mine, uint64_t *size);
    /* Rank 0's bytes to every rank. */
    int (*bcast)(void *data, uint64_t size);
    /* Rank 0's CLOCK_MONOTONIC minus this rank's, in ns (0 on rank 0). */
    int (*clock_offset)(int64_t *offset_ns);
    /* OTF2_CollectiveCallbacks for the archive, and their user data. */
    const void *otf2_collectives;
    void *otf2_data;
} sp_mpi_ops;

#define SP_MAX_LOCATIONS 65536

typedef struct sp_measurement {
    _Atomic int state; /* sp_state */
    /* Bumped at every start and finalize: a thread whose cached location is of another
     * generation looks its location up again. */
    _Atomic uint32_t generation;
    sp_config config;
    char *experiment_dir;
    sp_defs defs;
    sp_chunk_pool pool;
    sp_clock_anchor start, end;

    pthread_mutex_t locations_lock; /* taken only when a thread gets its location */
    sp_location *locations[SP_MAX_LOCATIONS];
    _Atomic uint32_t location_count;

    /* Recording on/off (scorep.user.enable_recording): every change bumps the epoch; each
     * location writes its MeasurementOnOff marker at its next event. */
    _Atomic bool recording;
    _Atomic uint32_t recording_epoch;
    _Atomic uint64_t recording_changed_at;

    uint32_t program_region; /* the root of every call path */
    uint32_t error_region;
    uint32_t error_parameter;
    bool error_reported; /* the region-exit-without-enter message is printed once */

    struct sp_filter *filter; /* NULL: nothing is filtered */
    struct sp_trace *trace;

    struct {
        const sp_mpi_ops *ops; /* set when MPI is initialized */
        bool collective;       /* decided at the end: all ranks write together */
        uint32_t rank, size;
        int32_t thread_requested, thread_provided;
        int64_t offset_begin_ns, offset_end_ns; /* rank 0's clock minus ours */
        uint64_t sync_begin_ns, sync_end_ns;   /* when they were measured (our clock) */
        bool finalized;     /* the MPI_Finalize wrapper wrote the results already */
        bool aborting;      /* MPI_Abort: this rank writes its own part, no collectives */
        int abort_code;
        sp_results results; /* what it wrote, for the caller that finalizes next */
        int status;
        char error[512];
    } mpi;
    char *output_dir; /* where this measurement writes (a rank's own part when ranks failed) */
    _Atomic uint32_t busy_locations; /* event sections of threads without the GIL */
} sp_measurement;

/* The one measurement of this process. Global because adapters are entered from
 * interpreter hooks, signal handlers and MPI wrappers that carry no context pointer. */
extern sp_measurement sp_meas;

/* Thread-local data in the initial-exec model: a plain %fs-relative load on the event
 * path instead of a __tls_get_addr call (this core lives in a dlopen'ed module). */
#define SP_TLS _Thread_local __attribute__((tls_model("initial-exec")))

typedef struct sp_thread_state {
    sp_location *location; /* NULL: not measured (valid for `generation` only) */
    uint32_t generation;
    uint32_t busy; /* an adapter is already handling an event on this thread */
} sp_thread_state;

extern SP_TLS sp_thread_state sp_thread;

int sp_measurement_start(const sp_config *config, char *err, size_t errlen);

/* The calling thread's work is done (a Python thread's run() returned): its substrates
 * give their buffers back to the budget. Events that still follow are recorded. */
void sp_measurement_thread_ended(void);

/* Closes every open frame, writes all outputs and frees the measurement. */
int sp_measurement_finalize(int64_t exit_status, sp_results *results, char *err, size_t errlen);

/* Called by the MPI adapter right after MPI_Init: the rank, the collectives for the end,
 * the thread levels. Rank 0 prepares the experiment directory and all ranks adopt it.
 * Returns 0, or -1 with one line in err (the measurement then stays rank-local). */
int sp_mpi_initialized(uint32_t rank, uint32_t size, const sp_mpi_ops *ops, int requested,
                       int provided, char *err, size_t errlen);

/* Called by the MPI_Finalize wrapper before PMPI_Finalize: writes everything while MPI
 * still works; the next sp_measurement_finalize returns what was written. */
void sp_mpi_finalizing(void);

/* Called by the MPI_Abort wrapper before PMPI_Abort ends the job: this rank writes what
 * it has into <experiment>/rank-N/ without waiting for the others, then the host's abort
 * hook (the Python side: scorep.cfg, MANIFEST.md) runs. */
void sp_mpi_aborting(int errorcode);

/* What the host (the Python bindings) does once the results were written because of
 * MPI_Abort, while the process still exists. */
typedef void (*sp_abort_hook)(void);
void sp_measurement_set_abort_hook(sp_abort_hook hook);

/* MPI events of the calling thread's location (the frame of the MPI call is open). */
void sp_mpi_send(sp_location *loc, uint64_t time, uint32_t receiver, uint32_t comm,
                 uint32_t tag, uint64_t bytes);
void sp_mpi_recv(sp_location *loc, uint64_t time, uint32_t sender, uint32_t comm, uint32_t tag,
                 uint64_t bytes);
void sp_mpi_isend(sp_location *loc, uint64_t time, uint32_t receiver, uint32_t comm,
                  uint32_t tag, uint64_t bytes, uint64_t request);
void sp_mpi_isend_complete(sp_location *loc, uint64_t time, uint64_t request);
void sp_mpi_irecv_request(sp_location *loc, uint64_t time, uint64_t request);
void sp_mpi_irecv(sp_location *loc, uint64_t time, uint32_t sender, uint32_t comm, uint32_t tag,
                  uint64_t bytes, uint64_t request);
void sp_mpi_request_test(sp_location *loc, uint64_t time, uint64_t request);
void sp_mpi_collective_begin(sp_location *loc, uint64_t time);
void sp_mpi_collective_end(sp_location *loc, uint64_t time, uint32_t op, uint32_t comm,
                           uint32_t root, uint64_t sent, uint64_t received);

/* Threads that record without the GIL (MPI wrappers) bracket each recording section so
 * that the end of the measurement never pulls their location away mid-event. Returns
 * the location to record into, or NULL (then do not call sp_event_section_end). */
sp_location *sp_event_section_begin(void);
void sp_event_section_end(sp_location *loc);

/* Stops the measurement without writing or freeing anything: for the child of a fork,
 * whose copy of the parent's buffers must never reach the parent's files. */
void sp_measurement_abandon(void);

static inline bool sp_measurement_running(void)
{
    return atomic_load_explicit(&sp_meas.state, memory_order_acquire) == SP_STATE_RUNNING;
}

/* Whether the calling thread's cached location (possibly NULL: not measured) belongs to
 * the current generation. The event path checks this and otherwise calls
 * sp_location_attach with the thread's identity. */
static inline bool sp_location_cache_valid(void)
{
    return sp_thread.generation == atomic_load_explicit(&sp_meas.generation, memory_order_relaxed);
}

/* The calling thread's location: created when the measurement runs and either every thread
 * is measured or `register_thread` is set; otherwise NULL, and NULL is cached too. */
sp_location *sp_location_attach(uint64_t thread_ident, const char *name, bool register_thread);

void sp_location_set_name(sp_location *loc, const char *name);

/* --- events ---------------------------------------------------------------------------- */

void sp_enter(sp_location *loc, uint32_t region, uintptr_t key, uint64_t time);

/* Leaves the innermost frame with `key`, closing any frames opened inside it first.
 * Returns false (and records nothing) when no open frame has that key. */
bool sp_leave(sp_location *loc, uintptr_t key, uint64_t time);

/* A named region's end that matched no begin: recorded as error_region with the parameter
 * leave-region=<name>; prints the original bindings' two-line message once. */
void sp_region_exit_without_enter(sp_location *loc, const char *region_name, uint64_t time);

void sp_parameter_int(sp_location *loc, uint32_t parameter, int64_t value, uint64_t time);
void sp_parameter_uint(sp_location *loc, uint32_t parameter, uint64_t value, uint64_t time);
void sp_parameter_string(sp_location *loc, uint32_t parameter, uint32_t string, uint64_t time);

void sp_set_recording(bool on, uint64_t time);

/* Rewind: discard everything the location recorded since rewind_begin when rewind_end is
 * called with discard=true; the trace then shows measurement off/on for that span. */
void sp_rewind_begin(sp_location *loc, uint32_t region, uint64_t time);
/* Returns false when the region was not open (nothing done). */
bool sp_rewind_end(sp_location *loc, uint32_t region, bool discard, uint64_t time);

#endif
