/* The one measurement's state: what the core and the substrates share. Adapters and the
 * bindings never include this (tools/check_layers.py); they use core/measurement.h. */
#ifndef SCOREP_CORE_MEASUREMENT_STATE_H
#define SCOREP_CORE_MEASUREMENT_STATE_H

#include "core/measurement.h"
#include "core/part.h"

typedef struct sp_measurement {
    sp_config config;
    sp_defs defs;
    sp_chunk_pool pool;
    sp_clock_anchor start, end;
    /* One bit per substrate that records (core/substrates.h). */
    uint32_t substrates;

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
    /* Score-P's artificial regions of the profile (SP_NO_ID without profiling): the time
     * while recording was off, the pauses to flush trace buffers, and (defined at the first
     * call deeper than SCOREP_PROFILING_MAX_CALLPATH_DEPTH) the calls beyond the limit. */
    uint32_t measurement_off_region;
    uint32_t buffer_flush_region;
    _Atomic uint32_t collapse_region;
    /* MPI events were left out (recording off, a rewind discarded them): the trace's
     * OTF2::MPI_COMMUNICATION_COMPLETE property is false then, as in Score-P. */
    _Atomic bool mpi_events_unrecorded;
    uint32_t error_parameter;
    bool error_reported; /* the region-exit-without-enter message is printed once */

    struct sp_filter *filter; /* NULL: nothing is filtered */

    /* Reads the calling thread's own call stack while calling contexts are recorded
     * (sp_set_unwinder); NULL otherwise. */
    sp_unwinder unwinder;

    /* The group of processes this one writes its results with: itself alone until a
     * paradigm (MPI) joins a larger group. */
    sp_ipc ipc;
    bool grouped;    /* a larger group joined */
    bool collective; /* decided at the end: the group writes one experiment together */
    /* The MPI world this process belongs to: 0 for the job's first, the token of a world
     * started with MPI_Comm_spawn otherwise (communicators name their members by it). */
    uint32_t world;
    sp_clock_sync clock_sync;
    /* What the wait-state analysis did (core/substrates.h fills it, the results report it). */
    struct {
        bool ran;
        uint64_t violations, unmatched, ns;
        char error[256];
    } wait_states;

    /* The child processes' group (core/ipc.h through files; adapters/process): NULL when
     * this process follows none. Adapter-owned: the root's size is fixed by its agree. */
    struct {
        const sp_ipc *ipc;
        sp_process_info info;
        uint64_t begin_ns;   /* a member: when it started measuring (CLOCK_MONOTONIC) */
        bool alone;          /* a member whose root had ended: it wrote its own experiment */
        bool named;          /* ... and the root said so (sp_processes_named_by_root) */
        void *received;      /* the root: the bytes its members handed over (owned) */
        sp_part_contents *parts;
        uint32_t part_count;
    } processes;

    struct {
        int32_t thread_requested, thread_provided; /* MPI_Init_thread levels, -1 unknown */
        bool finalized;     /* the MPI_Finalize wrapper wrote the results already */
        bool aborting;      /* MPI_Abort: this rank writes its own part, no collectives */
        int abort_code;
        int64_t exit_status; /* for a write at MPI_Finalize */
        sp_results results; /* what it wrote, for the caller that finalizes next */
        int status;
        char error[512];
    } mpi;
    char *output_dir; /* where this measurement writes (a rank's own part when ranks failed) */
    /* Rank 0 of an MPI run: the flock on the experiment directory it prepared
     * (core/experiment_dir.h), held until the measurement is released; SP_NO_LOCK else. */
    int experiment_lock;
    /* A process of a world started with MPI_Comm_spawn by a measured parent: it writes a
     * part of the parent's experiment (core/part.h). */
    struct {
        bool active;
        char *dir;              /* the parent's experiment directory */
        int64_t root_offset_ns; /* its world's rank 0's clock against the experiment's root */
    } spawned;
    /* At the experiment's root: the parts it adopts at the end. */
    struct sp_part *parts;
    uint32_t part_count;
    struct sp_io_registry *io; /* native I/O handles bound to defined ones (core/io.h) */
    /* The metrics read at every enter and leave (core/metrics.h); count 0: none. */
    sp_metric_set metrics;
} sp_measurement;

/* The one measurement of this process. Global for the reason sp_live is. */
extern sp_measurement sp_meas;

#endif
