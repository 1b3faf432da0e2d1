/* The original bindings' instrumenter types: C-level profile and trace hooks
 * (PyEval_SetProfile / PyEval_SetTrace), per thread before 3.12. */
#include "adapters/python/internal.h"

static int hook(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    (void)obj;
    (void)arg;
    if (what != PyTrace_CALL && what != PyTrace_RETURN)
        return 0;
    uint64_t time = sp_clock_now();
    sp_location *loc = event_location();
    if (!loc)
        return 0;
#if PY_VERSION_HEX >= 0x030B0000
    PyCodeObject *code = PyFrame_GetCode(frame);
#else
    PyCodeObject *code = frame->f_code;
#endif
    uint32_t region;
    if (what == PyTrace_CALL) {
        if (code_region(code, frame, NULL, &region))
            sp_enter(loc, region, (uintptr_t)code, time);
    } else if ((loc->depth && loc->stack[loc->depth - 1].key == (uintptr_t)code) ||
               cached_region(code, &region) != 0) {
        /* A filtered function's return needs no search through the stack. */
        sp_leave(loc, (uintptr_t)code, time);
    }
#if PY_VERSION_HEX >= 0x030B0000
    Py_DECREF(code);
#endif
    return 0;
}

void sp_python_hooks_set_all_threads(bool on)
{
    Py_tracefunc func = on ? hook : NULL;
#if PY_VERSION_HEX >= 0x030C0000
    if (sp_py.kind == SP_INSTRUMENTER_PROFILE)
        PyEval_SetProfileAllThreads(func, NULL);
    else
        PyEval_SetTraceAllThreads(func, NULL);
#else
    PyThreadState *self = PyThreadState_Get();
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(self->interp); ts;
         ts = PyThreadState_Next(ts)) {
        if (sp_py.kind == SP_INSTRUMENTER_PROFILE)
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
    if (sp_py.kind == SP_INSTRUMENTER_PROFILE)
        PyEval_SetProfile(hook, NULL);
    else if (sp_py.kind == SP_INSTRUMENTER_TRACE)
        PyEval_SetTrace(hook, NULL);
#endif
}

