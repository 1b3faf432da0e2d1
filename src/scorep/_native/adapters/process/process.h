/* Child processes: every Python process a measured program starts (multiprocessing with
 * any start method, concurrent.futures, subprocess, os.fork) measures itself as a *member*
 * of one group whose *root* is the measured program's process (with MPI: each rank is the
 * root of its own children). The group lives in the experiment directory:
 *
 *   <experiment>/.scorep-processes/
 *       registry        flock'ed to number members and to close a root's group
 *       root-R          flock'ed by root R while it lives
 *       root-R.closed   root R stopped waiting: members that end later write alone
 *       N/reserved      the parent reserved number N for a child it starts now
 *       N/pid           that child's pid, once known
 *       N/info          pid and its start time (/proc: with the pid, what tells whether
 *                       member N still runs, killed or not; it holds no descriptor its
 *                       program could see), parent, root, how it was started, its name
 *       N/arrived       member N reached its end and hands its part over
 *       N/op-K          member N's contribution to the root's K-th gather
 *       N/traces/       its OTF2 event files, moved into the experiment by the root
 *
 * A member hands its part over when it ends (nothing waits for the root: a pool worker
 * that is terminated or calls os._exit ends at once); the root waits at its own end for its
 * members that still work (they or their children run), at most SCOREP_CHILDREN_TIMEOUT
 * seconds, and writes one experiment with them. Members that only wait (a resource tracker
 * reading a pipe until the program's end closes it, a server, a daemon) are not waited for:
 * waiting for them would wait for the root's own end. They write alone when they end.
 * The exchange is the core's group interface (core/ipc.h) implemented through these files:
 * agree (the root waits, then closes its group), barrier and gather(v) to the root. Members
 * never receive: they are gone when the root writes. No daemon, no network.
 *
 * The bindings call the functions below; the core learns about the group through
 * sp_processes_joined (core/measurement.h). */
#ifndef SCOREP_ADAPTERS_PROCESS_H
#define SCOREP_ADAPTERS_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* Where a child belongs: what a process hands to the children it starts (in the
 * environment for an interpreter it executes; a forked child finds it in memory). */
typedef struct sp_process_lineage {
    char dir[4096];      /* the group's experiment directory */
    uint32_t root;       /* the root's process number (its MPI rank, else 0) */
    uint32_t parent;     /* the process number of the process that starts the child */
    uint32_t base;       /* the first number a child gets (MPI: the number of ranks) */
    uint64_t parent_pid;
} sp_process_lineage;

/* What became of a member, as the root saw it at its end. */
typedef enum {
    SP_PROCESS_ADOPTED = 0, /* its part is in the experiment */
    SP_PROCESS_LOST,        /* it died without handing its part over (SIGKILL, a crash) */
    SP_PROCESS_LATE,        /* still running when the root stopped waiting: it writes alone */
} sp_process_fate;

typedef struct sp_process_outcome {
    uint32_t number, parent;
    uint64_t pid;
    char method[16];
    char name[128];
    sp_process_fate fate;
    double seconds;      /* how long it had been running (lost, late) */
    uint64_t lost_bytes; /* trace records it had flushed to disk, discarded with it */
    bool idle;           /* late: it and its children were blocked (waiting, not working) */
} sp_process_outcome;

/* The running measurement's process becomes the root of the children it will start
 * (after sp_measurement_start). `timeout`: seconds to wait for them at the end. */
SP_MUST_CHECK int sp_process_root(double timeout, char *err, size_t errlen);

/* The running measurement's process is a child started by `method` ("fork", "spawn",
 * "forkserver", "subprocess", "os.fork", "exec") of the group `lineage` describes: it
 * registers with the number its parent reserved for it (SP_PROCESS_NONE: a new one). */
SP_MUST_CHECK int sp_process_member(const sp_process_lineage *lineage, const char *method,
                                    double timeout, uint32_t reserved, char *err,
                                    size_t errlen);

/* The root, before its measurement ends (the GIL released, its other threads running):
 * waits until its members ended, at most its timeout (which the end's waiting shares), or
 * until those still running have been idle for a moment. */
void sp_process_wait(void);

/* Before this process starts a child that will join (os.fork, an exec of a Python
 * interpreter): its number, reserved so that the root waits for it even if it has not
 * joined yet when the root ends. The child joins with this number; the pid is recorded once
 * known (a reservation whose process ended, or that nobody claimed within a few seconds,
 * is not waited for). SP_PROCESS_NONE: nothing reserved (no group). */
#define SP_PROCESS_NONE UINT32_MAX
uint32_t sp_process_reserve(void);
void sp_process_reserved_pid(uint32_t number, uint64_t pid);
void sp_process_unreserve(uint32_t number);

/* What a child started now inherits; false when this process follows no children. */
bool sp_process_lineage_for_child(sp_process_lineage *out);

/* In the child of a fork: what the parent's process handed down (computed in the parent
 * just before the fork); false when the parent followed no children. */
bool sp_process_forked_lineage(sp_process_lineage *out);

/* The member's name (multiprocessing's name of the process, or the program's). */
void sp_process_set_name(const char *name);

/* After the measurement ended: the root cleans the group's files up (and a member that
 * wrote alone its own); the outcomes of the root's members stay readable until the next
 * measurement. Returns how many there are, *list pointing at them. */
uint32_t sp_process_finished(const sp_process_outcome **list);

/* This process is the forked child of a group's process and continues unmeasured (or
 * will join as a member): what the parent holds is let go. */
void sp_process_forget(void);

#endif
