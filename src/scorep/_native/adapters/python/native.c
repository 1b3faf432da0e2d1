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
 * What the sampler reads in /proc at a tick (the thread list, each thread's syscall file)
 * is read by a helper thread of ours with a descriptor table of its own
 * (unshare(CLONE_FILES)): a descriptor opened in the program's table would take the lowest
 * free number for a moment, so that the program's dup2() onto that number failed with
 * EBUSY and its open() got another number than the one it had just freed.
 *
 * libunwind, as Debian builds it (conservative checks), checks each address it reads by
 * writing a byte of it into a pipe of its own, opened at its first unwinding in the process.
 * That was the first handler to run, in the program's descriptor table, at whatever moment
 * the program was at: its two descriptors took the lowest free numbers there, between a
 * close() and an open() of the program's. It is opened at the start instead, above the
 * numbers a program's descriptors take (open_unwinder_pipe).
 *
 * Instruction pointers become regions at the pass, never in the handler: dladdr names the
 * symbol and the library ("dgemm_ [libblas.so.3]"), once per address (a table). */
#include "adapters/python/internal.h"
#include "adapters/python/native.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <pthread.h>
#include <semaphore.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
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
    char comm[16];                 /* its name, read when the slot was claimed */
    uint32_t count[2];
    bool complete[2];
    uintptr_t ips[2][SP_NATIVE_DEPTH];
} native_slot;

typedef struct signalled signalled;

/* What the sampler found a thread doing at a tick. */
enum { TASK_RUNNING, TASK_BLOCKED_RESTARTED, TASK_BLOCKED, TASK_GONE };

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
    _Atomic pid_t ignored_tid; /* sp_native_ignore */
    struct sigaction previous;
    native_slot *slots;
    pid_t *tasks; /* the last listing of /proc/self/task */
    uint32_t task_count;
    uint32_t ticks;
    /* The slots signalled at the last tick and what each was asked: read at the pass. */
    /* blocked_at: not signalled (blocked in a call a signal would end early); the
     * instruction it waits at, from /proc/self/task/TID/syscall, is its stack. */
    struct signalled {
        native_slot *slot;
        uint32_t asked;
        uintptr_t blocked_at;
    } signalled[NATIVE_SLOTS];
    uint32_t signalled_count;
    uint64_t signalled_at; /* CLOCK_MONOTONIC ns */
    symbol_slot *symbols;
    uint32_t symbol_count;
    /* The helper thread that reads /proc with a descriptor table of its own: it runs in
     * process helper_pid (0: none; a forked child has none), the sampler asks it for a tick
     * with `go` and waits for `done`. helper_failed: unshare() was refused (a container's
     * seccomp profile): the sampler reads /proc itself, in the program's table. */
    pthread_t helper;
    pid_t helper_pid, helper_tid;
    sem_t go, done, ready, mapped;
    /* What the helper is asked for: a tick (the sampler), or a file mapped (the pass, which
     * reads a library's .symtab: map_path in, map_at/map_size out). */
    _Atomic bool want_tick, want_map;
    const char *map_path;
    void *map_at;
    size_t map_size;
    bool sems, helper_failed;
    _Atomic bool helper_quit;
    /* The loader's lock on its list of objects (glibc's dl_load_write_lock, found at the
     * start: find_loader_lock), its futex word; NULL: not found, libunwind keeps no cache. */
    const _Atomic int *loader_lock;
    /* Counted for MANIFEST.md. */
    _Atomic uint64_t stacks, missed, blocked, interrupted, completed;
} N;

/* Whether the signal ended a system call early: the thread was about to block (or blocked)
 * in one that is not restarted (nanosleep, select, pause...) when its state was read as
 * running. The kernel has restarted every call that SA_RESTART restarts before the handler
 * runs (the instruction pointer moved back onto the syscall instruction); what is left is
 * a call that returns -EINTR right after its syscall instruction (0f 05). Only counted
 * (the call's number is gone from the registers, so it cannot be made again), and an upper
 * bound: another signal of the program's delivered at the same moment looks the same. */
static bool interrupted_a_call(void *context)
{
#if defined(__x86_64__)
    const ucontext_t *uc = context;
    uintptr_t rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    if (uc->uc_mcontext.gregs[REG_RAX] != -EINTR || (rip & 0xfff) < 2)
        return false;
    /* rip - 2 is on rip's own page: mapped, executable code. */
    const unsigned char *insn = (const unsigned char *)(rip - 2);
    return insn[0] == 0x0f && insn[1] == 0x05;
#else
    (void)context;
    return false;
#endif
}

/* A write of the program's to a pipe, socket or terminal that the signal cut short: the
 * kernel ends a blocking write that has moved some bytes when a signal is pending, and
 * returns the short count (SA_RESTART restarts only a call that moved nothing). POSIX
 * allows it, but a program that does not check the count loses the rest: CPython's
 * sys.stdout and sys.stderr do not under PYTHONUNBUFFERED=1 or -u (TextIOWrapper writes
 * straight to the FileIO and ignores what it returns), and 4 MiB written to a pipe its
 * parent read under subprocess.communicate arrived short in most runs
 * (tests/programs/native_pipe_child.py). The program asked for a blocking write and would
 * have had it whole without the measurement, so the handler writes the rest before the
 * program sees the call return, and returns the full count in its place.
 *
 * Known from the interrupted context alone: the instruction pointer right after a
 * `mov $nr, %eax; syscall` (how glibc's write and writev wrappers, and inline system calls,
 * make the call; the number is no longer in a register), rax the count returned, and the
 * arguments still in rdi, rsi, rdx (the syscall instruction keeps them). Left alone: a
 * descriptor in non-blocking mode (a short count is its normal answer), a regular file or
 * block device (a signal does not cut their writes short; a short count there is a full
 * disk or RLIMIT_FSIZE, which a second try would turn into an error or SIGXFSZ). The rest
 * is written with our signal blocked (the handler's mask), so only another signal of the
 * program's can cut it short: it stops there with what was written, which the program
 * would have seen without the measurement too. x86-64 only, as interrupted_a_call. */
static void complete_cut_write(void *context)
{
#if defined(__x86_64__)
    ucontext_t *uc = context;
    greg_t *reg = uc->uc_mcontext.gregs;
    uintptr_t rip = (uintptr_t)reg[REG_RIP];
    /* rip - 7 .. rip - 1 on rip's own page: mapped, executable code. */
    if ((rip & 0xfff) < 7 || reg[REG_RAX] <= 0)
        return;
    const unsigned char *insn = (const unsigned char *)(rip - 7);
    if (insn[0] != 0xb8 || insn[2] != 0 || insn[3] != 0 || insn[4] != 0 || insn[5] != 0x0f ||
        insn[6] != 0x05 || (insn[1] != SYS_write && insn[1] != SYS_writev))
        return;
    int fd = (int)reg[REG_RDI];
    struct stat st;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || (flags & O_NONBLOCK) || fstat(fd, &st) != 0 ||
        !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode)))
        return;
    size_t done = (size_t)reg[REG_RAX];
    size_t before = done;
    /* The parts still to write: one buffer (write), or the iovec array from where the
     * count ends (writev). */
    const struct iovec one = {(void *)reg[REG_RSI], (size_t)reg[REG_RDX]};
    const struct iovec *iov = &one;
    long parts = 1;
    if (insn[1] == SYS_writev) {
        iov = (const struct iovec *)reg[REG_RSI];
        parts = (long)(int)reg[REG_RDX];
    }
    size_t skip = done;
    for (long i = 0; i < parts; i++) {
        if (skip >= iov[i].iov_len) {
            skip -= iov[i].iov_len;
            continue;
        }
        const char *at = (const char *)iov[i].iov_base + skip;
        size_t left = iov[i].iov_len - skip;
        skip = 0;
        while (left) {
            ssize_t n = write(fd, at, left);
            if (n <= 0)
                goto stop; /* an error, or a signal of the program's: what it would see */
            at += n;
            left -= (size_t)n;
            done += (size_t)n;
        }
    }
stop:
    if (done != before) {
        reg[REG_RAX] = (greg_t)done;
        atomic_fetch_add_explicit(&N.completed, 1, memory_order_relaxed);
    }
#else
    (void)context;
#endif
}

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
        bool complete = false;
        unw_cursor_t cursor;
        /* libunwind looks an instruction up in the loaded objects with dl_iterate_phdr,
         * which takes the loader's lock, while it holds its own cache's lock. A thread
         * interrupted while it held the loader's lock (in dlopen or dlclose) waited in its
         * handler for the cache's lock, held by another thread's handler waiting for the
         * loader's: the program hung (3 threads of ctypes.CDLL and _ctypes.dlclose,
         * tests/programs/native_dlopen.py). A handler unwinds only while nobody holds the
         * loader's lock, else the sample keeps the interrupted instruction alone; a thread
         * that takes the loader's lock after this look never waits for the cache's lock
         * (only handlers take it, and it cannot be in one). */
        bool loader_busy =
            N.loader_lock && atomic_load_explicit(N.loader_lock, memory_order_acquire) != 0;
        if (loader_busy) {
#if defined(__x86_64__)
            ips[count++] = (uintptr_t)((const ucontext_t *)context)->uc_mcontext.gregs[REG_RIP];
#endif
        } else if (unw_init_local2(&cursor, (unw_context_t *)context, UNW_INIT_SIGNAL_FRAME) ==
                   0) {
            for (;;) {
                unw_word_t ip;
                if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0)
                    break;
                ips[count++] = (uintptr_t)ip;
                if (count == SP_NATIVE_DEPTH)
                    break;
                int step = unw_step(&cursor);
                if (step <= 0) {
                    complete = step == 0; /* the outermost frame, not an error */
                    break;
                }
            }
        }
        slot->count[asked & 1] = count;
        slot->complete[asked & 1] = complete;
        if (interrupted_a_call(context))
            atomic_fetch_add_explicit(&N.interrupted, 1, memory_order_relaxed);
        atomic_store_explicit(&slot->pthread, (unsigned long)pthread_self(),
                              memory_order_relaxed);
        atomic_store_explicit(&slot->done, asked, memory_order_release);
    }
    /* After the answer: writing the rest may wait for the reader, and the pass must not
     * wait for that. */
    complete_cut_write(context);
    errno = saved_errno;
}

/* The descriptors below this number are left to the program (at most; lower where the
 * limit on descriptors is). */
#define PIPE_FLOOR 1000

/* Has libunwind open its pipe (unw_init_local does, once a process, inherited by a fork)
 * while every free number below PIPE_FLOOR is held by a copy of one descriptor: the pipe
 * gets the lowest free numbers above them. F_DUPFD takes the lowest free number, so no
 * descriptor of the program's is touched, and a thread of the program's opening one
 * meanwhile gets a higher number than it would have, nothing else. Once a process: a
 * global because libunwind's own state is one. */
static void open_unwinder_pipe(void)
{
    static pid_t done_in;
    if (done_in == getpid())
        return;
    done_in = getpid();
    struct rlimit limit;
    int floor = PIPE_FLOOR;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < (rlim_t)PIPE_FLOOR + 64)
        floor = limit.rlim_cur > 128 ? (int)limit.rlim_cur - 64 : 0;
    int held[PIPE_FLOOR];
    int count = 0;
    int first = floor ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
    if (first >= 0 && first < floor) {
        held[count++] = first;
        while (count < floor) {
            int fd = fcntl(first, F_DUPFD_CLOEXEC, 0);
            if (fd < 0)
                break;
            if (fd >= floor) {
                close(fd); /* the lowest free number above the held ones: the pipe's */
                break;
            }
            held[count++] = fd;
        }
    } else if (first >= 0) {
        close(first);
    }
    unw_context_t context;
    unw_cursor_t cursor;
    if (unw_getcontext(&context) == 0)
        (void)unw_init_local(&cursor, &context);
    for (int i = 0; i < count; i++)
        close(held[i]);
}

/* glibc's dl_load_write_lock: dl_iterate_phdr holds it while it calls its callback, so the
 * one recursive mutex in the loader's global state (_rtld_global) that this thread owns
 * once (__lock, __count, __owner: x86-64's layout) during the callback is that lock.
 * Looked for, not assumed at an offset: the offset differs between glibc versions. */
typedef struct {
    const char *at;
    size_t size;
    const _Atomic int *found;
    int matches;
} loader_search;

static int find_loader_lock_callback(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info, (void)size;
    loader_search *search = data;
    int tid = (int)syscall(SYS_gettid);
    for (size_t off = 0; off + 3 * sizeof(int) <= search->size; off += 8) {
        const int *word = (const int *)(const void *)(search->at + off);
        if (word[0] != 0 && word[1] == 1 && word[2] == tid) {
            search->found = (const _Atomic int *)(const void *)word;
            search->matches++;
        }
    }
    return 1; /* the first object is enough: the lock is held for every one */
}

static void find_loader_lock(void)
{
    N.loader_lock = NULL;
    loader_search search = {0};
    Dl_info where;
    const ElfW(Sym) *symbol = NULL;
    void *global = dlsym(RTLD_DEFAULT, "_rtld_global");
    if (!global || !dladdr1(global, &where, (void **)&symbol, RTLD_DL_SYMENT) || !symbol)
        return;
    search.at = global;
    search.size = symbol->st_size;
    dl_iterate_phdr(find_loader_lock_callback, &search);
    if (search.matches == 1)
        N.loader_lock = search.found;
}

int sp_native_start(void)
{
    open_unwinder_pipe();
    /* Without the loader's lock to look at, libunwind keeps no cache, so holds no lock of
     * its own while it calls dl_iterate_phdr (slower: every step parses the unwind
     * tables). */
    find_loader_lock();
    unw_set_caching_policy(unw_local_addr_space,
                           N.loader_lock ? UNW_CACHE_GLOBAL : UNW_CACHE_NONE);
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
    atomic_store(&N.blocked, 0);
    atomic_store(&N.interrupted, 0);
    atomic_store(&N.completed, 0);
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
    if (N.helper_pid && N.helper_pid == getpid() && !N.helper_failed) {
        /* The sampler thread has ended: nobody asks the helper for a tick meanwhile. */
        atomic_store(&N.helper_quit, true);
        sem_post(&N.go);
        pthread_join(N.helper, NULL);
    }
    N.helper_pid = N.helper_tid = 0;
    N.helper_failed = false;
    if (N.slots)
        for (uint32_t i = 0; i < NATIVE_SLOTS; i++)
            atomic_store(&N.slots[i].tid, 0);
}

bool sp_native_enabled(void)
{
    return N.enabled;
}

void sp_python_native_counts(uint64_t counts[5])
{
    counts[0] = atomic_load(&N.stacks);
    counts[1] = atomic_load(&N.missed);
    counts[2] = atomic_load(&N.blocked);
    counts[3] = atomic_load(&N.interrupted);
    counts[4] = atomic_load(&N.completed);
}

void sp_native_ignore(pid_t tid)
{
    atomic_store(&N.ignored_tid, tid);
}

void sp_native_forget_in_child(void)
{
    atomic_store(&N.ignored_tid, 0);
    N.pid = getpid();
    /* Only the forking thread was copied: no sampler, no helper; the semaphores may have
     * been in any state (a tick under way). */
    N.sampler_tid = 0;
    N.helper_pid = N.helper_tid = 0;
    N.helper_failed = false;
    if (N.sems) {
        sem_init(&N.go, 0, 0);
        sem_init(&N.done, 0, 0);
        sem_init(&N.ready, 0, 0);
        sem_init(&N.mapped, 0, 0);
    }
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
        if (tid > 0 && tid != N.sampler_tid && tid != N.helper_tid &&
            tid != atomic_load(&N.ignored_tid))
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

static ssize_t read_task_file(pid_t tid, const char *file, char *buf, size_t size);

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
        char comm[sizeof free_slot->comm + 1];
        ssize_t n = read_task_file(tid, "comm", comm, sizeof comm);
        comm[n > 0 ? (size_t)n : 0] = '\0';
        comm[strcspn(comm, "\n")] = '\0';
        memcpy(free_slot->comm, comm, sizeof free_slot->comm);
        free_slot->comm[sizeof free_slot->comm - 1] = '\0';
        atomic_store(&free_slot->pthread, 0);
        atomic_store(&free_slot->done, atomic_load(&free_slot->asked));
        atomic_store_explicit(&free_slot->tid, tid, memory_order_release);
    }
    return free_slot;
}

/* Reads a small /proc file of a thread into buf (NUL-terminated): its length, or -1.
 * The descriptor shares the program's table for a few microseconds, with the lowest free
 * number: a program that dup2()s onto a number it freed (CPython's test_subprocess
 * restoring its standard descriptors) may replace it meanwhile. So it is read with pread
 * (a pipe, terminal or socket put there fails with ESPIPE, nothing of its data is taken)
 * and closed only if it is still the file opened (else dup2 closed ours already). */
static ssize_t read_task_file(pid_t tid, const char *file, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/%s", (int)tid, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat opened, now;
    if (fstat(fd, &opened) != 0)
        return -1; /* not ours any more: leave it */
    ssize_t n = pread(fd, buf, size - 1, 0);
    if (fstat(fd, &now) != 0 || now.st_dev != opened.st_dev || now.st_ino != opened.st_ino)
        return -1;
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return n;
}

/* Whether the thread may be signalled without the program seeing it. A signal with a
 * handler ends a blocking system call early (EINTR, or a short count) unless the kernel
 * restarts it, and SA_RESTART does not restart pause, sigsuspend, select, poll, epoll_wait,
 * nanosleep, clock_nanosleep, timed waits and socket calls with timeouts (signal(7)): C code
 * that does not retry, and Python's signal.pause(), would return early. So a thread is
 * signalled only while it runs ("running" in /proc/self/task/TID/syscall, or 'R' in its
 * stat where that file cannot be read), or while it waits in a
 * call that the kernel restarts under SA_RESTART whatever its arguments: a futex wait
 * without a timeout (pthread_mutex_lock, pthread_cond_wait, sem_wait, pthread_join),
 * wait4 and waitid. Any other blocked thread is left alone; *at is the instruction it
 * waits at (the call's return address), from /proc/self/task/TID/syscall. */
static int task_state(pid_t tid, uintptr_t *at)
{
    char buf[512];
    /* One read where the kernel allows it (its own threads, always, where it keeps the
     * file): "running", or "nr arg1 ... arg6 sp pc" (hexadecimal arguments), or "-1 sp pc"
     * when blocked outside a system call (a page fault). Each file read is a descriptor
     * the program could see for a moment in /proc/self/fd: one a thread a tick. */
    if (read_task_file(tid, "syscall", buf, sizeof buf) < 0) {
        /* "tid (comm) S ...": comm may hold spaces and parentheses; the last ')' ends it. */
        if (read_task_file(tid, "stat", buf, sizeof buf) < 0)
            return TASK_GONE;
        const char *close_paren = strrchr(buf, ')');
        if (!close_paren || close_paren[1] != ' ')
            return TASK_GONE;
        char state = close_paren[2];
        if (state == 'Z' || state == 'X')
            return TASK_GONE;
        return state == 'R' ? TASK_RUNNING : TASK_BLOCKED; /* blocked: where, not known */
    }
    if (strncmp(buf, "running", 7) == 0)
        return TASK_RUNNING;
    char *p = buf, *end;
    long nr = strtol(p, &end, 10);
    if (end == p)
        return TASK_BLOCKED;
    unsigned long long field[8];
    int fields = 0;
    p = end;
    while (fields < 8) {
        field[fields] = strtoull(p, &end, 16);
        if (end == p)
            break;
        fields++;
        p = end;
    }
    if (nr == -1)
        return TASK_RUNNING; /* not in a system call: a signal ends nothing */
    if (fields < 8)
        return TASK_BLOCKED;
    *at = (uintptr_t)field[7];
    switch (nr) {
#ifdef SYS_futex
    case SYS_futex: {
        /* FUTEX_WAIT (0) and FUTEX_WAIT_BITSET (9) without a timeout return -ERESTARTSYS;
         * with one they return -ERESTART_RESTARTBLOCK, which a handler turns into EINTR. */
        int op = (int)field[1] & 127;
        if ((op == 0 || op == 9) && field[3] == 0)
            return TASK_BLOCKED_RESTARTED;
        return TASK_BLOCKED;
    }
#endif
#ifdef SYS_wait4
    case SYS_wait4:
#endif
#ifdef SYS_waitid
    case SYS_waitid:
#endif
        return TASK_BLOCKED_RESTARTED;
    default:
        return TASK_BLOCKED;
    }
}

/* One tick's reads and signals: the helper thread's (or the sampler's, without one). */
static void tick(void)
{
    if (N.ticks++ % RESCAN_TICKS == 0)
        list_tasks();
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    N.signalled_at = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
    for (uint32_t i = 0; i < N.task_count; i++) {
        native_slot *slot = slot_of(N.tasks[i]);
        if (!slot)
            continue;
        uintptr_t at = 0;
        int state = task_state(N.tasks[i], &at);
        if (state == TASK_GONE)
            continue;
        if (state == TASK_BLOCKED) {
            /* Its stack is the call it waits in; the slot's buffers stay the handler's.
             * Where that is not known (its syscall file unreadable), no stack this tick. */
            if (!at)
                continue;
            N.signalled[N.signalled_count++] =
                (signalled){slot, atomic_load_explicit(&slot->asked, memory_order_relaxed),
                            at};
            continue;
        }
        uint32_t asked = atomic_fetch_add_explicit(&slot->asked, 1, memory_order_release) + 1;
        if (syscall(SYS_tgkill, N.pid, N.tasks[i], N.signo) != 0) {
            atomic_store(&slot->tid, 0); /* it ended */
            continue;
        }
        N.signalled[N.signalled_count++] = (signalled){slot, asked, 0};
    }
}

/* A file mapped read-only (the mapping is the process's; the descriptor only the caller's
 * table saw, for a moment). */
static void map_file(const char *path, void **at, size_t *size)
{
    *at = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            *at = m;
            *size = (size_t)st.st_size;
        }
    }
    close(fd);
}

static void sem_wait_fully(sem_t *s)
{
    while (sem_wait(s) != 0 && errno == EINTR)
        ;
}

/* The helper: a descriptor table of its own, emptied of the program's descriptors (the
 * copy unshare() makes would keep a pipe the program closes open, its reader waiting for
 * an end of file; POSIX record locks are the table's owner's, so closing the copies
 * releases none of the program's). Every signal blocked: a handler of the program's run
 * here would see our table. */
static void *helper_main(void *arg)
{
    (void)arg;
    bool own_table = unshare(CLONE_FILES) == 0;
    if (own_table) {
#ifdef SYS_close_range
        if (syscall(SYS_close_range, 0u, ~0u, 0u) != 0)
#endif
            for (int fd = 0; fd < 65536; fd++)
                close(fd);
    }
    N.helper_tid = (pid_t)syscall(SYS_gettid);
    N.helper_failed = !own_table;
    sem_post(&N.ready);
    if (!own_table)
        return NULL;
    for (;;) {
        sem_wait_fully(&N.go);
        if (atomic_load(&N.helper_quit))
            break;
        if (atomic_exchange(&N.want_map, false)) {
            map_file(N.map_path, &N.map_at, &N.map_size);
            sem_post(&N.mapped);
        }
        if (atomic_exchange(&N.want_tick, false)) {
            tick();
            sem_post(&N.done);
        }
    }
    return NULL;
}

/* The sampler thread: the helper of this process, started if there is none. */
static bool helper_running(void)
{
    if (N.helper_pid == N.pid)
        return !N.helper_failed;
    if (N.helper_failed)
        return false;
    if (!N.sems) {
        if (sem_init(&N.go, 0, 0) != 0 || sem_init(&N.done, 0, 0) != 0 ||
            sem_init(&N.ready, 0, 0) != 0 || sem_init(&N.mapped, 0, 0) != 0)
            return false;
        N.sems = true;
    }
    atomic_store(&N.helper_quit, false);
    N.helper_tid = 0;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int r = pthread_create(&N.helper, NULL, helper_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r != 0) {
        N.helper_failed = true;
        return false;
    }
    sem_wait_fully(&N.ready);
    N.helper_pid = N.pid;
    if (N.helper_failed) {
        pthread_join(N.helper, NULL);
        N.helper_tid = 0;
        return false;
    }
    return true;
}

void sp_native_signal(void)
{
    N.signalled_count = 0;
    if (!N.enabled)
        return;
    if (!N.sampler_tid)
        N.sampler_tid = (pid_t)syscall(SYS_gettid);
    if (helper_running()) {
        atomic_store(&N.want_tick, true);
        sem_post(&N.go);
        sem_wait_fully(&N.done);
    } else {
        tick();
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
        if (!N.signalled[i].blocked_at && atomic_load_explicit(&N.signalled[i].slot->done, memory_order_acquire) !=
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
        if (N.signalled[i].blocked_at) {
            /* Not signalled: one frame, the function it waits in (a return address: the
             * call is at the address before it). Its pthread_t is known once its handler
             * has run once (0 before: the pass matches it by thread id where it can). */
            unsigned long pthread = atomic_load(&slot->pthread);
            sp_native_stack *s = &out[n++];
            s->tid = atomic_load(&slot->tid);
            s->pthread = pthread;
            memcpy(s->comm, slot->comm, sizeof s->comm);
            s->fresh = true;
            s->complete = false;
            s->blocked = true;
            s->count = 1;
            s->ips[0] = N.signalled[i].blocked_at - 1;
            atomic_fetch_add(&N.blocked, 1);
            continue;
        }
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
        memcpy(s->comm, slot->comm, sizeof s->comm);
        s->fresh = fresh;
        s->complete = slot->complete[done & 1];
        s->blocked = false;
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

/* Names of code that has none in the dynamic symbol table (static functions): the
 * library's ELF .symtab, read once per library at the pass, where the library has one
 * (stripped ones, as Debian ships them, have not). Global like N. */
typedef struct {
    uintptr_t start, end; /* addresses in the process */
    uint32_t name;        /* offset in the module's strings */
} elf_symbol;

typedef struct {
    const void *base; /* dladdr's dli_fbase; NULL: a free entry */
    elf_symbol *symbols;
    uint32_t count;
    char *strings;
} elf_module;

#define ELF_MODULES 256
static elf_module elf_modules[ELF_MODULES];

static int symbol_order(const void *a, const void *b)
{
    const elf_symbol *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The .symtab's functions of the mapped ELF file, moved by `bias`. */
static void read_symtab(elf_module *m, const unsigned char *file, size_t size, uintptr_t bias)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)file;
    if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        eh->e_shoff > size || (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
        return;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(file + eh->e_shoff);
    for (uint32_t i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum ||
            sh[i].sh_entsize != sizeof(Elf64_Sym))
            continue;
        const Elf64_Shdr *str = &sh[sh[i].sh_link];
        if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset ||
            str->sh_offset > size || str->sh_size > size - str->sh_offset || !str->sh_size)
            return;
        const Elf64_Sym *sym = (const Elf64_Sym *)(file + sh[i].sh_offset);
        size_t n = sh[i].sh_size / sizeof *sym, kept = 0;
        m->symbols = malloc((n ? n : 1) * sizeof *m->symbols);
        m->strings = malloc(str->sh_size);
        if (!m->symbols || !m->strings) {
            free(m->symbols);
            free(m->strings);
            m->symbols = NULL;
            m->strings = NULL;
            return;
        }
        memcpy(m->strings, file + str->sh_offset, str->sh_size);
        m->strings[str->sh_size - 1] = '\0';
        for (size_t k = 0; k < n; k++)
            if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && sym[k].st_value &&
                sym[k].st_shndx != SHN_UNDEF && sym[k].st_name < str->sh_size)
                m->symbols[kept++] = (elf_symbol){bias + sym[k].st_value,
                                                  bias + sym[k].st_value + sym[k].st_size,
                                                  sym[k].st_name};
        qsort(m->symbols, kept, sizeof *m->symbols, symbol_order);
        m->count = (uint32_t)kept;
        return;
    }
}

static const elf_module *elf_module_of(const char *path, const void *base, uintptr_t bias)
{
    uint32_t i = (uint32_t)(((uintptr_t)base >> 12) * 2654435761u) % ELF_MODULES;
    for (uint32_t probes = 0; probes < ELF_MODULES; probes++, i = (i + 1) % ELF_MODULES) {
        if (elf_modules[i].base == base)
            return &elf_modules[i];
        if (!elf_modules[i].base)
            break;
    }
    if (elf_modules[i].base)
        return NULL; /* full */
    elf_module *m = &elf_modules[i];
    *m = (elf_module){base, NULL, 0, NULL};
    void *at = NULL;
    size_t size = 0;
    /* Opened by the helper, in its own table, where there is one. */
    if (N.helper_pid == getpid() && !N.helper_failed && !atomic_load(&N.helper_quit)) {
        N.map_path = path;
        atomic_store(&N.want_map, true);
        sem_post(&N.go);
        sem_wait_fully(&N.mapped);
        at = N.map_at;
        size = N.map_size;
    } else {
        map_file(path, &at, &size);
    }
    if (at) {
        read_symtab(m, at, size, bias);
        munmap(at, size);
    }
    return m;
}

/* The .symtab name of the function at `at`, or NULL. */
static const char *static_symbol(uintptr_t at, const Dl_info *info, uintptr_t bias)
{
    const elf_module *m = elf_module_of(info->dli_fname, info->dli_fbase, bias);
    if (!m || !m->count)
        return NULL;
    uint32_t lo = 0, hi = m->count;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->symbols[mid].start <= at)
            lo = mid;
        else
            hi = mid;
    }
    const elf_symbol *s = &m->symbols[lo];
    if (s->start > at || (s->end > s->start && at >= s->end))
        return NULL;
    return m->strings + s->name;
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
    struct link_map *map = NULL;
    int kind = SP_NATIVE_FRAME;
    *region = SP_NO_ID;
    if (dladdr1((void *)at, &info, (void **)&map, RTLD_DL_LINKMAP) && info.dli_fname) {
        const char *lib = strrchr(info.dli_fname, '/');
        lib = lib ? lib + 1 : info.dli_fname;
        const char *sym = info.dli_sname;
        if (!sym && map && *info.dli_fname)
            sym = static_symbol(at, &info, (uintptr_t)map->l_addr);
        /* One evaluation call is one frame of _PyEval_EvalFrameDefault (or of its cold
         * part, named from .symtab): the wrappers (PyEval_EvalFrameEx) are the
         * interpreter's machinery, so that the calls counted match the frame groups. */
        if (sym && strncmp(sym, "_PyEval_EvalFrameDefault", 24) == 0)
            kind = SP_NATIVE_EVAL;
        else if (is_interpreter(info.dli_fname) || !*info.dli_fname)
            kind = SP_NATIVE_INTERPRETER;
        if (kind == SP_NATIVE_FRAME) {
            char name[512];
            /* Code without a name in .dynsym nor .symtab (a stripped library's static
             * functions): one region per library, not per address. */
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
