/* PEP 523 (before 3.12): wrapping frame evaluation. One call of ours per evaluation of a
 * frame: a function call, or a generator/coroutine resuming; the evaluation returns at
 * return, yield/await and exception. Unlike the profile hook this leaves the interpreter's
 * fast paths on. */
#include "adapters/python/internal.h"

#include <pthread.h>
#include <sys/mman.h>
#include <ucontext.h>

#if SP_HAVE_EVAL
#if PY_VERSION_HEX >= 0x030B0000
typedef struct _PyInterpreterFrame sp_eval_frame;
#define EVAL_FRAME_CODE(f) ((f)->f_code)
/* Calling a generator function evaluates its frame once to create the generator
 * (RETURN_GENERATOR): that is no visit of the function. */
#define EVAL_FRAME_CREATES_GENERATOR(f)                                                          \
    (((f)->f_code->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)) &&              \
     (f)->owner == FRAME_OWNED_BY_THREAD)
#define EVAL_FRAME_OBJECT(f) NULL
#define EVAL_FRAME_GLOBALS(f) ((f)->f_globals)
#else
typedef PyFrameObject sp_eval_frame;
#define EVAL_FRAME_CODE(f) ((f)->f_code)
#define EVAL_FRAME_CREATES_GENERATOR(f) 0
#define EVAL_FRAME_OBJECT(f) (f)
#define EVAL_FRAME_GLOBALS(f) ((f)->f_globals)
#endif

/* The interpreter's frame evaluator we replaced (and call for every frame): the hook is
 * per interpreter, set once at registration, so it has no better home. */
static _PyFrameEvalFunction previous_eval_frame;

/* ---- C stack for deep recursion ----------------------------------------------------------
 * With a frame evaluation hook installed, every Python call recurses in C (3.11 no longer
 * inlines Python-to-Python calls; 3.9/3.10 add our frame to theirs), so a recursion that plain
 * Python survives up to its recursion limit would overflow the thread's C stack. When the
 * stack runs low, the frame is evaluated on a fresh stack segment of its own (ucontext), freed
 * when the frame returns: the program gets as deep as its recursion limit allows. */

#define STACK_SEGMENT_SIZE ((size_t)32 << 20)
/* What one frame evaluation may still need below the switch point: our frame, CPython's
 * evaluator and whatever C the frame calls before the next Python call. */
#define STACK_RESERVE ((size_t)512 << 10)

/* Per thread: below this address the current stack (thread stack or segment) runs out.
 * UINTPTR_MAX: not known yet. Thread-local because every thread has its own stack. */
static SP_TLS uintptr_t eval_stack_floor = UINTPTR_MAX;

typedef struct {
    PyThreadState *tstate;
    sp_eval_frame *frame;
    int throwflag;
    PyObject *result;
    ucontext_t caller;
} segment_call;

/* makecontext passes int arguments only: the call travels through this thread-local. */
static SP_TLS segment_call *pending_segment_call;

static void segment_entry(void)
{
    segment_call *call = pending_segment_call;
    call->result = _PyEval_EvalFrameDefault(call->tstate, call->frame, call->throwflag);
}

static uintptr_t thread_stack_floor(void)
{
    pthread_attr_t attr;
    void *base = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return 0;
    int got = pthread_attr_getstack(&attr, &base, &size);
    pthread_attr_destroy(&attr);
    if (got != 0 || !base)
        return 0;
    size_t reserve = size / 4 < STACK_RESERVE ? size / 4 : STACK_RESERVE;
    return (uintptr_t)base + reserve;
}

/* Returns true with *result set when the frame was evaluated on a new segment; false when
 * there is room on the current stack (or no segment could be had: then plain Python's
 * behaviour, whatever it is, follows). */
static bool eval_on_new_segment(PyThreadState *tstate, sp_eval_frame *frame, int throwflag,
                                PyObject **result)
{
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (eval_stack_floor == UINTPTR_MAX) {
        eval_stack_floor = thread_stack_floor();
        if (here >= eval_stack_floor)
            return false;
    }
    void *segment = mmap(NULL, STACK_SEGMENT_SIZE, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (segment == MAP_FAILED)
        return false;
    segment_call call = {.tstate = tstate, .frame = frame, .throwflag = throwflag};
    ucontext_t context;
    if (getcontext(&context) != 0) {
        munmap(segment, STACK_SEGMENT_SIZE);
        return false;
    }
    context.uc_stack.ss_sp = segment;
    context.uc_stack.ss_size = STACK_SEGMENT_SIZE;
    context.uc_link = &call.caller;
    makecontext(&context, segment_entry, 0);
    uintptr_t outer_floor = eval_stack_floor;
    segment_call *outer_call = pending_segment_call;
    eval_stack_floor = (uintptr_t)segment + STACK_RESERVE;
    pending_segment_call = &call;
    int switched = swapcontext(&call.caller, &context);
    eval_stack_floor = outer_floor;
    pending_segment_call = outer_call;
    munmap(segment, STACK_SEGMENT_SIZE);
    if (switched != 0)
        return false;
    *result = call.result;
    return true;
}

static PyObject *eval_default(PyThreadState *tstate, sp_eval_frame *frame, int throwflag)
{
    PyObject *result;
    if ((uintptr_t)__builtin_frame_address(0) < eval_stack_floor &&
        eval_on_new_segment(tstate, frame, throwflag, &result))
        return result;
    return _PyEval_EvalFrameDefault(tstate, frame, throwflag);
}

/* ---- subscripts past the hook (CPython 3.11.0-3.11.3) ------------------------------------
 * Once a code object is quickened, a subscript whose container's class has a Python
 * __getitem__ specialises (at its first execution) into BINARY_SUBSCR_GETITEM, which pushes
 * the __getitem__ frame itself instead of evaluating it through the hook: the call would not be
 * seen and its time would land in the caller. 3.11.4 made the specialiser respect PEP 523
 * (gh-104405). On the releases before, the code objects the hook sees never specialise their
 * subscripts: at first sight, code with a subscript that is not yet quickened is marked as
 * quickened (co_warmup 0) so that it never is, and stays in its generic instructions; code
 * quickened before (it ran before the measurement or while instrumentation was off) gets its
 * subscripts back to the generic BINARY_SUBSCR, which no later execution specialises again.
 * Code without subscripts keeps its specialisations; calls are not specialised under the hook
 * anyway (3.11 checks for PEP 523 there). Measured (benchmarks/overhead.py, 3.11.2, oo_*):
 * 0.23 of cProfile's extra time, where the profile hook, which sees these calls too, costs
 * 0.73 (it puts 3.11 into its tracing mode, which runs no specialised instruction at all). */
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
#define SP_EVAL_SUBSCRIPT_GUARD 1
/* 3.11's opcode tables (which instruction each specialised one stands for, how many inline
 * cache words follow it), our own copy: the interpreter does not export its own. Its
 * bytecode does not change within 3.11.x. */
#define NEED_OPCODE_TABLES
#define Py_BUILD_CORE
#include <internal/pycore_opcode.h>
#undef Py_BUILD_CORE
#undef NEED_OPCODE_TABLES

/* Set at registration from the running interpreter's version (an extension built with one
 * 3.11.x runs on any other): one flag for the one interpreter hook. */
static bool subscripts_stay_generic;

static void keep_subscripts_generic(PyCodeObject *code)
{
    _Py_CODEUNIT *instructions = _PyCode_CODE(code);
    Py_ssize_t count = Py_SIZE(code);
    bool quickened = code->co_warmup == 0, subscripts = false;
    for (Py_ssize_t i = 0; i < count; i++) {
        int generic = _PyOpcode_Deopt[_Py_OPCODE(instructions[i])];
        if (generic == BINARY_SUBSCR) {
            subscripts = true;
            if (!quickened)
                break;
            _Py_SET_OPCODE(instructions[i], BINARY_SUBSCR);
        }
        i += _PyOpcode_Caches[generic]; /* the instruction's inline cache is no instruction */
    }
    /* Code without subscripts keeps all its specialisations. */
    if (subscripts && !quickened)
        code->co_warmup = 0;
}
#else
#define SP_EVAL_SUBSCRIPT_GUARD 0
#endif

static PyObject *eval_frame(PyThreadState *tstate, sp_eval_frame *frame, int throwflag)
{
    sp_location *loc = event_location();
    PyCodeObject *code = EVAL_FRAME_CODE(frame);
    uint32_t region;
    int known = CODE_FILTERED;
#if SP_EVAL_SUBSCRIPT_GUARD
    if (subscripts_stay_generic && loc && cached_region(code, &region) == CODE_UNKNOWN)
        keep_subscripts_generic(code);
#endif
    if (!loc || EVAL_FRAME_CREATES_GENERATOR(frame) ||
        !(known = code_region(code, EVAL_FRAME_OBJECT(frame), EVAL_FRAME_GLOBALS(frame), &region)))
        return eval_default(tstate, frame, throwflag);
    /* The clock is read once the frame is known to be recorded: a filtered function's
     * call costs the cache lookup only, and the lookup is not part of the callee's time. */
    uint64_t time = sp_clock_now();
    sp_enter(loc, region, (uintptr_t)code, time);
    if (known == CODE_LINES) {
        /* A resumed generator continues a line no line event announces: its time until the
         * next line is not attributed. */
        sp_python_lines_begin(loc, code, region, 0, time);
        sp_python_hooks_lines_on();
    }
    PyObject *result = eval_default(tstate, frame, throwflag);
    time = sp_clock_now();
    /* The location may have gone (the measurement finalized inside this call). */
    loc = event_location();
    if (known == CODE_LINES) {
        sp_python_hooks_lines_off();
        if (loc)
            sp_python_lines_end(loc, code, time);
    }
    if (loc)
        sp_leave(loc, (uintptr_t)code, time);
    return result;
}

int sp_python_eval_register(void)
{
    PyInterpreterState *interp = PyInterpreterState_Get();
    _PyFrameEvalFunction current = _PyInterpreterState_GetEvalFrameFunc(interp);
    if (current != _PyEval_EvalFrameDefault && current != (_PyFrameEvalFunction)eval_frame) {
        /* Another tool (a debugger) evaluates frames: fall back to the profile hook. */
        sp_py.kind = SP_INSTRUMENTER_PROFILE;
        sp_python_hooks_set_all_threads(true);
        return 0;
    }
    previous_eval_frame = current;
#if SP_EVAL_SUBSCRIPT_GUARD
    subscripts_stay_generic = Py_Version < 0x030B0400;
#endif
    _PyInterpreterState_SetEvalFrameFunc(interp, (_PyFrameEvalFunction)eval_frame);
    return 0;
}

void sp_python_eval_unregister(void)
{
    _PyInterpreterState_SetEvalFrameFunc(PyInterpreterState_Get(),
                                         previous_eval_frame ? previous_eval_frame
                                                             : _PyEval_EvalFrameDefault);
}
#endif

