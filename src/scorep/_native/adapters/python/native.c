/* Native frames of samples (--native, SCOREP_SAMPLING_NATIVE): the C stack of every thread
 * of the process at each tick, merged with its Python frames.
 *
 * At a tick the sampler thread sends each thread of the process (listed from
 * /proc/self/task) a real-time signal with tgkill; each handler unwinds its own thread
 * from the interrupted context with
 * libunwind in local-only mode and stores the raw instruction pointers into the thread's
 * preallocated slot. The handler allocates nothing, takes no lock and calls no Python API:
 * it looks its slot up by thread id in a fixed table, and libunwind's local unwinding
 * (unw_init_local2, unw_step, unw_get_reg) is documented signal-safe. Right after the
 * signals the sampler reads the Python frames (sampling.c's capture) and the pass, later,
 * takes the native stacks whose handler answered that tick's signal: a thread that was not
 * running at the tick runs its handler as soon as it is scheduled again, in the state it
 * had at the tick, so both halves of a sample are of the same moment (nobody waits for
 * the handlers). A thread whose handler has not run by the pass has no native frames in
 * that sample (counted).
 *
 * The sampler sends the signals itself instead of arming a timer per thread
 * (timer_create with SIGEV_THREAD_ID): the merge needs the native and the Python stack of
 * one moment, and the sampler is the one that knows when the Python stacks are read.
 *
 * Instruction pointers become regions at the pass, never in the handler: dladdr names the
 * symbol and the library ("dgemm_ [libblas.so.3]"), once per address (a table). */
#include "adapters/python/internal.h"
#include "adapters/python/native.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NATIVE_SLOTS 512      /* threads sampled at once; more are left out (counted) */
#define SYMBOL_SLOTS 65536    /* addresses named (power of two; filled at most half) */
#define RESCAN_TICKS 10       /* /proc/self/task is listed every this many ticks */
/* How long a pass the sampler runs itself waits for the handlers of its tick: a thread
 * waiting for a CPU on a busy machine runs its handler only when it gets one. */
#define PENDING_NS 20000000

/* One thread's slot: the sampler claims it (tid), asks (asked++ then the signal), the
 * handler answers (ips, count, then done = the asked it saw). Two buffers, by the parity
 * of `asked`: the pass can read the previous tick's answer while a late handler writes
 * this tick's. */
typedef struct {
    _Atomic pid_t tid; /* 0: free */
    _Atomic uint32_t asked, done;
    _Atomic unsigned long pthread; /* the thread's pthread_self(), as the handler saw it */
    uint32_t count[2];
    uintptr_t ips[2][SP_NATIVE_DEPTH];
} native_slot;

typedef struct signalled signalled;

typedef struct {
    uintptr_t ip; /* 0: free */
    uint32_t region;
    uint8_t kind; /* sp_native_kind */
} symbol_slot;

/* The native sampler of the running measurement. Global because a signal handler carries
 * no context of ours, and there is one measurement per process. */
static struct {
    bool enabled;
    bool installed;
    int signo;
    pid_t pid, sampler_tid;
    struct sigaction previous;
    native_slot *slots;
    pid_t *tasks; /* the last listing of /proc/self/task */
    uint32_t task_count;
    uint32_t ticks;
    /* The slots signalled at the last tick and what each was asked: read at the pass. */
    struct signalled {
        native_slot *slot;
        uint32_t asked;
    } signalled[NATIVE_SLOTS];
    uint32_t signalled_count;
    uint64_t signalled_at; /* CLOCK_MONOTONIC ns */
    symbol_slot *symbols;
    uint32_t symbol_count;
    /* Counted for MANIFEST.md. */
    _Atomic uint64_t stacks, missed;
} N;

static void handler(int signo, siginfo_t *info, void *context)
{
    int saved_errno = errno;
    if (info->si_code != SI_TKILL || info->si_pid != N.pid || !N.slots) {
        /* Not ours: the program's own use of the signal, if it had one. */
        errno = saved_errno;
        if (N.previous.sa_flags & SA_SIGINFO) {
            if (N.previous.sa_sigaction)
                N.previous.sa_sigaction(signo, info, context);
        } else if (N.previous.sa_handler != SIG_DFL && N.previous.sa_handler != SIG_IGN) {
            N.previous.sa_handler(signo);
        }
        return;
    }
    pid_t tid = (pid_t)syscall(SYS_gettid);
    native_slot *slot = NULL;
    for (uint32_t i = 0; i < NATIVE_SLOTS; i++)
        if (atomic_load_explicit(&N.slots[i].tid, memory_order_acquire) == tid) {
            slot = &N.slots[i];
            break;
        }
    if (slot) {
        uint32_t asked = atomic_load_explicit(&slot->asked, memory_order_acquire);
        uintptr_t *ips = slot->ips[asked & 1];
        uint32_t count = 0;
        unw_cursor_t cursor;
        /* x86-64: unw_context_t is the ucontext_t the kernel gave the handler; starting
         * there leaves the handler's own frames out. */
        if (unw_init_local2(&cursor, (unw_context_t *)context, UNW_INIT_SIGNAL_FRAME) == 0) {
            do {
                unw_word_t ip;
                if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0)
                    break;
                ips[count++] = (uintptr_t)ip;
            } while (count < SP_NATIVE_DEPTH && unw_step(&cursor) > 0);
        }
        slot->count[asked & 1] = count;
        atomic_store_explicit(&slot->pthread, (unsigned long)pthread_self(),
                              memory_order_relaxed);
        atomic_store_explicit(&slot->done, asked, memory_order_release);
    }
    errno = saved_errno;
}

int sp_native_start(void)
{
    if (!N.slots)
        N.slots = calloc(NATIVE_SLOTS, sizeof *N.slots);
    if (!N.tasks)
        N.tasks = calloc(NATIVE_SLOTS, sizeof *N.tasks);
    if (!N.symbols)
        N.symbols = calloc(SYMBOL_SLOTS, sizeof *N.symbols);
    if (!N.slots || !N.tasks || !N.symbols) {
        PyErr_NoMemory();
        return -1;
    }
    for (uint32_t i = 0; i < NATIVE_SLOTS; i++)
        atomic_store(&N.slots[i].tid, 0);
    memset(N.symbols, 0, SYMBOL_SLOTS * sizeof *N.symbols);
    N.symbol_count = 0;
    N.task_count = 0;
    N.signalled_count = 0;
    N.ticks = 0;
    N.pid = getpid();
    atomic_store(&N.stacks, 0);
    atomic_store(&N.missed, 0);
    /* A real-time signal the program is least likely to use: the highest one that has no
     * handler yet (glibc keeps the lowest few for itself). */
    if (!N.installed) {
        N.signo = 0;
        for (int s = SIGRTMAX; s > SIGRTMIN + 2; s--) {
            struct sigaction now;
            if (sigaction(s, NULL, &now) == 0 && now.sa_handler == SIG_DFL) {
                N.signo = s;
                break;
            }
        }
        if (!N.signo) {
            PyErr_SetString(PyExc_RuntimeError,
                            "--native: every real-time signal has a handler already");
            return -1;
        }
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = handler;
        action.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&action.sa_mask);
        if (sigaction(N.signo, &action, &N.previous) != 0) {
            PyErr_SetFromErrno(PyExc_OSError);
            return -1;
        }
        N.installed = true;
    }
    N.enabled = true;
    return 0;
}

void sp_native_stop(void)
{
    /* The handler stays installed (a late signal must not kill the program); it finds no
     * slot once the table is emptied. */
    N.enabled = false;
    if (N.slots)
        for (uint32_t i = 0; i < NATIVE_SLOTS; i++)
            atomic_store(&N.slots[i].tid, 0);
}

bool sp_native_enabled(void)
{
    return N.enabled;
}

void sp_python_native_counts(uint64_t counts[2])
{
    counts[0] = atomic_load(&N.stacks);
    counts[1] = atomic_load(&N.missed);
}

void sp_native_forget_in_child(void)
{
    N.pid = getpid();
    N.task_count = 0;
    N.signalled_count = 0;
    if (N.slots)
        for (uint32_t i = 0; i < NATIVE_SLOTS; i++)
            atomic_store(&N.slots[i].tid, 0);
}

/* The sampler thread: the process's threads, every RESCAN_TICKS ticks; slots of threads
 * that ended are freed. */
static void list_tasks(void)
{
    DIR *dir = opendir("/proc/self/task");
    if (!dir)
        return;
    uint32_t n = 0;
    struct dirent *d;
    while ((d = readdir(dir)) && n < NATIVE_SLOTS) {
        pid_t tid = (pid_t)atoi(d->d_name);
        if (tid > 0 && tid != N.sampler_tid)
            N.tasks[n++] = tid;
    }
    closedir(dir);
    N.task_count = n;
    for (uint32_t i = 0; i < NATIVE_SLOTS; i++) {
        pid_t tid = atomic_load(&N.slots[i].tid);
        if (!tid)
            continue;
        bool alive = false;
        for (uint32_t k = 0; k < n && !alive; k++)
            alive = N.tasks[k] == tid;
        if (!alive)
            atomic_store(&N.slots[i].tid, 0);
    }
}

static native_slot *slot_of(pid_t tid)
{
    native_slot *free_slot = NULL;
    for (uint32_t i = 0; i < NATIVE_SLOTS; i++) {
        pid_t t = atomic_load_explicit(&N.slots[i].tid, memory_order_relaxed);
        if (t == tid)
            return &N.slots[i];
        if (!t && !free_slot)
            free_slot = &N.slots[i];
    }
    if (free_slot) {
        free_slot->count[0] = free_slot->count[1] = 0;
        atomic_store(&free_slot->pthread, 0);
        atomic_store(&free_slot->done, atomic_load(&free_slot->asked));
        atomic_store_explicit(&free_slot->tid, tid, memory_order_release);
    }
    return free_slot;
}

void sp_native_signal(void)
{
    N.signalled_count = 0;
    if (!N.enabled)
        return;
    if (!N.sampler_tid)
        N.sampler_tid = (pid_t)syscall(SYS_gettid);
    if (N.ticks++ % RESCAN_TICKS == 0)
        list_tasks();
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    N.signalled_at = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
    for (uint32_t i = 0; i < N.task_count; i++) {
        native_slot *slot = slot_of(N.tasks[i]);
        if (!slot)
            continue;
        uint32_t asked = atomic_fetch_add_explicit(&slot->asked, 1, memory_order_release) + 1;
        if (syscall(SYS_tgkill, N.pid, N.tasks[i], N.signo) != 0) {
            atomic_store(&slot->tid, 0); /* it ended */
            continue;
        }
        N.signalled[N.signalled_count++] = (signalled){slot, asked};
    }
}

bool sp_native_pending(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t now = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
    if (now - N.signalled_at > PENDING_NS)
        return false;
    for (uint32_t i = 0; i < N.signalled_count; i++)
        if (atomic_load_explicit(&N.signalled[i].slot->done, memory_order_acquire) !=
            N.signalled[i].asked)
            return true;
    return false;
}

uint32_t sp_native_collect(sp_native_stack *out, uint32_t capacity)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < N.signalled_count && n < capacity; i++) {
        native_slot *slot = N.signalled[i].slot;
        uint32_t asked = N.signalled[i].asked;
        uint32_t done = atomic_load_explicit(&slot->done, memory_order_acquire);
        /* Not answered yet: the previous tick's answer, if there is one, serves the threads
         * that never run Python (nothing to merge it with); a Python thread's sample then
         * goes without native frames. */
        bool fresh = done == asked;
        if (!fresh && (done != asked - 1 || !slot->count[done & 1]))  {
            atomic_fetch_add(&N.missed, 1);
            continue;
        }
        sp_native_stack *s = &out[n++];
        s->tid = atomic_load(&slot->tid);
        s->pthread = atomic_load(&slot->pthread);
        s->fresh = fresh;
        uint32_t count = slot->count[done & 1];
        s->count = count < SP_NATIVE_DEPTH ? count : SP_NATIVE_DEPTH;
        memcpy(s->ips, slot->ips[done & 1], s->count * sizeof *s->ips);
        if (fresh)
            atomic_fetch_add(&N.stacks, 1);
        else
            atomic_fetch_add(&N.missed, 1);
    }
    N.signalled_count = 0;
    return n;
}

/* ---- naming (the pass, never the handler) ---------------------------------------------- */

static inline uint32_t symbol_hash(uintptr_t ip)
{
    uint64_t v = (uint64_t)ip * 0x9E3779B97F4A7C15u;
    return (uint32_t)(v >> 40) & (SYMBOL_SLOTS - 1);
}

static bool is_interpreter(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "python", 6) == 0 || strncmp(base, "libpython", 9) == 0;
}

int sp_native_region(uintptr_t ip, bool innermost, uint32_t *region)
{
    /* A return address points after its call: the call is what the frame is in. */
    uintptr_t at = innermost ? ip : ip - 1;
    uint32_t i = symbol_hash(at);
    for (uint32_t probes = 0; probes < SYMBOL_SLOTS && N.symbols[i].ip; probes++) {
        if (N.symbols[i].ip == at) {
            *region = N.symbols[i].region;
            return N.symbols[i].kind;
        }
        i = (i + 1) & (SYMBOL_SLOTS - 1);
    }
    Dl_info info;
    int kind = SP_NATIVE_FRAME;
    *region = SP_NO_ID;
    if (dladdr((void *)at, &info) && info.dli_fname) {
        const char *lib = strrchr(info.dli_fname, '/');
        lib = lib ? lib + 1 : info.dli_fname;
        const char *sym = info.dli_sname;
        if (sym && (strncmp(sym, "_PyEval_EvalFrame", 17) == 0 ||
                    strncmp(sym, "PyEval_EvalFrame", 16) == 0))
            kind = SP_NATIVE_EVAL;
        else if (is_interpreter(info.dli_fname) || !*info.dli_fname)
            kind = SP_NATIVE_INTERPRETER;
        if (kind == SP_NATIVE_FRAME) {
            char name[512];
            /* Unnamed code of a library (a static function): one region per library, not
             * per address. */
            snprintf(name, sizeof name, "%s [%s]", sym ? sym : "??", lib);
            *region = sp_region_define_native(name, info.dli_fname);
        }
    } else {
        *region = sp_region_define_native("?? [unknown]", "");
    }
    if (N.symbol_count < SYMBOL_SLOTS / 2) {
        N.symbols[i] = (symbol_slot){at, *region, (uint8_t)kind};
        N.symbol_count++;
    }
    return kind;
}
