/* sys.monitoring (3.12+): PY_START/RESUME/THROW are enters, PY_RETURN/YIELD/UNWIND leaves;
 * a filtered function's events are switched off for good (DISABLE). With C calls recorded,
 * CALL of a C function is an enter and its C_RETURN/C_RAISE the leave. */
#include "adapters/python/internal.h"

#if SP_HAVE_MONITORING
static PyObject *switch_off(void)
{
    sp_py.disabled_any = true;
    sp_py.disabled_generation = sp_py.generation30;
    return Py_NewRef(sp_py.disable);
}

/* A function starts or a generator/coroutine resumes. Only local events may answer DISABLE
 * for a filtered function. A chosen function's line profile starts too: a resumed frame
 * continues the line it yielded at. */
__attribute__((always_inline)) static inline PyObject *enter_event(PyObject *const *args,
                                                                   size_t nargsf, bool resumed,
                                                                   bool may_disable)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    sp_location *loc = event_location();
    if (!loc || nargs < 1)
        Py_RETURN_NONE;
    PyCodeObject *code = (PyCodeObject *)args[0];
    uint32_t region;
    int known = code_region(code, NULL, NULL, &region);
    if (!known)
        return may_disable ? switch_off() : Py_NewRef(Py_None);
    /* Read once the function is known to be recorded: the lookup is not the callee's time. */
    uint64_t time = sp_clock_now();
    sp_enter(loc, region, (uintptr_t)code, time);
    if (__builtin_expect(known == CODE_LINES, 0)) {
        int line = 0;
        if (resumed && nargs >= 2) {
            long offset = PyLong_AsLong(args[1]);
            line = offset >= 0 && offset <= INT32_MAX ? PyCode_Addr2Line(code, (int)offset) : 0;
            PyErr_Clear();
        }
        sp_python_lines_begin(loc, code, region, line > 0 ? (uint32_t)line : 0, time);
    }
    Py_RETURN_NONE;
}

/* PY_START. */
static PyObject *on_py_start(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    (void)self;
    (void)kwnames;
    return enter_event(args, nargsf, false, true);
}

/* PY_RESUME. */
static PyObject *on_py_resume(PyObject *self, PyObject *const *args, size_t nargsf,
                              PyObject *kwnames)
{
    (void)self;
    (void)kwnames;
    return enter_event(args, nargsf, true, true);
}

/* PY_THROW: resumed by throw(); not a local event. */
static PyObject *on_py_throw(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    (void)self;
    (void)kwnames;
    return enter_event(args, nargsf, true, false);
}

/* LINE, switched on for chosen code objects only. */
static PyObject *on_line(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    (void)self;
    (void)kwnames;
    uint64_t time = sp_clock_now();
    sp_location *loc = event_location();
    if (loc && PyVectorcall_NARGS(nargsf) >= 2) {
        long line = PyLong_AsLong(args[1]);
        if (line > 0 && line <= INT32_MAX)
            sp_python_lines_line(loc, (PyCodeObject *)args[0], (uint32_t)line, time);
        else
            PyErr_Clear();
    }
    Py_RETURN_NONE;
}

/* A function returns or yields, or an exception leaves it. A filtered function (cached as
 * such) needs no search through the stack; only local events may answer DISABLE for it. */
__attribute__((always_inline)) static inline PyObject *leave_event(PyObject *const *args, size_t nargsf, bool may_disable)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    uint64_t time = sp_clock_now();
    sp_location *loc = event_location();
    if (!loc || nargs < 1)
        Py_RETURN_NONE;
    PyObject *code = args[0];
    uint32_t region;
    if (!(loc->depth && loc->stack[loc->depth - 1].key == (uintptr_t)code) &&
        cached_region((PyCodeObject *)code, &region) == 0) {
        if (may_disable)
            return switch_off();
        Py_RETURN_NONE;
    }
    if (__builtin_expect(sp_python_line_frames != 0, 0))
        sp_python_lines_end(loc, (PyCodeObject *)code, time);
    sp_leave(loc, (uintptr_t)code, time);
    Py_RETURN_NONE;
}

/* PY_RETURN, PY_YIELD. */
static PyObject *on_py_leave(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    (void)self;
    (void)kwnames;
    return leave_event(args, nargsf, true);
}

/* PY_UNWIND: not a local event. */
static PyObject *on_py_unwind(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    (void)self;
    (void)kwnames;
    return leave_event(args, nargsf, false);
}

/* CALL: a C function called from a recorded function starts. A call site whose callee is a
 * filtered C function, or whose caller is filtered out (the tool's own code among them), is
 * switched off for good (DISABLE), like a filtered function's PY_START: a filtered call costs
 * nothing after its first. A site that calls Python functions stays on (it may call a C
 * function next time); so does one that calls our sys.setprofile, whose C_RETURN it needs. */
static PyObject *on_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    (void)self;
    (void)kwnames;
    if (PyVectorcall_NARGS(nargsf) < 3)
        Py_RETURN_NONE;
    uintptr_t key = c_callable_key(args[2]);
    if (!key)
        Py_RETURN_NONE;
    int wrapped = sp_python_wrapped_index(key);
    if (wrapped >= 0)
        sp_python_wrap_announce(wrapped);
    sp_location *loc = event_location();
    if (!loc)
        Py_RETURN_NONE;
    uint32_t region;
    if (!code_region((PyCodeObject *)args[0], NULL, NULL, &region) ||
        !c_region(key, args[2], &region))
        return wrapped >= 0 ? Py_NewRef(Py_None) : switch_off();
    sp_enter(loc, region, key, sp_clock_now());
    Py_RETURN_NONE;
}

/* C_RETURN, C_RAISE: the C function's region ends when it is the innermost one (a callable
 * that is not recorded never is). */
static PyObject *on_c_leave(PyObject *self, PyObject *const *args, size_t nargsf,
                            PyObject *kwnames)
{
    (void)self;
    (void)kwnames;
    uint64_t time = sp_clock_now();
    if (PyVectorcall_NARGS(nargsf) < 3)
        Py_RETURN_NONE;
    uintptr_t key = c_callable_key(args[2]);
    sp_location *loc = event_location();
    if (loc && loc->depth && key && loc->stack[loc->depth - 1].key == key)
        sp_leave(loc, key, time);
    int wrapped = sp_python_wrapped_index(key);
    if (wrapped >= 0)
        return sp_python_wrapped_returned(wrapped);
    Py_RETURN_NONE;
}

static const vectorcallfunc monitoring_callbacks[] = {on_py_start, on_py_resume, on_py_throw,
                                                      on_py_leave, on_py_unwind, on_line,
                                                      on_call, on_c_leave};

static const struct {
    const char *event;
    int callback;
    bool global; /* on for every code object; else switched on per code object */
    bool c_call; /* only while C functions are recorded */
} monitoring_events[] = {
    {"PY_START", 0, true, false}, {"PY_RESUME", 1, true, false}, {"PY_THROW", 2, true, false},
    {"PY_RETURN", 3, true, false}, {"PY_YIELD", 3, true, false}, {"PY_UNWIND", 4, true, false},
    {"LINE", 5, false, false},
    {"CALL", 6, true, true}, {"C_RETURN", 7, true, true}, {"C_RAISE", 7, true, true},
};

static long event_bit(const char *name)
{
    PyObject *events = PyObject_GetAttrString(sp_py.monitoring, "events");
    PyObject *bit = events ? PyObject_GetAttrString(events, name) : NULL;
    long value = bit ? PyLong_AsLong(bit) : -1;
    Py_XDECREF(bit);
    Py_XDECREF(events);
    return value;
}

int sp_python_monitoring_set_events(long mask)
{
    PyObject *r = PyObject_CallMethod(sp_py.monitoring, "set_events", "il", sp_py.tool_id, mask);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static int monitoring_acquire_tool(void)
{
    if (sp_py.tool_id >= 0)
        return 0;
    /* Ids 3 and 4 are the ones CPython leaves to tools of no standard kind. Not
     * PROFILER_ID (2) first: cProfile.enable() refuses to run while another tool holds it
     * ("Another profiling tool is already active"), and programs run cProfile themselves. */
    static const int candidates[] = {3, 4, 2};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        PyObject *r = PyObject_CallMethod(sp_py.monitoring, "use_tool_id", "is", candidates[i],
                                          "scorep");
        if (r) {
            Py_DECREF(r);
            sp_py.tool_id = candidates[i];
            break;
        }
        PyErr_Clear();
    }
    if (sp_py.tool_id < 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "no free sys.monitoring tool id (ids 3, 4 and 2 are taken by other tools)");
        return -1;
    }
    for (size_t i = 0; i < sizeof monitoring_events / sizeof monitoring_events[0]; i++) {
        long bit = event_bit(monitoring_events[i].event);
        vectorcallfunc call = monitoring_callbacks[monitoring_events[i].callback];
        PyObject *fn = sp_python_callback_new(call);
        PyObject *r = bit >= 0 && fn ? PyObject_CallMethod(sp_py.monitoring, "register_callback",
                                                         "ilO", sp_py.tool_id, bit, fn)
                                     : NULL;
        Py_XDECREF(fn);
        if (!r)
            return -1;
        Py_DECREF(r);
    }
    return 0;
}

int sp_python_monitoring_line_events(PyCodeObject *code)
{
    if (monitoring_acquire_tool() != 0)
        return -1;
    if (!sp_py.line_event_codes) {
        sp_py.line_event_codes = PyList_New(0);
        if (!sp_py.line_event_codes)
            return -1;
    }
    PyObject *r = PyObject_CallMethod(sp_py.monitoring, "set_local_events", "iOl", sp_py.tool_id,
                                      (PyObject *)code, event_bit("LINE"));
    if (!r)
        return -1;
    Py_DECREF(r);
    return PyList_Append(sp_py.line_event_codes, (PyObject *)code);
}

/* The LINE events switched on in this measurement go off again. */
static void line_events_off(void)
{
    if (!sp_py.line_event_codes)
        return;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(sp_py.line_event_codes); i++) {
        PyObject *r = PyObject_CallMethod(sp_py.monitoring, "set_local_events", "iOi",
                                          sp_py.tool_id,
                                          PyList_GET_ITEM(sp_py.line_event_codes, i), 0);
        Py_XDECREF(r);
    }
    PyErr_Clear();
    Py_CLEAR(sp_py.line_event_codes);
}

void sp_python_monitoring_release(void)
{
    sp_python_wrappers_remove();
    if (sp_py.tool_id < 0)
        return;
    line_events_off();
    sp_python_monitoring_set_events(0);
    /* The callbacks stay registered: register_callback is an audit event, and the program's
     * audit hooks, installed after the measurement started, would see its end (test_audit).
     * With no event on they are never called; a tool that takes this id later registers
     * its own, and one that does not finds ours doing nothing outside a measurement. */
    PyObject *r = PyObject_CallMethod(sp_py.monitoring, "free_tool_id", "i", sp_py.tool_id);
    Py_XDECREF(r);
    PyErr_Clear();
    sp_py.tool_id = -1;
}

int sp_python_monitoring_register(void)
{
    if (monitoring_acquire_tool() != 0)
        return -1;
    if (sp_py.disabled_any && sp_py.disabled_generation != sp_py.generation30) {
        /* Events switched off in an earlier measurement may belong to functions that this
         * one records (another filter, or a new generation of region ids). Within one
         * measurement they stay off: its filter decisions do not change. */
        PyObject *r = PyObject_CallMethod(sp_py.monitoring, "restart_events", NULL);
        if (!r)
            return -1;
        Py_DECREF(r);
        sp_py.disabled_any = false;
    }
    long mask = 0;
    for (size_t i = 0; i < sizeof monitoring_events / sizeof monitoring_events[0]; i++) {
        long bit = event_bit(monitoring_events[i].event);
        if (bit < 0)
            return -1;
        if (monitoring_events[i].global && (!monitoring_events[i].c_call || sp_py.c_calls))
            mask |= bit;
    }
    if (sp_py.c_calls)
        sp_python_wrappers_install();
    return sp_python_monitoring_set_events(mask);
}
#endif

