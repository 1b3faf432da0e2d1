/* What the child processes' adapter files share. Nothing outside adapters/process/
 * includes this. */
#ifndef SCOREP_ADAPTERS_PROCESS_INTERNAL_H
#define SCOREP_ADAPTERS_PROCESS_INTERNAL_H

#include "adapters/process/process.h"
#include "core/ipc.h"
#include "core/measurement.h"
#include "core/unify.h"

/* A member as the root sees it in the registry. */
typedef struct {
    uint32_t number, parent;
    uint64_t pid;
    uint64_t pid_start;  /* when its process started (/proc, clock ticks; 0: not known) */
    uint64_t started_ns; /* CLOCK_REALTIME when it registered */
    char method[16];
    char name[128];
    bool arrived; /* it reached its end and hands its part over */
    bool alive;   /* its process still runs (sp_process_member_alive) */
    bool lost;    /* its part did not come (it died while writing, or took too long) */
    bool reserved; /* only reserved by its parent: it has not joined (yet) */
    bool working;  /* when last looked at, it (or a child of its) ran or waited for a CPU */
} sp_member;

typedef struct {
    bool joined;       /* this process belongs to a group (as root or member) */
    bool member;
    bool root_ready;   /* the root's registry files exist and it holds root-R */
    bool alone;        /* a member whose root had ended: it writes its own experiment */
    char dir[4096];    /* the group's experiment directory */
    char registry[4200]; /* <dir>/.scorep-processes */
    uint32_t root, number, parent, base;
    uint64_t pid, parent_pid;
    uint64_t pid_start;  /* a member: when its process started (/proc, clock ticks) */
    uint64_t started_ns; /* a member: CLOCK_REALTIME when it registered */
    double timeout;
    int lock_fd;       /* the root: root-R, flock'ed while it lives (-1 in a member) */
    char method[16];
    sp_process_info info; /* what the core was told */

    /* The exchange (core/ipc.h). The root's group: itself (rank 0) and the members that
     * arrived (ranks 1..), fixed by its agree. */
    sp_ipc ipc;
    uint32_t next_op;  /* the sequence number of the next gather */
    sp_member *members;
    uint32_t member_count;
    double deadline;   /* the root: when it stops waiting for a member's files */
    double wait_until; /* the root: the end of its waiting for members (0: not begun) */
    bool told;         /* the root said on stderr that it waits */
    bool idle_end;     /* the root stopped waiting because its running members were idle */

    sp_process_outcome *outcomes;
    uint32_t outcome_count;
} sp_process_state;

/* The group this process belongs to. Global because fork handlers and the core's group
 * operations carry no context of ours, and a process belongs to one group. */
extern sp_process_state sp_proc;

/* registry.c */
double sp_process_now(void);
int sp_process_lock_registry(void); /* returns the descriptor to unlock, or -1 */
void sp_process_unlock_registry(int fd);
bool sp_process_root_closed(void);  /* the member's root stopped waiting or died */
/* The members of this root, sorted by number (malloc'ed; *count set). */
sp_member *sp_process_scan_members(uint32_t *count);
/* Whether the member's process still runs (its pid, started when it registered). */
bool sp_process_member_alive(const sp_member *m);
/* Whether a process, or one of its descendants, is running or runnable (/proc); true when
 * it cannot be told. */
bool sp_process_working(uint64_t pid);
void sp_process_member_path(uint32_t number, const char *file, char *out, size_t size);
void sp_process_sleep(double seconds);
void sp_process_add_outcome(const sp_member *m, sp_process_fate fate);

/* ipc.c; after the root's gathers: the outcomes of the members that had arrived. */
extern const sp_ipc_ops sp_process_ipc_ops;
void sp_process_record_gathered(void);

#endif
