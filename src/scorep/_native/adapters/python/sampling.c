/* Sampling (SCOREP_ENABLE_UNWINDING, --sampling): instead of an event per Python call, a
 * sampler thread asks HZ times a second for the Python call stacks of every thread, and
 * the stacks are read at a safe point, while the GIL is held: no thread's frames change
 * while they are read.
 *
 * The request is a pending call, which the interpreter runs between two bytecodes of
 * whichever thread holds the GIL (3.12+), or of the main thread (before 3.12; it is told
 * to look at once through the interpreter's eval breaker, as a signal would). When no
 * thread runs bytecode that could serve it (all wait for I/O or a lock, a C extension
 * computes without releasing the GIL, or before 3.12 the main thread waits while others
 * run), the sampler takes the GIL itself and reads the stacks then. Each sample stands for
 * the time since the thread's previous one (wall-clock time, or the thread's CPU time in
 * CPU mode), so a late sample loses no time.
 *
 * The same frame walk gives the calling context of every event (a user region, an MPI or
 * I/O call): the core's unwinder, run on the thread itself. Frames that ran before the
 * measurement started (the tool's runner, a Jupyter kernel's machinery) are left out, as
 * instrumentation leaves them out. */
#include "adapters/python/internal.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if PY_VERSION_HEX < 0x030C0000
/* Before 3.12 the sampler pokes the interpreter's eval breaker and GIL drop request, whose
 * fields are only in the internal headers. */
#define Py_BUILD_CORE
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#undef Py_BUILD_CORE
#else
/* 3.12+: a pending call that any thread holding the GIL runs (Py_AddPendingCall's are run
 * by the main thread only). Internal, but exported; the return type is an int in both
 * 3.12 and 3.13, and the last argument a flag (0: any thread). */
PyAPI_FUNC(int) _PyEval_AddPendingCall(PyInterpreterState *interp, int (*func)(void *),
                                       void *arg, int flags);
#endif

#if PY_VERSION_HEX >= 0x030C0000
/* The frame layout (3.11's comes with internal.h). */
#define Py_BUILD_CORE
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE
#endif

#if PY_VERSION_HEX < 0x030A0000
#include <opcode.h> /* YIELD_VALUE, for frame_not_started */
#endif

/* One frame of a thread's stack as the walk finds it, innermost first. */
typedef struct {
    const void *frame;      /* its identity: the frame's address */
    PyCodeObject *code;
    PyObject *globals;      /* 3.11+: to name a code object seen for the first time */
    PyFrameObject *object;  /* before 3.11: the same */
} raw_frame;

typedef struct {
    raw_frame *frames;
    uint32_t count, capacity;
} raw_stack;

/* The frames of a thread that ran before the measurement started, outermost first. */
typedef struct {
    uint64_t thread; /* the thread state's id */
    uint32_t count;
    struct {
        const void *frame;
        PyCodeObject *code; /* compared, never dereferenced */
    } *frames;
} old_frames;

/* What the sampler knows of a thread between samples. */
typedef struct {
    uint64_t thread; /* the thread state's id; 0: a free entry */
    uint32_t pass;   /* the last pass that saw it */
    uint32_t generation;
    sp_location *loc;
    bool has_cpu_clock;
    clockid_t cpu_clock;
    uint64_t weight;      /* ticks of the passes since its last sample: its next sample's */
    uint64_t last_cpu_ns; /* its CPU time at its last sample (CPU mode) */
    uint32_t resumed;     /* the sampler's resume count when the weight began */
} thread_entry;

/* The sampler of the running measurement. Global because the interpreter's pending calls,
 * the core's unwinder and the fork handler carry no context of ours, and there is one
 * measurement per process. */
static struct {
    bool configured;      /* this measurement samples (a period was given) */
    bool unwinding;       /* this measurement records calling contexts */
    uint64_t period_ns;
    bool cpu;
    PyInterpreterState *interp;
    /* The sampler thread. */
    pthread_t thread;
    bool thread_running;
    _Atomic bool stop;
    _Atomic bool active;  /* instrumentation is on: samples are taken */
    _Atomic int due;      /* a pass was asked for and has not run yet */
    _Atomic int queued;   /* a pending call is queued */
    _Atomic uint64_t asked_at; /* when the pass that is due was asked for (ticks) */
    uint32_t resumes;     /* times sampling was switched on (weights restart then) */
    uint64_t last_pass;   /* when the last pass ran (ticks) */
    /* The sampling pass (under the GIL). */
    uint32_t pass;
    thread_entry *threads;
    uint32_t thread_count, thread_capacity;
    raw_stack raw;
    sp_context_stack frames;
    PyThreadState *sampler_tstate; /* the sampler thread's own (no Python frames) */
    uint64_t start_ticks, start_ns; /* for CPU nanoseconds -> ticks */
    /* Old frames of the threads that ran when the measurement started: read by the
     * unwinder on any thread, so written only before the unwinder is set and kept until
     * the next measurement starts. */
    old_frames *old;
    uint32_t old_count;
    /* Threads of the unwinder that take the GIL to name a code object, and whether they
     * still may (the end of the measurement waits for them, holding the GIL otherwise). */
    _Atomic int unwinders_acquiring;
    _Atomic bool unwinders_may_acquire;
#if PY_VERSION_HEX < 0x030C0000
    PyThreadState *main_tstate; /* the main thread's: the pending call runs there */
#endif
} S;

/* The unwinder's frames of the calling thread (it runs on any thread, the GIL held or
 * not). Thread-local because each thread reads its own stack. */
static SP_TLS raw_stack own_raw;

/* ---- reading a thread's frames --------------------------------------------------------- */

static bool raw_reserve(raw_stack *s, uint32_t count)
{
    if (count <= s->capacity)
        return true;
    uint32_t capacity = s->capacity ? s->capacity : 64;
    while (capacity < count)
        capacity *= 2;
    raw_frame *frames = realloc(s->frames, capacity * sizeof *frames);
    if (!frames)
        return false;
    s->frames = frames;
    s->capacity = capacity;
    return true;
}

static inline void raw_push(raw_stack *s, const void *frame, PyCodeObject *code,
                            PyObject *globals, PyFrameObject *object)
{
    if (s->count < s->capacity)
        s->frames[s->count] = (raw_frame){frame, code, globals, object};
    s->count++;
}

/* The thread's frames, innermost first, into `s` (grown as needed). The thread either is
 * the caller or cannot run (the caller holds the GIL): its frames do not change meanwhile. */
static void walk_frames(PyThreadState *ts, raw_stack *s)
{
    for (;;) {
        s->count = 0;
#if PY_VERSION_HEX >= 0x030D0000
        for (_PyInterpreterFrame *f = ts->current_frame; f; f = f->previous) {
            /* Skipped: the C stack's shim frames, frames about to start (their code has not
             * begun), and frames of what is no code object. */
            if (f->owner == FRAME_OWNED_BY_CSTACK || !f->f_executable ||
                !PyCode_Check(f->f_executable) || _PyFrame_IsIncomplete(f))
                continue;
            raw_push(s, f, (PyCodeObject *)f->f_executable, f->f_globals, NULL);
        }
#elif PY_VERSION_HEX >= 0x030C0000
        for (_PyInterpreterFrame *f = ts->cframe ? ts->cframe->current_frame : NULL; f;
             f = f->previous) {
            if (f->owner == FRAME_OWNED_BY_CSTACK || _PyFrame_IsIncomplete(f))
                continue;
            raw_push(s, f, f->f_code, f->f_globals, NULL);
        }
#elif PY_VERSION_HEX >= 0x030B0000
        for (_PyInterpreterFrame *f = ts->cframe ? ts->cframe->current_frame : NULL; f;
             f = f->previous) {
            if (_PyFrame_IsIncomplete(f))
                continue;
            raw_push(s, f, f->f_code, f->f_globals, NULL);
        }
#else
        for (PyFrameObject *f = ts->frame; f; f = f->f_back)
            raw_push(s, f, f->f_code, f->f_globals, f);
#endif
        if (s->count <= s->capacity || !raw_reserve(s, s->count)) {
            if (s->count > s->capacity)
                s->count = s->capacity;
            return;
        }
    }
}

#if PY_VERSION_HEX < 0x030A0000
/* Whether a frame of a sampled thread has run nothing of its own code since it was called
 * or resumed (before its first instruction, f_lasti -1, or resumed and still at its
 * YIELD_VALUE): the time since the previous safe point was its caller's (or the resumer's),
 * which the sample is then given to.
 *
 * Only on 3.9, which looks at its eval breaker after nearly every instruction, so that the
 * frame running when the period elapsed is still on the stack. From 3.10 on the safe points
 * are a frame's start, backward jumps and the ends of calls (3.11+: of C functions): code
 * with neither a loop nor a call has none of its own, and moving a sample from a callee at
 * its start to the caller gives the caller also the time of a leaf that returned just
 * before. Measured on the four object-oriented benchmark programs
 * (benchmarks/sampling_accuracy.py --scale 4), that made the largest top-10 difference
 * worse on 3.10-3.13 (3.12 oo_scheduler: 7.7 to 36 points) and better only on 3.9 (at most
 * 5.6-10.2 points before, 3.0-5.0 after). */
static bool frame_not_started(const raw_frame *f)
{
    int lasti = f->object->f_lasti;
    if (lasti < 0)
        return true;
    Py_ssize_t offset = lasti; /* 3.9 counts bytes */
    PyObject *bytes = f->code->co_code;
    return offset < PyBytes_GET_SIZE(bytes) &&
           (unsigned char)PyBytes_AS_STRING(bytes)[offset] == YIELD_VALUE;
}
#endif

static const old_frames *old_frames_of(uint64_t thread)
{
    for (uint32_t i = 0; i < S.old_count; i++)
        if (S.old[i].thread == thread)
            return &S.old[i];
    return NULL;
}

/* How many of the outermost frames (raw is innermost first) ran before the measurement. */
static uint32_t old_frame_count(const raw_stack *raw, uint64_t thread)
{
    const old_frames *old = old_frames_of(thread);
    if (!old)
        return 0;
    uint32_t n = 0;
    while (n < old->count && n < raw->count) {
        const raw_frame *f = &raw->frames[raw->count - 1 - n];
        if (f->frame != old->frames[n].frame || f->code != old->frames[n].code)
            break;
        n++;
    }
    return n;
}

/* A frame's region: from the code object's cache, or (`may_define`, the GIL held) defined
 * now. CODE_FILTERED: not part of calling contexts; CODE_UNKNOWN: not known yet. */
static int frame_region(const raw_frame *f, bool may_define, uint32_t *region)
{
    int known = cached_region(f->code, region);
    if (known == CODE_UNKNOWN && may_define)
        known = lookup_code_region(f->code, f->object, f->globals, NULL, NULL, region);
    return known;
}

/* The frames of `raw` that ran since the measurement started, outermost first, without
 * filtered ones and without the `inner` innermost ones, into `out` (at most `capacity`,
 * returning how many there are). With `may_define` false (no GIL) a frame whose code is not
 * named yet ends the walk: its callers are the known part of the context. */
static uint32_t context_frames(const raw_stack *raw, uint32_t old, uint32_t inner,
                               bool may_define, sp_context_frame *out, uint32_t capacity,
                               bool *unknown)
{
    uint32_t n = 0;
    *unknown = false;
    for (uint32_t i = raw->count - old; i-- > inner;) {
        const raw_frame *f = &raw->frames[i];
        uint32_t region;
        int known = frame_region(f, may_define, &region);
        if (known == CODE_UNKNOWN) {
            *unknown = true;
            break;
        }
        if (known == CODE_FILTERED)
            continue;
        if (n < capacity)
            out[n] = (sp_context_frame){region, (uintptr_t)f->frame};
        n++;
    }
    return n;
}

/* ---- the unwinder: the calling thread's own context ------------------------------------ */

static bool interpreter_finalizing(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing();
#else
    return _Py_IsFinalizing();
#endif
}

static uint32_t unwind_own(sp_location *loc, sp_context_frame *frames, uint32_t capacity)
{
    (void)loc;
    PyThreadState *ts = PyGILState_GetThisThreadState();
    if (!ts)
        return 0; /* a thread that never ran Python (a C library's) */
    walk_frames(ts, &own_raw);
    uint32_t old = old_frame_count(&own_raw, ts->id);
    bool unknown;
    if (PyGILState_Check())
        return context_frames(&own_raw, old, 0, true, frames, capacity, &unknown);
    uint32_t n = context_frames(&own_raw, old, 0, false, frames, capacity, &unknown);
    if (!unknown)
        return n;
    /* A code object seen for the first time: naming it takes the GIL. The end of the
     * measurement, which holds the GIL while it waits for threads in events, first lets
     * every thread that announced itself here take it, and no more. */
    atomic_fetch_add(&S.unwinders_acquiring, 1);
    if (atomic_load(&S.unwinders_may_acquire) && !interpreter_finalizing()) {
        PyGILState_STATE gil = PyGILState_Ensure();
        if (atomic_load(&S.unwinders_may_acquire))
            n = context_frames(&own_raw, old, 0, true, frames, capacity, &unknown);
        PyGILState_Release(gil);
    }
    atomic_fetch_sub(&S.unwinders_acquiring, 1);
    return n;
}

/* ---- the sampling pass (the GIL held) -------------------------------------------------- */

static thread_entry *entry_of(PyThreadState *ts)
{
    for (uint32_t i = 0; i < S.thread_count; i++)
        if (S.threads[i].thread == ts->id)
            return &S.threads[i];
    if (S.thread_count == S.thread_capacity) {
        uint32_t capacity = S.thread_capacity ? S.thread_capacity * 2 : 16;
        thread_entry *threads = realloc(S.threads, capacity * sizeof *threads);
        if (!threads)
            return NULL;
        S.threads = threads;
        S.thread_capacity = capacity;
    }
    thread_entry *e = &S.threads[S.thread_count++];
    memset(e, 0, sizeof *e);
    e->thread = ts->id;
    e->resumed = S.resumes;
    /* The thread runs (its state is listed while the GIL is held): its CPU clock can be
     * looked up now; reading it after the thread ended just fails. */
    e->has_cpu_clock = pthread_getcpuclockid((pthread_t)ts->thread_id, &e->cpu_clock) == 0;
    struct timespec t;
    if (e->has_cpu_clock && clock_gettime(e->cpu_clock, &t) == 0)
        e->last_cpu_ns = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
    return e;
}

/* Entries of threads that no pass sees any more go. */
static void forget_ended_threads(void)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < S.thread_count; i++)
        if (S.threads[i].pass == S.pass)
            S.threads[kept++] = S.threads[i];
    S.thread_count = kept;
}

static sp_location *location_of(PyThreadState *ts, thread_entry *e)
{
    uint32_t generation = sp_measurement_generation();
    if (e->loc && e->generation == generation)
        return e->loc;
    PyObject *name = sp_python_thread_name(ts->thread_id);
    const char *text = name ? PyUnicode_AsUTF8(name) : NULL;
    char fallback[64];
    if (!text) {
        PyErr_Clear();
        snprintf(fallback, sizeof fallback, "Thread %lu", ts->thread_id);
        text = fallback;
    }
    e->loc = sp_location_of_key(sp_python_key_of(ts), ts->thread_id, text);
    e->generation = generation;
    Py_XDECREF(name);
    return e->loc;
}

/* A thread's sample stands for the passes since its previous one (`pass_weight` is this
 * pass's share), or in CPU mode for the CPU time it used meanwhile, at most as much. */
static void sample_thread(PyThreadState *ts, uint64_t now, uint64_t pass_weight)
{
    thread_entry *e = entry_of(ts);
    if (!e)
        return;
    e->pass = S.pass;
    if (e->resumed != S.resumes) {
        /* Sampling was off meanwhile: that time is nobody's. */
        e->resumed = S.resumes;
        e->weight = 0;
        struct timespec t;
        if (e->has_cpu_clock && clock_gettime(e->cpu_clock, &t) == 0)
            e->last_cpu_ns = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
    }
    e->weight += pass_weight;
    uint64_t weight = e->weight;
    uint64_t cpu_ns = 0;
    if (S.cpu) {
        struct timespec t;
        if (!e->has_cpu_clock || clock_gettime(e->cpu_clock, &t) != 0)
            return;
        cpu_ns = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
        uint64_t used = cpu_ns > e->last_cpu_ns ? cpu_ns - e->last_cpu_ns : 0;
        if (used < S.period_ns / 2)
            return; /* the thread hardly ran since its last sample: later */
        uint64_t used_ticks = (uint64_t)((double)used * sp_python_ticks_per_ns());
        weight = used_ticks < weight ? used_ticks : weight;
    }
    walk_frames(ts, &S.raw);
    uint32_t old = old_frame_count(&S.raw, ts->id);
    if (S.raw.count == old && !(e->loc && e->generation == sp_measurement_generation()))
        return; /* only frames from before the measurement: not a thread of the program */
#if PY_VERSION_HEX < 0x030A0000
    /* A frame that has not started yet is not where the time went (frame_not_started). */
    uint32_t inner = S.raw.count > old && frame_not_started(&S.raw.frames[0]) ? 1 : 0;
#else
    uint32_t inner = 0;
#endif
    bool unknown;
    uint32_t count = context_frames(&S.raw, old, inner, true, S.frames.frames,
                                    S.frames.capacity, &unknown);
    if (count > S.frames.capacity) {
        sp_context_frame *frames = realloc(S.frames.frames, count * sizeof *frames);
        if (!frames)
            return;
        S.frames.frames = frames;
        S.frames.capacity = count;
        count = context_frames(&S.raw, old, inner, true, S.frames.frames, S.frames.capacity,
                               &unknown);
    }
    sp_location *loc = location_of(ts, e);
    if (!loc || !sp_sample_begin(loc))
        return; /* the thread is inside an event: its time goes to its next sample */
    sp_sample(loc, now, S.frames.frames, count, weight);
    sp_sample_end(loc);
    e->weight = 0;
    e->last_cpu_ns = cpu_ns;
}

/* What this pass stands for: the time since the last one, except what the sampler thread
 * missed by not running for long (a machine busier than its cores): at most PASS_SPAN
 * periods beyond the time the pass waited for a safe point (during which no thread's stack
 * changed, as no bytecode ran). A sample standing for a long gap would be no better a guess
 * of where that time went than a sample of its own, and would make the estimate noisy. */
#define PASS_SPAN 8

static uint64_t pass_weight(uint64_t now)
{
    double ticks_per_ns = sp_python_ticks_per_ns();
    uint64_t period = (uint64_t)((double)S.period_ns * ticks_per_ns);
    uint64_t since = S.last_pass && now > S.last_pass ? now - S.last_pass : period;
    uint64_t asked = atomic_load(&S.asked_at);
    uint64_t waited = asked && now > asked ? now - asked : 0;
    uint64_t cap = PASS_SPAN * period + waited;
    S.last_pass = now;
    return since < cap ? since : cap;
}

/* One pass over every thread, if one is due. */
static void take_samples(void)
{
    if (!atomic_exchange(&S.due, 0))
        return;
    if (!atomic_load(&S.active) || !sp_measurement_running())
        return;
    /* Nothing this thread does meanwhile is recorded (naming a code object). */
    sp_thread.busy++;
    saved_exception saved = exception_save();
    uint64_t now = sp_clock_now();
    uint64_t weight = pass_weight(now);
    S.pass++;
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(S.interp); ts;
         ts = PyThreadState_Next(ts))
        if (ts != S.sampler_tstate)
            sample_thread(ts, now, weight);
    forget_ended_threads();
    exception_restore(saved);
    sp_thread.busy--;
}

/* The pending call: runs between two bytecodes with the GIL held. */
static int pending_samples(void *arg)
{
    (void)arg;
    atomic_store(&S.queued, 0);
    if (sp_thread.busy)
        return 0; /* inside an event of this thread (naming code runs Python): later */
    take_samples();
    return 0;
}

/* ---- the sampler thread ---------------------------------------------------------------- */

#if PY_VERSION_HEX < 0x030C0000
static PyThreadState *gil_holder(void)
{
    return (PyThreadState *)_Py_atomic_load_relaxed(&_PyRuntime.gilstate.tstate_current);
}
#endif

/* Asks for a pass at the next safe point; false when only taking the GIL can serve it. */
static bool request_pass(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    if (!atomic_exchange(&S.queued, 1) &&
        _PyEval_AddPendingCall(S.interp, pending_samples, NULL, 0) < 0)
        atomic_store(&S.queued, 0);
    return true;
#else
    /* Only the main thread runs pending calls; when it does not hold the GIL now it waits
     * (I/O, a lock, time.sleep) while another thread may run. */
    if (gil_holder() != S.main_tstate)
        return false;
    if (!atomic_exchange(&S.queued, 1) && Py_AddPendingCall(pending_samples, NULL) < 0) {
        atomic_store(&S.queued, 0);
        return false;
    }
    /* A pending call added by a thread other than the main one does not interrupt the main
     * thread (bpo-40010): the eval breaker makes it look now, as a signal does. */
    _Py_atomic_store_relaxed(&S.interp->ceval.eval_breaker, 1);
    return true;
#endif
}

/* The sampler takes the GIL and runs the pass itself. */
static void pass_with_gil(void)
{
#if PY_VERSION_HEX < 0x030C0000
    /* A thread that holds the GIL running bytecode gives it up at its next check when
     * asked (after the switch interval it would be asked anyway); one in C code or
     * waiting does not need to be. */
    PyThreadState *holder = gil_holder();
    if (holder && holder != S.main_tstate) {
        _Py_atomic_store_relaxed(&S.interp->ceval.gil_drop_request, 1);
        _Py_atomic_store_relaxed(&S.interp->ceval.eval_breaker, 1);
    }
#endif
    PyGILState_STATE gil = PyGILState_Ensure();
    take_samples();
    PyGILState_Release(gil);
}

static uint64_t monotonic_ns(void)
{
    return sp_clock_monotonic_ns();
}

static void *sampler_main(void *arg)
{
    (void)arg;
    /* A thread state of its own for the sampler's whole life: PyGILState_Ensure/Release
     * around each pass would otherwise make and delete one every time, which takes the
     * runtime's lock of the thread list without the GIL. A fork() by another thread
     * meanwhile leaves that lock held in the child, and 3.9 takes it there before it
     * makes it anew: the child hung in os.fork() (CPython's test_threading,
     * test_is_alive_after_fork). Made and deleted once, while the measurement starts and
     * ends. */
    PyGILState_STATE own_state = PyGILState_Ensure();
    S.sampler_tstate = PyThreadState_Get();
    PyThreadState *saved = PyEval_SaveThread();
    uint64_t next = monotonic_ns() + S.period_ns;
    while (!atomic_load(&S.stop)) {
        struct timespec t = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
        int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
        if (r != 0 && r != EINTR)
            break;
        if (r == EINTR)
            continue;
        if (atomic_load(&S.stop))
            break;
        uint64_t now = monotonic_ns();
        next += S.period_ns;
        if (next <= now)
            next = now + S.period_ns; /* ticks were missed (the machine was busy): no burst */
        if (!atomic_load(&S.active))
            continue;
        /* A pass asked for at the last tick that has not run: no thread runs bytecode that
         * could run it. */
        bool unserved = atomic_exchange(&S.due, 1);
        if (!unserved)
            atomic_store(&S.asked_at, sp_clock_now());
        if (unserved || !request_pass())
            pass_with_gil();
    }
    PyEval_RestoreThread(saved);
    S.sampler_tstate = NULL;
    PyGILState_Release(own_state);
    return NULL;
}

/* A forked child has no sampler thread (only the forking thread is copied), and none of
 * the parent's other threads: those that were waiting for the GIL in the unwinder are not
 * there to be waited for at the end (the child would wait forever). */
static void forget_sampler_in_child(void)
{
    S.thread_running = false;
    S.sampler_tstate = NULL; /* deleted with the parent's other threads' */
    atomic_store(&S.active, false);
    atomic_store(&S.unwinders_acquiring, 0);
}

/* ---- life cycle ------------------------------------------------------------------------ */

double sp_python_ticks_per_ns(void)
{
    if (sp_clock_timer == SP_TIMER_CLOCK_GETTIME)
        return 1.0;
    uint64_t ns = sp_clock_monotonic_ns(), ticks = sp_clock_now();
    if (ns <= S.start_ns + 1000000 || ticks <= S.start_ticks)
        return 1.0; /* too early to tell: close enough for one sample */
    return (double)(ticks - S.start_ticks) / (double)(ns - S.start_ns);
}

uint64_t sp_python_key_of(PyThreadState *ts)
{
    return ts->id + 1; /* never 0 */
}

/* The frames every thread runs now, as the measurement starts: they are not the program's
 * (the runner, a kernel's machinery), and samples and contexts leave them out. */
static int remember_old_frames(void)
{
    for (uint32_t i = 0; i < S.old_count; i++)
        free(S.old[i].frames);
    free(S.old);
    S.old = NULL;
    S.old_count = 0;
    uint32_t n = 0;
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(S.interp); ts;
         ts = PyThreadState_Next(ts))
        n++;
    S.old = calloc(n ? n : 1, sizeof *S.old);
    if (!S.old)
        return -1;
    raw_stack raw = {0};
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(S.interp); ts && S.old_count < n;
         ts = PyThreadState_Next(ts)) {
        walk_frames(ts, &raw);
        old_frames *o = &S.old[S.old_count++];
        o->thread = ts->id;
        o->frames = calloc(raw.count ? raw.count : 1, sizeof *o->frames);
        if (!o->frames) {
            free(raw.frames);
            return -1;
        }
        for (uint32_t k = 0; k < raw.count; k++) {
            o->frames[k].frame = raw.frames[raw.count - 1 - k].frame;
            o->frames[k].code = raw.frames[raw.count - 1 - k].code;
        }
        o->count = raw.count;
    }
    free(raw.frames);
    return 0;
}

int sp_python_sampling_start(bool unwinding, uint64_t period_us, bool cpu)
{
    static bool fork_handler;
    if (!fork_handler) {
        if (pthread_atfork(NULL, NULL, forget_sampler_in_child) != 0) {
            PyErr_SetString(PyExc_RuntimeError, "cannot register the sampler's fork handler");
            return -1;
        }
        fork_handler = true;
    }
    S.unwinding = unwinding;
    S.configured = unwinding && period_us > 0;
    S.period_ns = period_us * 1000u;
    S.cpu = cpu;
    S.interp = PyInterpreterState_Get();
    S.start_ticks = sp_clock_now();
    S.start_ns = sp_clock_monotonic_ns();
    S.thread_count = 0;
    S.pass = 0;
    atomic_store(&S.due, 0);
    atomic_store(&S.active, false);
    atomic_store(&S.stop, false);
#if PY_VERSION_HEX < 0x030C0000
    S.main_tstate = NULL;
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(S.interp); ts;
         ts = PyThreadState_Next(ts))
        if (ts->thread_id == _PyRuntime.main_thread)
            S.main_tstate = ts;
#endif
    if (!unwinding)
        return 0;
    if (remember_old_frames() != 0) {
        PyErr_NoMemory();
        return -1;
    }
    atomic_store(&S.unwinders_may_acquire, true);
    sp_set_unwinder(unwind_own);
    return 0;
}

int sp_python_sampling_register(void)
{
    if (!S.configured)
        return 0;
    S.resumes++;
    S.last_pass = 0;
    atomic_store(&S.active, true);
    if (S.thread_running)
        return 0;
    atomic_store(&S.stop, false);
    if (pthread_create(&S.thread, NULL, sampler_main, NULL) != 0) {
        atomic_store(&S.active, false);
        PyErr_SetString(PyExc_RuntimeError, "cannot start the sampler thread");
        return -1;
    }
    S.thread_running = true;
    return 0;
}

void sp_python_sampling_unregister(void)
{
    atomic_store(&S.active, false);
}

void sp_python_sampling_stop(void)
{
    if (!S.unwinding)
        return;
    atomic_store(&S.active, false);
    if (S.thread_running) {
        atomic_store(&S.stop, true);
        /* Without the GIL: the sampler may be waiting for it. */
        Py_BEGIN_ALLOW_THREADS
        pthread_join(S.thread, NULL);
        Py_END_ALLOW_THREADS
        S.thread_running = false;
    }
    /* Threads naming a code object in an event get the GIL once more, then none does: the
     * end of the measurement waits for threads in events while it holds the GIL. */
    atomic_store(&S.unwinders_may_acquire, false);
    while (atomic_load(&S.unwinders_acquiring)) {
        Py_BEGIN_ALLOW_THREADS
        sched_yield();
        Py_END_ALLOW_THREADS
    }
    sp_set_unwinder(NULL);
    S.unwinding = S.configured = false;
    free(S.threads);
    S.threads = NULL;
    S.thread_count = S.thread_capacity = 0;
}
