/* The original bindings' instrumenter types: C-level profile and trace hooks
 * (PyEval_SetProfile / PyEval_SetTrace), per thread before 3.12. */
#include "adapters/python/internal.h"

#if PY_VERSION_HEX < 0x030A0000
/* 3.9 counts the threads with a trace function in the interpreter's ceval state (only in
 * its internal headers): line events are only delivered while it is positive. */
#define Py_BUILD_CORE
#include <internal/pycore_interp.h>
#undef Py_BUILD_CORE
#endif

static inline PyCodeObject *frame_code(PyFrameObject *frame)
{
#if PY_VERSION_HEX >= 0x030B0000
    return PyFrame_GetCode(frame); /* a new reference */
#else
    Py_INCREF(frame->f_code);
    return frame->f_code;
#endif
}

/* A C function called from Python (the profile hook's c_call, c_return and c_exception;
 * `callable` is a builtin function object, a method descriptor already bound): its region,
 * when its caller is recorded. */
static int c_event(PyFrameObject *frame, int what, PyObject *callable)
{
    uint64_t time = what == PyTrace_C_CALL ? 0 : sp_clock_now();
    uintptr_t key = c_callable_key(callable);
    int wrapped = key ? sp_python_wrapped_index(key) : -1;
    if (wrapped >= 0 && what == PyTrace_C_CALL)
        sp_python_wrap_announce(wrapped);
    sp_location *loc = key ? event_location() : NULL;
    if (what != PyTrace_C_CALL) {
        if (loc && loc->depth && loc->stack[loc->depth - 1].key == key)
            sp_leave(loc, key, time);
        if (wrapped >= 0) {
            /* A deferred sys.setprofile happens now; its error is the call's. */
            PyObject *r = sp_python_wrapped_returned(wrapped);
            if (!r)
                return -1;
            Py_DECREF(r);
        }
        return 0;
    }
    if (!loc)
        return 0;
    PyCodeObject *code = frame_code(frame);
    uint32_t region;
    int caller = code_region(code, frame, NULL, &region);
    Py_DECREF(code);
    if (caller && c_region(key, callable, &region))
        sp_enter(loc, region, key, sp_clock_now());
    return 0;
}

int sp_python_profile_hook(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    (void)obj;
    if (what == PyTrace_C_CALL || what == PyTrace_C_RETURN || what == PyTrace_C_EXCEPTION)
        return sp_py.c_calls ? c_event(frame, what, arg) : 0;
    /* With frame evaluation, this hook is there for the C calls only. */
    if (sp_py.kind == SP_INSTRUMENTER_EVAL)
        return 0;
    if (what != PyTrace_CALL && what != PyTrace_RETURN && what != PyTrace_LINE)
        return 0;
    /* A call's clock is read once the function is known to be recorded (the lookup, at its
     * first call the region's definition, is not the callee's time); a return's at once. */
    uint64_t time = what == PyTrace_CALL ? 0 : sp_clock_now();
    sp_location *loc = event_location();
    if (!loc)
        return 0;
    PyCodeObject *code = frame_code(frame);
    uint32_t region;
    if (what == PyTrace_LINE) {
        /* Only the trace instrumenter sees lines: those of chosen frames count. */
        sp_python_lines_line(loc, code, (uint32_t)PyFrame_GetLineNumber(frame), time);
    } else if (what == PyTrace_CALL) {
        int known = code_region(code, frame, NULL, &region);
        if (known) {
            time = sp_clock_now();
            sp_enter(loc, region, (uintptr_t)code, time);
        }
        if (known == CODE_LINES) {
            sp_python_lines_begin(loc, code, region, 0, time);
            if (sp_py.kind == SP_INSTRUMENTER_PROFILE)
                sp_python_hooks_lines_on();
        }
    } else {
        int cached = cached_region(code, &region);
        /* A filtered function's return needs no search through the stack. */
        if (!(loc->depth && loc->stack[loc->depth - 1].key == (uintptr_t)code) &&
            cached == CODE_FILTERED) {
            Py_DECREF(code);
            return 0;
        }
        if (cached == CODE_LINES) {
            sp_python_lines_end(loc, code, time);
            if (sp_py.kind == SP_INSTRUMENTER_PROFILE)
                sp_python_hooks_lines_off();
        }
        sp_leave(loc, (uintptr_t)code, time);
    }
    Py_DECREF(code);
    return 0;
}

/* ---- line events while a chosen frame runs (before 3.12) ----------------------------------
 * A C trace function of ours on the calling thread, installed when the first chosen frame of
 * the thread starts and the thread's own one (a debugger's, coverage's) put back when the last
 * one ends: other code runs untraced. */

#if PY_VERSION_HEX < 0x030C0000
static int line_trace(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    (void)obj;
    (void)arg;
    if (what != PyTrace_LINE)
        return 0;
    uint64_t time = sp_clock_now();
    sp_location *loc = event_location();
    if (!loc)
        return 0;
    PyCodeObject *code = frame_code(frame);
    sp_python_lines_line(loc, code, (uint32_t)PyFrame_GetLineNumber(frame), time);
    Py_DECREF(code);
    return 0;
}

/* Per thread: how many chosen frames run, and whether our trace function is installed.
 * Thread-local because C trace functions are per thread before 3.12. */
static SP_TLS struct {
    uint32_t depth;
    bool installed;
} traced;

/* Installs a C trace function on the calling thread the way PyEval_SetTrace does, minus
 * what makes it unusable on every call of a chosen function: the "sys.settrace" audit event
 * (the program's audit hooks would see it, and run Python code of theirs inside our hook) and
 * the release of a previous trace object (we only install over none). */
static void install_trace(PyThreadState *tstate, Py_tracefunc func)
{
#if PY_VERSION_HEX < 0x030A0000
    tstate->interp->ceval.tracing_possible += (func != NULL) - (tstate->c_tracefunc != NULL);
#endif
    tstate->c_tracefunc = func;
    tstate->c_traceobj = NULL;
    bool on = tstate->tracing == 0 && (func != NULL || tstate->c_profilefunc != NULL);
#if PY_VERSION_HEX >= 0x030B0000
    tstate->cframe->use_tracing = on ? 255 : 0;
#elif PY_VERSION_HEX >= 0x030A0000
    tstate->cframe->use_tracing = on;
#else
    tstate->use_tracing = on;
#endif
}

void sp_python_hooks_lines_on(void)
{
    if (traced.depth++)
        return;
    PyThreadState *tstate = PyThreadState_Get();
    /* A trace function of the program's own (a debugger, coverage) wins: the chosen frame's
     * lines are then not profiled, and the program's tracer keeps working. */
    traced.installed = tstate->c_tracefunc == NULL && tstate->c_traceobj == NULL;
    if (traced.installed)
        install_trace(tstate, line_trace);
}

void sp_python_hooks_lines_off(void)
{
    if (!traced.depth || --traced.depth)
        return;
    PyThreadState *tstate = PyThreadState_Get();
    /* Taken away only while it is still ours: a tracer the program installed meanwhile
     * (sys.settrace inside a chosen function) stays. */
    if (traced.installed && tstate->c_tracefunc == line_trace && tstate->c_traceobj == NULL)
        install_trace(tstate, NULL);
    traced.installed = false;
}
#else
/* 3.12+: chosen code objects get sys.monitoring LINE events of their own. */
void sp_python_hooks_lines_on(void)
{
}

void sp_python_hooks_lines_off(void)
{
}
#endif

/* The trace hook (cTrace) sees no C calls; the profile hook sees them, and with frame
 * evaluation it is there for them alone. */
void sp_python_hooks_set_all_threads(bool on)
{
    Py_tracefunc func = on ? sp_python_profile_hook : NULL;
#if PY_VERSION_HEX >= 0x030C0000
    if (sp_py.kind != SP_INSTRUMENTER_TRACE)
        PyEval_SetProfileAllThreads(func, NULL);
    else
        PyEval_SetTraceAllThreads(func, NULL);
#else
    PyThreadState *self = PyThreadState_Get();
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(self->interp); ts;
         ts = PyThreadState_Next(ts)) {
        if (sp_py.kind != SP_INSTRUMENTER_TRACE)
            _PyEval_SetProfile(ts, func, NULL);
        else
            _PyEval_SetTrace(ts, func, NULL);
    }
    PyErr_Clear();
#endif
}

void sp_python_thread_started(void)
{
#if PY_VERSION_HEX < 0x030C0000
    if (!sp_py.registered)
        return;
    if (sp_py.kind == SP_INSTRUMENTER_PROFILE ||
        (sp_py.kind == SP_INSTRUMENTER_EVAL && sp_py.c_calls))
        PyEval_SetProfile(sp_python_profile_hook, NULL);
    else if (sp_py.kind == SP_INSTRUMENTER_TRACE)
        PyEval_SetTrace(sp_python_profile_hook, NULL);
#endif
}

