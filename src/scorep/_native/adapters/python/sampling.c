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
#include "adapters/python/native.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
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

/* ---- reading a thread's frames where it is (asynchronous reads) ------------------------
 * At each tick the sampler thread, without the GIL, copies every thread's frame chain as
 * it is at that moment: while the thread runs, waits or computes in C. Every read goes
 * through process_vm_readv on our own process, which fails (EFAULT) instead of faulting on
 * memory that was freed and unmapped meanwhile, so no read can crash, block or change the
 * program. What is read is only trusted after checks: the thread list and a stack are
 * bounded, a frame's code object must be one the pass has seen alive and keeps a strong
 * reference to (`known`: a code object that may have been freed is never dereferenced,
 * not even to look at its type), its instruction pointer inside that code, and the thread's
 * innermost frame the same after the walk as before (else the thread moved during the
 * read, which is tried once more). The copy ("capture") is recorded at the next pass,
 * under the GIL, as today's samples are: the core's events of a thread are only kept apart
 * from a sample by the GIL. A thread whose capture failed a check, or holds a code object
 * not known yet, is sampled as before at that pass (its frames read under the GIL), which
 * also makes its code objects known; MANIFEST.md counts both. */

#include <sys/uio.h>
#include <unistd.h>

#define CAP_THREADS 256   /* threads read per tick; more wait for the pass (counted) */
#define CAP_FRAMES 16384  /* frames read per tick, all threads together */
#define CAP_DEPTH 4096    /* a deeper chain is taken as a torn read */
#define KNOWN_SLOTS 65536 /* known code objects (power of two; filled at most half) */

enum { CAP_OK, CAP_UNKNOWN, CAP_TORN, CAP_TOO_MANY };

typedef struct {
    const void *tstate; /* compared with the live thread states at the pass, never read */
    uint64_t id;
    uint32_t first, count;
    /* The interpreter's evaluation calls the chain spans (--native's merge): the frames of
     * one call of _PyEval_EvalFrameDefault are a group, numbered from the innermost. */
    uint32_t groups;
    int status;
} cap_thread;

/* What identifies a code object read without a reference to it: checked again at the pass
 * before the object is trusted (a freed one fails: its memory no longer says
 * PyCode_Type with a live reference count, or holds another function). */
typedef struct {
    const void *name, *filename;
    int firstlineno;
} fingerprint;

typedef struct {
    const void *frame, *code; /* the frame's code object: known (alive), or `unknown` */
    const void *extra; /* unknown ones: the frame's globals */
    const void *object; /* unknown ones before 3.11: the frame object (names methods) */
    fingerprint id; /* unknown ones */
    uint32_t group; /* its evaluation call (cap_thread.groups) */
    bool unknown;
} cap_frame;

/* A code object the measurement keeps alive, with what a read needs of it without
 * dereferencing it. Slots are only ever added while the measurement runs (by the pass,
 * under the GIL) and read by the sampler without it: the key is published last. */
typedef struct {
    _Atomic(PyCodeObject *) code;
    const void *start;     /* first instruction (3.11+) or co_code's size (before) */
    const void *traceable; /* 3.11+: frames before it have not started */
    const void *end;
    bool skip;             /* not a code object (3.13 f_executable): the frame is not a function's */
} known_code;

static struct {
    bool enabled;
    pid_t pid;
    known_code *known;
    uint32_t known_count;
    /* The capture: written by the sampler while `ready` is 0, read by a pass while 1. */
    _Atomic int ready;
    uint64_t time;
    cap_thread threads[CAP_THREADS];
    uint32_t thread_count;
    cap_frame *frames;
    /* --native: every thread's native stack at the tick (threads that never ran Python
     * too), allocated once like `frames`. */
    sp_native_stack *native;
    uint32_t native_count;
    /* Counted for MANIFEST.md (kept after the end, until the next start). */
    _Atomic uint64_t async_samples, deferred_unknown, deferred_torn, deferred_new,
        deferred_late;
    /* --native: samples whose C frames between Python frames were placed, and those whose
     * native and Python stacks did not match (only the innermost C frames then). */
    _Atomic uint64_t native_merged, native_unmatched;
    /* Time no sample stands for (ticks; it went to the program root): owed by earlier
     * samples and dropped because a recorded region took the room; owed and not given back
     * yet (summed over the locations: at the end, never given back); cut from the passes'
     * weights by the cap on long gaps (each thread's samples lack it), and those gaps. */
    _Atomic uint64_t owed_dropped, owed_held, gap_cut, gaps;
    /* Ticks at which the GIL's holder, before 3.12, ran an audit hook or a trace function
     * and was not asked to give the GIL up (hurry_holder). */
    _Atomic uint64_t hook_waits;
    int unavailable; /* errno of the probe read when reads where the threads are failed */
} A;

static inline bool safe_read(const void *from, void *to, size_t size)
{
    struct iovec local = {to, size}, remote = {(void *)from, size};
    return from && process_vm_readv(A.pid, &local, 1, &remote, 1, 0) == (ssize_t)size;
}

static inline uint32_t known_hash(const void *code)
{
    uintptr_t v = (uintptr_t)code >> 4;
    v ^= v >> 17;
    v *= 0x9E3779B97F4A7C15u;
    return (uint32_t)(v >> 32) & (KNOWN_SLOTS - 1);
}

static const known_code *known_find(const void *code)
{
    for (uint32_t i = known_hash(code), n = 0; n < KNOWN_SLOTS; i = (i + 1) & (KNOWN_SLOTS - 1), n++) {
        PyCodeObject *k = atomic_load_explicit(&A.known[i].code, memory_order_acquire);
        if (k == code)
            return &A.known[i];
        if (!k)
            return NULL;
    }
    return NULL;
}

/* Under the GIL, `object` alive (on a live frame): kept alive from now on. */
static void known_add(PyObject *object)
{
    if (!A.known || known_find(object) || A.known_count >= KNOWN_SLOTS / 2)
        return;
    uint32_t i = known_hash(object);
    while (atomic_load_explicit(&A.known[i].code, memory_order_relaxed))
        i = (i + 1) & (KNOWN_SLOTS - 1);
    known_code *k = &A.known[i];
    k->skip = !PyCode_Check(object);
    if (!k->skip) {
        PyCodeObject *code = (PyCodeObject *)object;
#if PY_VERSION_HEX >= 0x030B0000
        k->start = _PyCode_CODE(code);
        k->traceable = _PyCode_CODE(code) + code->_co_firsttraceable;
        k->end = _PyCode_CODE(code) + Py_SIZE(code);
#else
        k->start = (const void *)(uintptr_t)PyBytes_GET_SIZE(code->co_code);
#endif
    }
    Py_INCREF(object);
    A.known_count++;
    atomic_store_explicit(&A.known[i].code, (PyCodeObject *)object, memory_order_release);
}

/* The GIL held: every code object on the thread's stack becomes known. */
static void known_add_stack(PyThreadState *ts)
{
#if PY_VERSION_HEX >= 0x030D0000
    for (_PyInterpreterFrame *f = ts->current_frame; f; f = f->previous)
        if (f->owner != FRAME_OWNED_BY_CSTACK && f->f_executable)
            known_add(f->f_executable);
#elif PY_VERSION_HEX >= 0x030B0000
    for (_PyInterpreterFrame *f = ts->cframe ? ts->cframe->current_frame : NULL; f;
         f = f->previous)
        known_add((PyObject *)f->f_code);
#else
    for (PyFrameObject *f = ts->frame; f; f = f->f_back)
        known_add((PyObject *)f->f_code);
#endif
}

static void known_clear(void)
{
    if (!A.known)
        return;
    for (uint32_t i = 0; i < KNOWN_SLOTS; i++) {
        PyCodeObject *k = atomic_load(&A.known[i].code);
        atomic_store(&A.known[i].code, NULL);
        Py_XDECREF(k);
    }
    A.known_count = 0;
}

/* The innermost frame of a thread state read at `ts` (a copy), or NULL. */
static const void *top_frame_of(const PyThreadState *copy)
{
#if PY_VERSION_HEX >= 0x030D0000
    return copy->current_frame;
#elif PY_VERSION_HEX >= 0x030B0000
    _PyCFrame cframe;
    if (!copy->cframe || !safe_read(copy->cframe, &cframe, sizeof cframe))
        return NULL;
    return cframe.current_frame;
#else
    return copy->frame;
#endif
}


/* A code object's header as a safe read finds it, if it looks like a live code object. */
static bool read_code(const void *at, PyCodeObject *copy, size_t size)
{
    if (!safe_read(at, copy, size))
        return false;
    Py_ssize_t refs = ((PyObject *)copy)->ob_refcnt;
    return Py_TYPE((PyObject *)copy) == &PyCode_Type && refs >= 1 && refs < ((Py_ssize_t)1 << 32);
}

#if PY_VERSION_HEX >= 0x030B0000
#define CODE_HEADER offsetof(PyCodeObject, co_code_adaptive)
#else
#define CODE_HEADER sizeof(PyCodeObject)
#endif

static bool looks_alive(const void *at, PyTypeObject *type)
{
    PyObject copy;
    return safe_read(at, &copy, sizeof copy) && Py_TYPE(&copy) == type &&
           copy.ob_refcnt >= 1 && copy.ob_refcnt < ((Py_ssize_t)1 << 32);
}

/* The caller of a thread's innermost frame as the read of the chain found it: what the
 * frames read after the innermost one hang from. */
typedef struct {
    const void *frame, *code;
} anchor;

/* A frame's caller and code: one read of the two fields (NULL code: the read failed). */
static bool frame_link(const void *at, const void **previous, const void **code)
{
#if PY_VERSION_HEX >= 0x030B0000
    _PyInterpreterFrame f;
    if (!safe_read(at, &f, offsetof(_PyInterpreterFrame, localsplus)))
        return false;
    *previous = f.previous;
#if PY_VERSION_HEX >= 0x030D0000
    *code = f.f_executable;
#else
    *code = f.f_code;
#endif
#else
    PyFrameObject f;
    if (!safe_read(at, &f, offsetof(PyFrameObject, f_localsplus)))
        return false;
    *previous = f.f_back;
    *code = f.f_code;
#endif
    return true;
}

/* Whether the frames read below a thread's innermost frame `top` (its caller `below`) are
 * still the thread's callers now that its innermost frame is `now`: `top` or `below`, with
 * the code the read found there, within ANCHOR_DEPTH frames of `now`. The thread called
 * on from `top`, or returned to `below` and called another function: the frames under
 * `below` did not change meanwhile (a frame that returned and came back at the same
 * address with the same code aside, which only moves a sample between two activations of
 * one function). */
#define ANCHOR_DEPTH 16

static bool still_below(const void *now, const void *top, const void *top_code, anchor below)
{
    for (uint32_t depth = 0; now && depth < ANCHOR_DEPTH; depth++) {
        const void *previous, *code;
        if (!frame_link(now, &previous, &code))
            return false;
        if ((now == top && code == top_code) ||
            (below.frame && now == below.frame && code == below.code))
            return true;
        now = previous;
    }
    return false;
}

/* The first frames of a chain as they are read: the innermost one's code, and the address
 * and code of its caller, the first frame below it that is a function's. From 3.12 on, a
 * frame resumed or called from C (a generator's send(), a callback) has a frame of the C
 * stack's below it, which is gone once the thread is back in the caller: anchored there, a
 * read of a generator that yielded meanwhile failed its check (sampling_stress.py: 0.9% of
 * the reads dropped on 3.12, 2.2% on 3.13, 0.1% on 3.11, where no such frame is). */
static inline void note_link(uint32_t depth, const void *at, const void *code, bool c_stack,
                             const void **top_code, anchor *below)
{
    if (depth == 0) {
        *top_code = code;
    } else if (!below->frame && !c_stack) {
        below->frame = at;
        below->code = code;
    }
}

/* One thread's chain from `top`, into A.frames from `t->first`: its status. `top_code`
 * and `below` receive the innermost frame's code and its caller as read. */
static int capture_chain(const void *top, cap_thread *t, const void **top_code,
                         anchor *below)
{
    uint32_t depth = 0;
    *top_code = NULL;
    *below = (anchor){NULL, NULL};
    /* Where one evaluation call's frames end, going outwards: 3.9 and 3.10 evaluate each
     * frame in a call of its own; 3.11 marks a call's first frame (is_entry); 3.12+ puts a
     * frame of the C stack's (FRAME_OWNED_BY_CSTACK) below a call's frames. Frames left
     * out below still count: their call is on the C stack. */
    uint32_t group = 0;
    bool ends_group = false;
    t->groups = 0;
    for (const void *at = top; at; depth++) {
        if (ends_group)
            group++;
        ends_group = false;
        if (depth >= CAP_DEPTH)
            return CAP_TORN;
#if PY_VERSION_HEX >= 0x030B0000
        _PyInterpreterFrame f;
        if (!safe_read(at, &f, offsetof(_PyInterpreterFrame, localsplus)))
            return CAP_TORN;
        const void *next = f.previous;
#if PY_VERSION_HEX >= 0x030C0000
        bool c_stack = f.owner == FRAME_OWNED_BY_CSTACK;
#else
        bool c_stack = false;
#endif
#if PY_VERSION_HEX >= 0x030D0000
        note_link(depth, at, f.f_executable, c_stack, top_code, below);
#else
        note_link(depth, at, f.f_code, c_stack, top_code, below);
#endif
#if PY_VERSION_HEX >= 0x030C0000
        if (f.owner == FRAME_OWNED_BY_CSTACK) {
            ends_group = true;
            at = next;
            continue;
        }
#else
        ends_group = f.is_entry;
#endif
#if PY_VERSION_HEX >= 0x030D0000
        const void *code = f.f_executable;
        const void *instr = f.instr_ptr;
#else
        const void *code = f.f_code;
        const void *instr = f.prev_instr;
#endif
        const void *extra = f.f_globals;
#else
        PyFrameObject f;
        if (!safe_read(at, &f, offsetof(PyFrameObject, f_localsplus)))
            return CAP_TORN;
        const void *next = f.f_back;
        const void *code = f.f_code;
        const void *extra = f.f_globals;
        note_link(depth, at, code, false, top_code, below);
        ends_group = true;
#endif
        const known_code *k = known_find(code);
        cap_frame out = {at, (PyCodeObject *)code, NULL, at, {0}, group, false};
        const void *start, *traceable, *end;
        if (k && k->skip) {
            at = next;
            continue;
        }
        if (k) {
            start = k->start;
            traceable = k->traceable;
            end = k->end;
        } else {
            /* Not seen yet: what the frame says it runs must look like a live code object;
             * the pass checks that again, under the GIL, before it names it. */
            PyCodeObject copy;
            if (!read_code(code, &copy, CODE_HEADER))
                return CAP_TORN;
            out.unknown = true;
            out.extra = extra;
            out.id = (fingerprint){copy.co_name, copy.co_filename, copy.co_firstlineno};
#if PY_VERSION_HEX >= 0x030B0000
            start = (const char *)code + CODE_HEADER;
            traceable = (const _Py_CODEUNIT *)start + copy._co_firsttraceable;
            end = (const _Py_CODEUNIT *)start + Py_SIZE(&copy);
#else
            start = NULL;
            traceable = NULL;
            end = NULL;
            (void)traceable;
            if (!looks_alive(copy.co_code, &PyBytes_Type))
                return CAP_TORN;
            PyBytesObject bytes;
            if (!safe_read(copy.co_code, &bytes, offsetof(PyBytesObject, ob_sval)))
                return CAP_TORN;
            start = (const void *)(uintptr_t)Py_SIZE(&bytes);
#endif
        }
#if PY_VERSION_HEX >= 0x030B0000
        if ((const _Py_CODEUNIT *)instr < (const _Py_CODEUNIT *)start - 1 ||
            (const _Py_CODEUNIT *)instr > (const _Py_CODEUNIT *)end)
            return CAP_TORN;
        /* Not started yet (its code has not begun): not where the time goes. */
        if (f.owner != FRAME_OWNED_BY_GENERATOR &&
            (const _Py_CODEUNIT *)instr < (const _Py_CODEUNIT *)traceable) {
            at = next;
            continue;
        }
#else
        (void)end;
        /* f_lasti counts bytes (3.9) or instructions (3.10): either way below co_code's size
         * in bytes; -1 before the frame's first instruction. That -1 failed this check as
         * an unsigned number, which dropped every read of a frame being set up: 3-4% of the
         * reads of a loop calling a tiny function on 3.9 and 3.10. */
        if (f.f_lasti < -1 || (f.f_lasti >= 0 && (uintptr_t)f.f_lasti >= (uintptr_t)start))
            return CAP_TORN;
        /* Not started yet: not where the time goes, as from 3.11 on (a generator's frame
         * stays: it is being resumed). */
        if (f.f_lasti == -1 && !f.f_gen) {
            at = next;
            continue;
        }
#endif
        if (t->first + t->count >= CAP_FRAMES)
            return CAP_TOO_MANY;
        A.frames[t->first + t->count++] = out;
        at = next;
    }
    t->groups = group + (ends_group ? 1 : 0);
    return CAP_OK;
}

/* The pass, GIL held: a code object read at the tick and not known then is named (`name`)
 * and kept if it is still the object the read saw. False: it is gone (the sample is
 * dropped). Frames from before the measurement are kept unnamed: they are no regions. */
static bool adopt(const cap_frame *f, bool name)
{
    if (known_find(f->code))
        return true;
    PyCodeObject copy;
    if (!read_code(f->code, &copy, CODE_HEADER) || copy.co_name != f->id.name ||
        copy.co_filename != f->id.filename || copy.co_firstlineno != f->id.firstlineno)
        return false;
    if (!name) {
        known_add((PyObject *)f->code);
        return true;
    }
    /* Alive, and nothing frees it while the GIL is held. */
    uint32_t region;
#if PY_VERSION_HEX >= 0x030B0000
    PyObject *globals = looks_alive(f->extra, &PyDict_Type) ? (PyObject *)f->extra : NULL;
    if (!globals)
        return false;
    lookup_code_region((PyCodeObject *)f->code, NULL, globals, NULL, NULL, &region);
#else
    /* The frame object names a method by its first argument while it runs; after it
     * returned (3.10 reads at a later safe point), its module's globals do. */
    PyFrameObject frame;
    if (looks_alive(f->object, &PyFrame_Type) && safe_read(f->object, &frame, sizeof frame) &&
        frame.f_code == f->code) {
        lookup_code_region((PyCodeObject *)f->code, (PyFrameObject *)f->object, NULL, NULL,
                           NULL, &region);
    } else {
        PyObject *globals = looks_alive(f->extra, &PyDict_Type) ? (PyObject *)f->extra : NULL;
        if (!globals)
            return false;
        PyObject *qualname = sp_python_qualname_in_globals((PyCodeObject *)f->code, globals);
        if (!qualname) {
            PyErr_Clear();
            return false;
        }
        lookup_code_region((PyCodeObject *)f->code, NULL, globals, NULL, qualname, &region);
        Py_DECREF(qualname);
    }
#endif
    known_add((PyObject *)f->code);
    return true;
}

/* The sampler thread, at a tick, without the GIL: every thread's frames as they are now. */
static void capture(void)
{
    A.time = sp_clock_now();
    A.thread_count = 0;
    /* The native stacks are asked for first: each thread's handler unwinds it where it was
     * at this tick (native.c), next to the Python frames read now. */
    sp_native_signal();
    uint32_t used = 0;
    /* One load from the interpreter state, which outlives the measurement (3.9-3.13 take
     * no lock and check nothing there); the thread states it leads to are only read. */
    const void *at = PyInterpreterState_ThreadHead(S.interp);
    for (uint32_t n = 0; at && n < 4 * CAP_THREADS; n++) {
        PyThreadState ts;
        if (!safe_read(at, &ts, sizeof ts))
            break; /* the list changed under the read: the rest is read at the pass */
        const void *next = ts.next;
        if (at != (const void *)S.sampler_tstate) {
            if (A.thread_count == CAP_THREADS)
                break;
            cap_thread *t = &A.threads[A.thread_count++];
            *t = (cap_thread){at, ts.id, used, 0, 0, CAP_OK};
            for (int attempt = 0; attempt < 2; attempt++) {
                t->count = 0;
                const void *top = top_frame_of(&ts), *top_code;
                anchor below;
                t->status = capture_chain(top, t, &top_code, &below);
                /* The thread moved while its chain was read: its innermost frame differs,
                 * and the frames read below it are no longer its callers. A thread that
                 * only called on or returned to the caller and called another function is
                 * kept: the innermost frame was read first, at once, and stands for the
                 * tick. Dropping those reads too dropped a read whenever a call began or
                 * ended during it, which happens more often in short functions: on a loaded
                 * machine, where the sampler is preempted while it reads, 3.9 dropped a
                 * fifth of the reads and gave straight_line.py's biggest function 0.43-0.62
                 * of the samples for 0.36 of the time. */
                if (t->status == CAP_OK) {
                    const void *now = safe_read(at, &ts, sizeof ts) ? top_frame_of(&ts) : NULL;
                    if (now != top && !still_below(now, top, top_code, below))
                        t->status = CAP_TORN;
                }
                if (t->status != CAP_TORN)
                    break;
            }
            if (t->status == CAP_OK)
                used += t->count;
        }
        at = next;
    }
}

/* The capture of a live thread (the pass, GIL held), or NULL. */
static const cap_thread *capture_of(PyThreadState *ts)
{
    for (uint32_t i = 0; i < A.thread_count; i++)
        if (A.threads[i].tstate == (const void *)ts && A.threads[i].id == ts->id)
            return &A.threads[i];
    return NULL;
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

/* ---- native frames (--native) ----------------------------------------------------------- */

/* Native frames' identities (what tells one activation from the next): their region and
 * depth, with a bit no frame address has. A native frame's own address is not known. */
#define NATIVE_IDENTITY ((uintptr_t)1 << 63)

static bool frames_reserve(uint32_t count)
{
    if (count <= S.frames.capacity)
        return true;
    sp_context_frame *frames = realloc(S.frames.frames, count * sizeof *frames);
    if (!frames)
        return false;
    S.frames.frames = frames;
    S.frames.capacity = count;
    return true;
}

/* The merge (as py-spy does it): the native frames inner to the interpreter's innermost
 * evaluation frame are what the innermost Python frame runs (ndarray.dot, then BLAS), so
 * they go after the `count` Python frames in S.frames. The evaluation frames themselves
 * stand for the Python frames, and the interpreter's call machinery between them is left
 * out. A stack without an evaluation frame (the unwinding stopped short) adds nothing: where
 * its frames sit is not known. Returns the new count. */
static uint32_t append_native_tail(const sp_native_stack *n, uint32_t count)
{
    uint32_t eval = n->count, region;
    if (n->blocked) {
        /* The call the thread waits in, made by what its innermost Python frame runs. */
        if (n->count == 1 && frames_reserve(count + 1) &&
            sp_native_region(n->ips[0], true, &region) == SP_NATIVE_FRAME &&
            region != SP_NO_ID) {
            S.frames.frames[count] = (sp_context_frame){
                region, NATIVE_IDENTITY | ((uintptr_t)count << 32) | region};
            count++;
        }
        return count;
    }
    for (uint32_t i = 0; i < n->count; i++)
        if (sp_native_region(n->ips[i], i == 0, &region) == SP_NATIVE_EVAL) {
            eval = i;
            break;
        }
    if (eval == n->count || !frames_reserve(count + eval))
        return count;
    for (uint32_t i = eval; i-- > 0;) {
        if (sp_native_region(n->ips[i], i == 0, &region) != SP_NATIVE_FRAME ||
            region == SP_NO_ID)
            continue;
        S.frames.frames[count] = (sp_context_frame){
            region, NATIVE_IDENTITY | ((uintptr_t)count << 32) | region};
        count++;
    }
    return count;
}

static inline void push_native(uintptr_t ip, bool innermost, uint32_t *count)
{
    uint32_t region;
    if (sp_native_region(ip, innermost, &region) != SP_NATIVE_FRAME || region == SP_NO_ID)
        return;
    S.frames.frames[*count] = (sp_context_frame){
        region, NATIVE_IDENTITY | ((uintptr_t)*count << 32) | region};
    (*count)++;
}

/* The native frames between evaluation calls j and j+1 (what the innermost Python frame of
 * group j+1 runs that calls back into Python: a ctypes callback, sorted(key=...), a numpy
 * function calling a Python one), outermost first. */
static void push_between(const sp_native_stack *n, const uint32_t *eval, uint32_t j,
                         uint32_t *count)
{
    for (uint32_t i = eval[j + 1]; i-- > eval[j] + 1;)
        push_native(n->ips[i], false, count);
}

/* The full merge, as py-spy makes it: the native stack's evaluation calls, innermost
 * first, are the capture's frame groups, innermost first, so the C frames between two
 * evaluation calls go between the Python frames of the two groups. A complete native stack
 * must have as many evaluation calls as the capture has groups (else the two reads do not
 * match: the thread moved between them, or a call is not recognised), and then the merge
 * is skipped (false: the caller appends only the tail). A stack cut short (depth, a library
 * without unwind tables) is matched from the innermost call out, as far as it goes. The
 * frames that ran before the measurement, and the C frames they called, are left out. On
 * success S.frames holds the merged context and *count its length. */
static bool merge_native(const cap_thread *c, uint32_t old, const sp_native_stack *n,
                         uint32_t *count)
{
    uint32_t eval[SP_NATIVE_DEPTH], evals = 0, region;
    if (n->blocked || !c->groups || c->count <= old)
        return false;
    for (uint32_t i = 0; i < n->count; i++)
        if (sp_native_region(n->ips[i], i == 0, &region) == SP_NATIVE_EVAL)
            eval[evals++] = i;
    if (!evals || (n->complete && evals != c->groups)) {
        if (evals)
            atomic_fetch_add(&A.native_unmatched, 1);
        return false;
    }
    uint32_t aligned = evals < c->groups ? evals : c->groups;
    if (!frames_reserve(c->count + n->count))
        return false;
    uint32_t out = 0;
    const cap_frame *frames = &A.frames[c->first];
    uint32_t group = frames[c->count - old - 1].group; /* the outermost measured frame's */
    for (uint32_t i = c->count - old; i-- > 0;) {
        /* Entering an inner group: the C frames between the groups passed. */
        for (uint32_t g = group; g > frames[i].group; g--)
            if (g < aligned)
                push_between(n, eval, g - 1, &out);
        group = frames[i].group;
        uint32_t r;
        int known = cached_region(S.raw.frames[i].code, &r); /* the capture, as read */
        if (known == CODE_UNKNOWN)
            return false; /* not named yet: the caller's context (checked before) */
        if (known == CODE_FILTERED)
            continue;
        S.frames.frames[out++] = (sp_context_frame){r, (uintptr_t)frames[i].frame};
    }
    for (uint32_t g = group; g > 0; g--)
        if (g < aligned)
            push_between(n, eval, g - 1, &out);
    /* The tail: what the innermost Python frame runs. */
    for (uint32_t i = eval[0]; i-- > 0;)
        push_native(n->ips[i], i == 0, &out);
    atomic_fetch_add(&A.native_merged, 1);
    *count = out;
    return true;
}

/* Whether native stack n is thread ts's: by its pthread_t, or (3.11+, where the thread
 * state keeps it) by thread id, for a blocked thread whose handler never ran. */
static bool native_of(PyThreadState *ts, const sp_native_stack *n)
{
    if (n->pthread)
        return (unsigned long)ts->thread_id == n->pthread;
#if PY_VERSION_HEX >= 0x030B0000
    return n->tid > 0 && ts->native_thread_id == (unsigned long)n->tid;
#else
    return false;
#endif
}

/* Threads that never ran Python (BLAS and OpenMP workers, threads of C extensions): a
 * location each, named after the thread ("native thread 1234 (openblas_thr)"), made at
 * the pass; remembered by thread id for the measurement. Global like S. */
typedef struct {
    pid_t tid;
    uint32_t generation;
    sp_location *loc;
} native_thread;
static native_thread native_threads[CAP_THREADS];

static sp_location *native_location(const sp_native_stack *n)
{
    pid_t tid = n->tid;
    uint32_t generation = sp_measurement_generation();
    uint32_t slot = CAP_THREADS;
    for (uint32_t i = 0; i < CAP_THREADS; i++) {
        if (native_threads[i].tid == tid && native_threads[i].generation == generation)
            return native_threads[i].loc;
        if (slot == CAP_THREADS && (!native_threads[i].tid ||
                                    native_threads[i].generation != generation))
            slot = i;
    }
    /* Its name was read by the native sampler, outside the program's descriptor table. */
    const char *comm = n->comm;
    char name[96];
    snprintf(name, sizeof name, comm[0] ? "native thread %d (%s)" : "native thread %d",
             (int)tid, comm);
    /* Keys of Python threads are their thread state's id + 1: small numbers. */
    sp_location *loc = sp_location_of_key(((uint64_t)1 << 62) | (uint64_t)tid, (uint64_t)tid,
                                          name);
    if (slot < CAP_THREADS)
        native_threads[slot] = (native_thread){tid, generation, loc};
    return loc;
}

/* sp_sample, with the owed time it dropped or holds counted for MANIFEST.md. */
static void record_sample(sp_location *loc, uint64_t now, uint32_t count, uint64_t weight)
{
    uint64_t before = loc->sample_owed;
    atomic_fetch_add(&A.owed_dropped, sp_sample(loc, now, S.frames.frames, count, weight));
    /* Unsigned: a decrease wraps, and the sum over all samples comes out right. */
    atomic_fetch_add(&A.owed_held, loc->sample_owed - before);
}

/* A sample of every thread that holds no Python thread state, with its native frames
 * (outermost first): the pass, GIL held. */
static void sample_native_threads(uint64_t now, uint64_t weight)
{
    for (uint32_t k = 0; k < A.native_count; k++) {
        const sp_native_stack *n = &A.native[k];
        bool python = false;
        for (PyThreadState *ts = PyInterpreterState_ThreadHead(S.interp); ts && !python;
             ts = PyThreadState_Next(ts))
            python = native_of(ts, n);
#if PY_VERSION_HEX < 0x030B0000
        /* A blocked thread never signalled: whether it runs Python is not known. */
        python = python || !n->pthread;
#endif
        if (python || !n->count || !frames_reserve(n->count))
            continue;
        uint32_t count = 0, region;
        bool interpreter = false;
        for (uint32_t i = n->count; i-- > 0 && !interpreter;) {
            int kind = sp_native_region(n->ips[i], i == 0, &region);
            /* The interpreter's code on the stack: a Python thread that starts or ends (its
             * thread state is not listed yet, or not any more), not a thread of its own. */
            interpreter = kind != SP_NATIVE_FRAME;
            if (kind == SP_NATIVE_FRAME && region != SP_NO_ID) {
                S.frames.frames[count] = (sp_context_frame){
                    region, NATIVE_IDENTITY | ((uintptr_t)count << 32) | region};
                count++;
            }
        }
        if (interpreter)
            continue;
        sp_location *loc = native_location(n);
        if (!loc || !sp_sample_begin(loc))
            continue;
        record_sample(loc, now, count, weight);
        sp_sample_end(loc);
    }
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
static void sample_thread(PyThreadState *ts, uint64_t now, uint64_t pass_weight,
                          bool captured)
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
    /* The frames read where the thread was at the tick, when that read passed its checks
     * and the thread's code objects are named; else those it has now, at this safe point. */
    const cap_thread *c = captured ? capture_of(ts) : NULL;
    bool from_capture = c && c->status == CAP_OK && raw_reserve(&S.raw, c->count);
    bool unknown = false, gone = false;
    uint32_t old = 0, inner = 0, count = 0;
    if (from_capture) {
        S.raw.count = c->count;
        for (uint32_t i = 0; i < c->count; i++) {
            const cap_frame *f = &A.frames[c->first + i];
            S.raw.frames[i] = (raw_frame){f->frame, (PyCodeObject *)f->code, NULL, NULL};
        }
        /* Compared as pointers only: nothing is dereferenced before adopt() checked it. */
        old = old_frame_count(&S.raw, ts->id);
        for (uint32_t i = 0; i < c->count && !gone; i++)
            if (A.frames[c->first + i].unknown &&
                !adopt(&A.frames[c->first + i], i < c->count - old) && i < c->count - old)
                gone = true;
        from_capture = !gone;
    }
    if (from_capture) {
        /* Known code objects are alive (`known` holds them): their cache can be read. */
        count = context_frames(&S.raw, old, 0, false, S.frames.frames, S.frames.capacity,
                               &unknown);
        from_capture = !unknown;
    }
    if (A.enabled) {
        if (from_capture) {
            atomic_fetch_add(&A.async_samples, 1);
        } else if (gone || (c && (c->status == CAP_TORN || c->status == CAP_TOO_MANY))) {
            /* Dropped, not taken here: a safe point is often the start of a function, which
             * would get the samples of the reads that failed (3.10-3.13, a straight-line
             * function calling a cheap one: the cheap one 5-9% of the samples instead of
             * under 1%). The time goes to the thread's next sample. */
            atomic_fetch_add(&A.deferred_torn, 1);
            known_add_stack(ts);
            return;
        } else {
            if (!c)
                atomic_fetch_add(captured ? &A.deferred_new : &A.deferred_late, 1);
            else
                atomic_fetch_add(&A.deferred_unknown, 1);
            known_add_stack(ts);
        }
    }
    if (!from_capture) {
        walk_frames(ts, &S.raw);
        old = old_frame_count(&S.raw, ts->id);
#if PY_VERSION_HEX < 0x030A0000
        /* A frame that has not started yet is not where the time went (frame_not_started);
         * only at a safe point: a read where the thread is sees it as it is. */
        inner = S.raw.count > old && !A.enabled && frame_not_started(&S.raw.frames[0]) ? 1 : 0;
#endif
    }
    if (S.raw.count == old && !(e->loc && e->generation == sp_measurement_generation()))
        return; /* only frames from before the measurement: not a thread of the program */
    if (!from_capture)
        count = context_frames(&S.raw, old, inner, true, S.frames.frames, S.frames.capacity,
                               &unknown);
    if (count > S.frames.capacity) {
        sp_context_frame *frames = realloc(S.frames.frames, count * sizeof *frames);
        if (!frames)
            return;
        S.frames.frames = frames;
        S.frames.capacity = count;
        count = context_frames(&S.raw, old, inner, !from_capture, S.frames.frames,
                               S.frames.capacity, &unknown);
    }
    if (from_capture)
        for (uint32_t k = 0; k < A.native_count; k++)
            if (native_of(ts, &A.native[k])) {
                if (A.native[k].fresh && !merge_native(c, old, &A.native[k], &count))
                    count = append_native_tail(&A.native[k], count);
                break;
            }
    sp_location *loc = location_of(ts, e);
    if (!loc || !sp_sample_begin(loc))
        return; /* the thread is inside an event: its time goes to its next sample */
    record_sample(loc, now, count, weight);
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
#define ASYNC_SPAN 100

static uint64_t pass_weight(uint64_t now)
{
    double ticks_per_ns = sp_python_ticks_per_ns();
    uint64_t period = (uint64_t)((double)S.period_ns * ticks_per_ns);
    uint64_t since = S.last_pass && now > S.last_pass ? now - S.last_pass : period;
    uint64_t asked = atomic_load(&S.asked_at);
    uint64_t waited = asked && now > asked ? now - asked : 0;
    /* A read where the threads were is as good a guess for a long gap as for a short one
     * (nothing waited for a safe point): only gaps beyond ASYNC_SPAN periods are left out,
     * which kept a loaded machine's straight-line functions 10-40 points short of their
     * time shares (the rest went to the program root) with PASS_SPAN. */
    uint64_t cap = (A.enabled ? ASYNC_SPAN : PASS_SPAN) * period + waited;
    S.last_pass = now;
    if (since <= cap)
        return since;
    atomic_fetch_add(&A.gap_cut, since - cap);
    atomic_fetch_add(&A.gaps, 1);
    return cap;
}

/* One pass over every thread, if one is due. */
static void take_samples(void)
{
    if (!atomic_exchange(&S.due, 0))
        return;
    bool captured = A.enabled && atomic_load_explicit(&A.ready, memory_order_acquire);
    if (!atomic_load(&S.active) || !sp_measurement_running()) {
        atomic_store_explicit(&A.ready, 0, memory_order_release);
        return;
    }
    /* Nothing this thread does meanwhile is recorded (naming a code object). */
    sp_thread.busy++;
    saved_exception saved = exception_save();
    uint64_t now = sp_clock_now();
    /* A pass with a capture stands for the time between captures: they are the samples. */
    uint64_t weight = pass_weight(captured && A.time < now ? A.time : now);
    S.pass++;
    A.native_count = captured && A.native ? sp_native_collect(A.native, CAP_THREADS) : 0;
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(S.interp); ts;
         ts = PyThreadState_Next(ts))
        if (ts != S.sampler_tstate)
            sample_thread(ts, now, weight, captured);
    if (captured)
        sample_native_threads(now, weight);
    forget_ended_threads();
    atomic_store_explicit(&A.ready, 0, memory_order_release);
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
    /* Only the main thread runs pending calls. When another thread holds the GIL, the
     * main thread waits (I/O, a lock, time.sleep) while that one runs. When nobody holds
     * it, the main thread may be in C code that calls Python back at once (a ctypes
     * callback takes the GIL for each call): the pending call is asked for all the same,
     * and the sampler takes the GIL only when it is not served in time (sampler_main).
     * Taking it at once made the sampler wait for it while the main thread took and
     * released it for each callback, which keeps a waiting thread out (see sampler_main):
     * waits of 0.1-0.9 s in some runs of tests/programs/native_callback.py on 3.11, with
     * no samples meanwhile. */
    PyThreadState *holder = gil_holder();
    if (holder && holder != S.main_tstate)
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

#if PY_VERSION_HEX < 0x030C0000
/* Whether a thread runs an audit hook or a trace function (CPython counts them in
 * `tracing`). Read with a safe read: a thread that ends frees its state while it still
 * holds the GIL. */
static bool in_hook(PyThreadState *ts)
{
    int tracing = 0;
    return safe_read(&ts->tracing, &tracing, sizeof tracing) && tracing > 0;
}
#endif

/* Asks the GIL's holder to give it up at its next check, for a pass the waiter runs (before
 * 3.12, a thread other than the main one: only the main one runs pending calls), but not
 * while it runs an audit hook or a trace function. 3.10 and 3.11 guard sys.settrace and
 * sys.setprofile with one flag for the whole process, held while the audit hooks run: a
 * switch inside a hook written in Python gave the GIL to another thread, whose
 * sys.settrace failed ("Cannot install a trace function while another trace function is
 * being installed"; tests/programs/settrace_threads.py: 9-25 of 6000 threads on 3.10 and
 * 3.11). Asking only a holder that had held the GIL since the last tick (not a thread
 * that just started) left none failing, but took every sample of short-lived computing
 * threads away in some runs (tests/programs/sampling_stress.py), so it is not done. */
#define HURRY_WATCH_NS 20000

static void hurry_holder(void)
{
#if PY_VERSION_HEX < 0x030C0000
    PyThreadState *holder = gil_holder();
    if (!holder || holder == S.main_tstate)
        return;
    if (in_hook(holder)) {
        atomic_fetch_add(&A.hook_waits, 1);
        return;
    }
    _Py_atomic_store_relaxed(&S.interp->ceval.gil_drop_request, 1);
    _Py_atomic_store_relaxed(&S.interp->ceval.eval_breaker, 1);
    /* The holder may enter a hook before its next check: watched for a few microseconds
     * (a thread running bytecode checks within them), the request is taken back if it
     * does (the holder then finds nothing to do at its check). A holder in C code that
     * keeps the GIL longer stays asked, as before: a hook it runs later can still be
     * switched in (docs/limitations.md). */
    uint64_t until = sp_clock_monotonic_ns() + HURRY_WATCH_NS;
    while (gil_holder() == holder && sp_clock_monotonic_ns() < until) {
        if (in_hook(holder)) {
            _Py_atomic_store_relaxed(&S.interp->ceval.gil_drop_request, 0);
            atomic_fetch_add(&A.hook_waits, 1);
            return;
        }
    }
#endif
}

/* ---- the GIL waiter ---------------------------------------------------------------------
 * A pass that no thread of the program runs (no pending call served) is run by a thread of
 * the sampler's that takes the GIL: the waiter. The sampler thread never waits for the GIL
 * itself, so its ticks, reads and pending-call requests go on while the waiter waits. A
 * thread that gives the GIL up and takes it again every few microseconds (Python called
 * back from a long C call: a ctypes callback takes the GIL for each call) keeps a waiting
 * thread out for as long as it does so (CPython asks the holder to let go only after a
 * switch interval in which the waiting thread was not woken, and each release wakes it);
 * when the sampler itself waited, its ticks stopped for that long, and the pending calls
 * that the callbacks would have served were never asked for: reading at safe points, no
 * sample for most of a 0.3-0.6 s C call in about 1 run of 5 (3.9-3.12,
 * tests/programs/native_callback.py). Global (like S) for the fork handler. */
static struct {
    pthread_t thread;
    bool running;            /* the sampler thread and the end of the measurement only */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool asked, quit, started; /* under lock */
    pid_t tid;                 /* under lock: left out of --native's threads */
    _Atomic bool busy;         /* asked, pass not done yet */
} W = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static void *waiter_main(void *arg)
{
    (void)arg;
    /* A thread state of its own for the waiter's whole life: PyGILState_Ensure/Release
     * around each pass would otherwise make and delete one every time, which takes the
     * runtime's lock of the thread list without the GIL. A fork() by another thread
     * meanwhile leaves that lock held in the child, and 3.9 takes it there before it
     * makes it anew: the child hung in os.fork() (CPython's test_threading,
     * test_is_alive_after_fork). Made at the first pass the waiter is asked for, not when
     * the sampling starts: Python's first imports then run on their own. Deleted when the
     * measurement ends. */
    bool has_state = false;
    PyGILState_STATE own_state = PyGILState_UNLOCKED;
    PyThreadState *saved = NULL;
    pthread_mutex_lock(&W.lock);
    W.tid = (pid_t)syscall(SYS_gettid);
    W.started = true;
    pthread_cond_broadcast(&W.wake);
    for (;;) {
        while (!W.asked && !W.quit)
            pthread_cond_wait(&W.wake, &W.lock);
        if (W.quit)
            break;
        W.asked = false;
        pthread_mutex_unlock(&W.lock);
        if (!has_state) {
            own_state = PyGILState_Ensure();
            S.sampler_tstate = PyThreadState_Get();
            saved = PyEval_SaveThread();
            has_state = true;
        }
        PyGILState_STATE gil = PyGILState_Ensure();
        take_samples();
        PyGILState_Release(gil);
        atomic_store(&W.busy, false);
        pthread_mutex_lock(&W.lock);
    }
    pthread_mutex_unlock(&W.lock);
    if (has_state) {
        PyEval_RestoreThread(saved);
        S.sampler_tstate = NULL;
        PyGILState_Release(own_state);
    }
    return NULL;
}

/* The sampler thread: a pass with the GIL, run by the waiter. A wait under way is left to
 * go on: the pending calls asked for at the next ticks may serve the pass first. */
static void ask_waiter(bool hurry)
{
    if (atomic_load(&W.busy))
        return;
    if (!W.running) {
        /* Every signal blocked: the program's go to its own threads, and --native leaves
         * the waiter out (sp_native_ignore). */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pthread_mutex_lock(&W.lock);
        W.asked = W.quit = W.started = false;
        W.tid = 0;
        pthread_mutex_unlock(&W.lock);
        int r = pthread_create(&W.thread, NULL, waiter_main, NULL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r != 0)
            return; /* the next tick tries again; the pending calls serve meanwhile */
        pthread_mutex_lock(&W.lock);
        while (!W.started)
            pthread_cond_wait(&W.wake, &W.lock);
        sp_native_ignore(W.tid);
        pthread_mutex_unlock(&W.lock);
        W.running = true;
    }
    atomic_store(&W.busy, true);
    if (hurry)
        hurry_holder();
    pthread_mutex_lock(&W.lock);
    W.asked = true;
    pthread_cond_broadcast(&W.wake);
    pthread_mutex_unlock(&W.lock);
}

/* The end of the measurement, without the GIL (the waiter may be waiting for it). */
static void stop_waiter(void)
{
    if (!W.running)
        return;
    pthread_mutex_lock(&W.lock);
    W.quit = true;
    pthread_cond_broadcast(&W.wake);
    pthread_mutex_unlock(&W.lock);
    pthread_join(W.thread, NULL);
    W.running = false;
    atomic_store(&W.busy, false);
    sp_native_ignore(0);
}

static uint64_t monotonic_ns(void)
{
    return sp_clock_monotonic_ns();
}

#define LATE_TICKS 4

static void *sampler_main(void *arg)
{
    (void)arg;
    uint64_t next = monotonic_ns() + S.period_ns;
    uint32_t late_ticks = 0;
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
        if (!unserved && A.enabled && !atomic_load_explicit(&A.ready, memory_order_acquire)) {
            capture();
            atomic_store_explicit(&A.ready, 1, memory_order_release);
        }
        /* With reads where the threads are, a pass that comes late only records late: the
         * sampler takes the GIL only after LATE_TICKS ticks (no thread runs bytecode).
         * Taking it at once made the thread that holds it wait at its next safe point
         * (often the start of a function), and a busy machine then let the next read find
         * it waiting there, in that function: 3.11, sampling_safe_points.py tail, cheap()
         * 11-18% of the samples instead of 0.4%. */
        bool with_gil, hurry = true;
        if (!unserved) {
            late_ticks = 0;
            with_gil = !request_pass();
        } else if (!A.enabled) {
            with_gil = true;
        } else {
#if PY_VERSION_HEX < 0x030C0000
            /* Before 3.12 the GIL's holder is known. A held one is left alone: its
             * holder runs the pending call at its next safe point, or computes in C and
             * would not give the GIL up earlier anyway. A free one is taken after
             * LATE_TICKS as from 3.12 on, not at once: free at a tick does not mean that
             * no thread runs bytecode (C code calling Python back takes it for each
             * call), and such a thread keeps a waiting sampler out (request_pass). */
            ++late_ticks;
            with_gil = late_ticks >= (gil_holder() ? 16 * LATE_TICKS : LATE_TICKS);
#else
            with_gil = ++late_ticks >= LATE_TICKS;
#endif
            hurry = false;
        }
        /* --native: the pass the sampler would run itself right after the tick waits (a
         * tick or more) for the threads' handlers, which run when each thread gets a CPU;
         * a pass a program's thread runs (a pending call) does not wait. */
        if (with_gil && A.enabled && atomic_load_explicit(&A.ready, memory_order_acquire) &&
            sp_native_pending())
            with_gil = false;
        if (with_gil)
            ask_waiter(hurry);
    }
    return NULL;
}

/* A forked child has no sampler thread (only the forking thread is copied), and none of
 * the parent's other threads: those that were waiting for the GIL in the unwinder are not
 * there to be waited for at the end (the child would wait forever). */
static void forget_sampler_in_child(void)
{
    S.thread_running = false;
    S.sampler_tstate = NULL; /* deleted with the parent's other threads' */
    /* No waiter either; its lock may have been held by it. */
    W.running = false;
    atomic_store(&W.busy, false);
    pthread_mutex_init(&W.lock, NULL);
    pthread_cond_init(&W.wake, NULL);
    atomic_store(&S.active, false);
    atomic_store(&S.unwinders_acquiring, 0);
    A.pid = getpid();
    atomic_store(&A.ready, 0);
    sp_native_forget_in_child();
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

/* Whether samples are read where the threads are (true, the default) or at safe points;
 * set before a measurement starts. Global like S. */
static bool want_async = true;

void sp_python_sampling_set_async(bool on)
{
    want_async = on;
}

/* Whether samples carry native frames (--native); set before a measurement starts. */
static bool want_native;

void sp_python_sampling_set_native(bool on)
{
    want_native = on;
}

void sp_python_sampling_counts(uint64_t counts[13])
{
    counts[12] = atomic_load(&A.hook_waits);
    double ticks_per_ns = sp_python_ticks_per_ns();
    counts[8] = (uint64_t)((double)atomic_load(&A.owed_dropped) / ticks_per_ns);
    counts[9] = (uint64_t)((double)atomic_load(&A.owed_held) / ticks_per_ns);
    counts[10] = (uint64_t)((double)atomic_load(&A.gap_cut) / ticks_per_ns);
    counts[11] = atomic_load(&A.gaps);
    counts[5] = (uint64_t)A.unavailable;
    counts[6] = atomic_load(&A.native_merged);
    counts[7] = atomic_load(&A.native_unmatched);
    counts[0] = atomic_load(&A.async_samples);
    counts[1] = atomic_load(&A.deferred_unknown);
    counts[2] = atomic_load(&A.deferred_torn);
    counts[3] = atomic_load(&A.deferred_new);
    counts[4] = atomic_load(&A.deferred_late);
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
    atomic_store(&A.async_samples, 0);
    atomic_store(&A.deferred_unknown, 0);
    atomic_store(&A.deferred_torn, 0);
    atomic_store(&A.deferred_new, 0);
    atomic_store(&A.deferred_late, 0);
    atomic_store(&A.native_merged, 0);
    atomic_store(&A.native_unmatched, 0);
    atomic_store(&A.owed_dropped, 0);
    atomic_store(&A.owed_held, 0);
    atomic_store(&A.gap_cut, 0);
    atomic_store(&A.gaps, 0);
    atomic_store(&A.hook_waits, 0);
    atomic_store(&A.ready, 0);
    A.pid = getpid(); /* safe reads of the GIL holder's state, in either read mode */
    A.enabled = false;
    A.unavailable = 0;
    if (S.configured && want_async) {
        /* Allocated once, kept for later measurements of the process. */
        if (!A.known)
            A.known = calloc(KNOWN_SLOTS, sizeof *A.known);
        if (!A.frames)
            A.frames = calloc(CAP_FRAMES, sizeof *A.frames);
        if (!A.known || !A.frames) {
            PyErr_NoMemory();
            return -1;
        }
        A.pid = getpid();
        /* A container's seccomp profile may forbid process_vm_readv (EPERM, ENOSYS): then
         * the stacks are read at safe points, and MANIFEST.md says why. */
        long probe = 1, copy = 0;
        if (safe_read(&probe, &copy, sizeof copy) && copy == probe)
            A.enabled = true;
        else
            A.unavailable = errno ? errno : EINVAL;
    }
    if (S.configured && want_native) {
        /* The native stacks are read at the tick, next to the Python frames read there. */
        if (!A.enabled) {
            PyErr_SetString(PyExc_RuntimeError,
                            "--native needs the stacks read where the threads are "
                            "(SCOREP_SAMPLING_READ=async, and process_vm_readv allowed)");
            return -1;
        }
        if (!A.native)
            A.native = calloc(CAP_THREADS, sizeof *A.native);
        if (!A.native) {
            PyErr_NoMemory();
            return -1;
        }
        if (sp_native_start() != 0)
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
        stop_waiter();
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
    known_clear(); /* the sampler has ended: nobody reads them */
    sp_native_stop();
    A.enabled = false;
    S.unwinding = S.configured = false;
    free(S.threads);
    S.threads = NULL;
    S.thread_count = S.thread_capacity = 0;
}
