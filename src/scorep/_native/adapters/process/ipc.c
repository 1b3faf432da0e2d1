/* The core's group operations (core/ipc.h) for child processes, through files in the
 * experiment directory. The group's members leave when they end (a pool worker must not
 * wait for its parent), so every operation flows to the root:
 *   agree    member: "I arrive and will hand my part over" unless the root has closed its
 *            group (then -1: it writes alone); root: wait (bounded) until every living
 *            member arrived, close the group; the members that arrived are ranks 1.. now
 *   gather(v) member: its bytes into N/op-K (written whole, then renamed: the root never
 *            reads half a file); root: each arrived member's file, waiting while the member
 *            lives (bounded); a member that died before writing contributes zeros
 *   barrier  nothing to wait for (members do not wait; the root waits in its gathers)
 *   bcast, scatter(v): only in a group of one (a member cannot receive: it is gone)
 *   clock_offset: 0 (one host, one CLOCK_MONOTONIC) */
#include "adapters/process/internal.h"
#include "core/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the member ------------------------------------------------------------------------- */

static int member_send(const void *in, uint64_t bytes)
{
    char name[32], path[4400];
    snprintf(name, sizeof name, "op-%u", sp_proc.next_op++);
    sp_process_member_path(sp_proc.number, name, path, sizeof path);
    return sp_file_write_atomic(path, in, (size_t)bytes, NULL, 0);
}

static int member_agree(void)
{
    int fd = sp_process_lock_registry();
    if (fd < 0)
        return -1;
    bool closed = sp_process_root_closed();
    char path[4400];
    if (closed) {
        sp_process_member_path(sp_proc.number, "named", path, sizeof path);
        if (access(path, F_OK) == 0)
            sp_processes_named_by_root();
    }
    sp_process_member_path(sp_proc.number, "arrived", path, sizeof path);
    int status = -1;
    if (!closed) {
        int marker = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
        if (marker >= 0) {
            close(marker);
            status = 0;
        }
    }
    sp_process_unlock_registry(fd);
    sp_proc.alone = status != 0;
    return status;
}

/* ---- the root ----------------------------------------------------------------------------- */

static void say_waiting(const sp_member *members, uint32_t count, double timeout)
{
    char who[600] = "";
    size_t used = 0;
    uint32_t shown = 0;
    for (uint32_t i = 0; i < count && used < sizeof who - 100; i++) {
        if (!members[i].alive || members[i].arrived || !members[i].working)
            continue;
        if (shown++ == 3) {
            used += (size_t)snprintf(who + used, sizeof who - used, ", ...");
            break;
        }
        used += (size_t)snprintf(who + used, sizeof who - used, "%spid %llu %s",
                                 shown > 1 ? ", " : "", (unsigned long long)members[i].pid,
                                 members[i].name[0]     ? members[i].name
                                 : members[i].method[0] ? members[i].method
                                                        : "starting");
    }
    fprintf(stderr,
            "scorep: waiting up to %g s for child process(es) still working to end (%s); "
            "SCOREP_CHILDREN_TIMEOUT sets how long\n",
            timeout, who);
    fflush(stderr);
}

/* How long the members still running must all have been idle (blocked: none of their
 * threads, nor of their children's, running or waiting for a CPU) before the root stops
 * waiting for them. A member that only waits at the root's end waits for something the
 * root will not do any more: a resource tracker reads a pipe until the root's exit closes
 * it, a server waits for requests, a daemon for a signal. Waiting for it would wait for
 * the root's own end (issue 30: joblib's tracker made every run last 60 s more). A member
 * that works ends on its own: it is waited for, at most SCOREP_CHILDREN_TIMEOUT. Half a
 * second lets a child that pauses briefly (its interpreter's start, a short I/O wait)
 * show that it works; a quarter of the looks must find one working. */
#define IDLE_WINDOW_SECONDS 0.5

/* Marks each member still running as working or not; true when one is. */
static bool look_at_running(sp_member *members, uint32_t count)
{
    bool any = false;
    for (uint32_t i = 0; i < count; i++) {
        sp_member *m = &members[i];
        m->working = m->alive && !m->arrived && sp_process_working(m->pid);
        any = any || m->working;
    }
    return any;
}

/* Waits until no living member of this root is still running (they arrived or died), at
 * most until `until`, or until those still running were idle for IDLE_WINDOW_SECONDS;
 * with `close`, then closes the group (under the registry lock, so that every member
 * either arrived before or finds the group closed). Returns the registry's members
 * (*count), or NULL. */
static sp_member *wait_for_members(double until, bool close_group, uint32_t *count)
{
    double start = sp_process_now(), pause = 0.001, window = start;
    uint32_t looks = 0, working_looks = 0;
    bool told = false;
    sp_member *members = NULL;
    for (;;) {
        int fd = sp_process_lock_registry();
        if (fd < 0) {
            free(members);
            return NULL;
        }
        free(members);
        members = sp_process_scan_members(count);
        uint32_t pending = 0;
        for (uint32_t i = 0; i < *count; i++)
            pending += members[i].alive && !members[i].arrived;
        bool working = pending && look_at_running(members, *count);
        double now = sp_process_now();
        looks++;
        working_looks += working;
        if (pending && now - window >= IDLE_WINDOW_SECONDS) {
            if (working_looks * 4 < looks)
                sp_proc.idle_end = true;
            window = now;
            looks = working_looks = 0;
        }
        if (pending == 0 || now >= until || sp_proc.idle_end) {
            if (close_group) {
                char path[4400], name[64];
                snprintf(name, sizeof name, "root-%u.closed", sp_proc.root);
                snprintf(path, sizeof path, "%s/%s", sp_proc.registry, name);
                int closed = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
                if (closed >= 0)
                    close(closed);
                /* The root names the members still running on stderr with where their
                 * results go (root_agree: late): they need not say it again, after the
                 * program's end. */
                for (uint32_t i = 0; i < *count; i++) {
                    if (!members[i].alive || members[i].arrived)
                        continue;
                    sp_process_member_path(members[i].number, "named", path, sizeof path);
                    int named = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
                    if (named >= 0)
                        close(named);
                }
            }
            sp_process_unlock_registry(fd);
            if (sp_proc.idle_end)
                for (uint32_t i = 0; i < *count; i++)
                    members[i].working = false;
            return members;
        }
        sp_process_unlock_registry(fd);
        if (!told && now - start > 2.0 && !sp_proc.told && working) {
            say_waiting(members, *count, sp_proc.timeout);
            told = sp_proc.told = true;
        }
        sp_process_sleep(pause);
        pause = pause < 0.05 ? pause * 2 : 0.05;
    }
}

void sp_process_wait(void)
{
    if (!sp_proc.joined || sp_proc.member || !sp_proc.root_ready || sp_proc.wait_until)
        return;
    sp_proc.wait_until = sp_process_now() + sp_proc.timeout;
    uint32_t count = 0;
    free(wait_for_members(sp_proc.wait_until, false, &count));
}

static int root_agree(double timeout)
{
    sp_proc.ipc.size = 1;
    free(sp_proc.members);
    sp_proc.members = NULL;
    sp_proc.member_count = 0;
    if (!sp_proc.root_ready)
        return 0; /* no child ever learnt where to join */
    /* A wait before the end (sp_process_wait) counts against the same timeout. */
    double until = sp_proc.wait_until ? sp_proc.wait_until : sp_process_now() + timeout;
    uint32_t count = 0;
    sp_member *members = wait_for_members(until, true, &count);
    if (!members && count == 0)
        return -1;
    /* Those that arrived form the group with the root; the others are reported. */
    sp_proc.members = calloc(count ? count : 1, sizeof *sp_proc.members);
    if (!sp_proc.members) {
        free(members);
        return -1;
    }
    for (uint32_t i = 0; i < count; i++) {
        if (members[i].arrived)
            sp_proc.members[sp_proc.member_count++] = members[i];
        else if (members[i].alive)
            sp_process_add_outcome(&members[i], SP_PROCESS_LATE);
        else if (!members[i].reserved) /* (a reserved child that never joined measured nothing) */
            sp_process_add_outcome(&members[i], SP_PROCESS_LOST);
    }
    free(members);
    sp_proc.ipc.size = 1 + sp_proc.member_count;
    sp_proc.deadline = sp_process_now() + timeout;
    sp_proc.next_op = 0;
    return 0;
}

/* Member i's contribution to the current operation: `bytes` bytes into `out`. A member
 * that died before writing it, or is still busy at the deadline, contributes zeros and
 * counts as lost. */
static void root_receive(uint32_t i, uint32_t op, void *out, uint64_t bytes)
{
    sp_member *m = &sp_proc.members[i];
    char name[32], path[4400];
    snprintf(name, sizeof name, "op-%u", op);
    sp_process_member_path(m->number, name, path, sizeof path);
    double pause = 0.0005;
    int fd = -1;
    while (!m->lost) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0)
            break;
        if (!sp_process_member_alive(m)) {
            fd = open(path, O_RDONLY | O_CLOEXEC); /* written just before it ended */
            if (fd < 0)
                m->lost = true;
            break;
        }
        if (sp_process_now() > sp_proc.deadline) {
            m->lost = true;
            break;
        }
        sp_process_sleep(pause);
        pause = pause < 0.02 ? pause * 2 : 0.02;
    }
    memset(out, 0, bytes);
    if (fd < 0)
        return;
    struct stat st;
    char *p = out;
    uint64_t left = bytes;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != bytes)
        m->lost = true;
    while (!m->lost && left) {
        ssize_t n = read(fd, p, left > (1u << 30) ? (1u << 30) : (size_t)left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            m->lost = true;
            memset(out, 0, bytes);
            break;
        }
        p += n;
        left -= (uint64_t)n;
    }
    close(fd);
}

/* ---- the operations ---------------------------------------------------------------------- */

static int op_agree(void *ctx, double timeout)
{
    (void)ctx;
    return sp_proc.member ? member_agree() : root_agree(timeout);
}

static int op_barrier(void *ctx)
{
    (void)ctx;
    return 0;
}

static int op_bcast(void *ctx, void *data, uint64_t bytes, uint32_t root)
{
    (void)ctx, (void)data, (void)bytes;
    return !sp_proc.member && sp_proc.ipc.size == 1 && root == 0 ? 0 : -1;
}

/* Gather and gatherv: each member's `bytes` go into root's `out` after root's own, `counts`
 * of them per rank (NULL: `bytes` each). */
static int gather(const void *in, uint64_t bytes, void *out, const uint64_t *counts,
                  uint32_t root)
{
    if (root != 0)
        return -1;
    if (sp_proc.member)
        return member_send(in, bytes);
    uint32_t op = sp_proc.next_op++;
    if (counts && counts[0] != bytes)
        return -1;
    if (bytes && in != out)
        memmove(out, in, bytes);
    uint64_t offset = bytes;
    for (uint32_t i = 0; i < sp_proc.member_count; i++) {
        uint64_t want = counts ? counts[i + 1] : bytes;
        root_receive(i, op, (char *)out + offset, want);
        offset += want;
    }
    return 0;
}

static int op_gather(void *ctx, const void *in, uint64_t bytes, void *out, uint32_t root)
{
    (void)ctx;
    return gather(in, bytes, out, NULL, root);
}

static int op_gatherv(void *ctx, const void *in, uint64_t bytes, void *out,
                      const uint64_t *counts, uint32_t root)
{
    (void)ctx;
    return gather(in, bytes, out, counts, root);
}

static int op_scatter(void *ctx, const void *in, void *out, uint64_t bytes, uint32_t root)
{
    (void)ctx;
    if (sp_proc.member || sp_proc.ipc.size != 1 || root != 0)
        return -1;
    if (bytes && in != out)
        memmove(out, in, bytes);
    return 0;
}

static int op_scatterv(void *ctx, const void *in, const uint64_t *counts, void *out,
                       uint64_t bytes, uint32_t root)
{
    (void)ctx;
    if (sp_proc.member || sp_proc.ipc.size != 1 || root != 0 || counts[0] != bytes)
        return -1;
    if (bytes && in != out)
        memmove(out, in, bytes);
    return 0;
}

const sp_ipc_ops sp_process_ipc_ops = {
    .agree = op_agree,
    .barrier = op_barrier,
    .bcast = op_bcast,
    .gather = op_gather,
    .gatherv = op_gatherv,
    .scatter = op_scatter,
    .scatterv = op_scatterv,
    .clock_offset = sp_ipc_same_clock,
};

/* After the gathers: the members whose parts arrived are adopted, the others lost. Called
 * from sp_process_finished's caller side through the outcomes. */
void sp_process_record_gathered(void)
{
    for (uint32_t i = 0; i < sp_proc.member_count; i++)
        sp_process_add_outcome(&sp_proc.members[i],
                               sp_proc.members[i].lost ? SP_PROCESS_LOST : SP_PROCESS_ADOPTED);
    sp_proc.member_count = 0;
}
