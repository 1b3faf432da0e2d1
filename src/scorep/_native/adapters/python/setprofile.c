/* A profiler that the program installs while C calls are recorded.
 *
 * On 3.12+ sys.setprofile is itself a sys.monitoring tool (PY_MONITORING_SYS_PROFILE_ID) whose
 * C_RETURN events come from the same instrumented CALL instructions as ours. A call site that
 * runs as an instrumented CALL (ours: we watch CALL everywhere) reports C_RETURN to every tool
 * that watches CALL there *after* the call, and `sys.setprofile(f)` has just made the legacy
 * profiler one: f sees the return of sys.setprofile without its call. Without us that site is
 * a plain CALL and f sees nothing. Before 3.12 C calls are recorded by our profile hook
 * (PyEval_SetProfile), and the interpreter decides before a C call whether to report it: the
 * call of sys.setprofile(f) is reported because our hook is there, its return to whatever
 * profile function is there after it, f. The pure-Python `profile` module fails its "Bad
 * return" assertion on that event (CPython's test_cprofile and test_profile).
 *
 * So while C calls are recorded, sys.setprofile and sys._setprofileallthreads are builtin
 * functions of ours with the originals' names, module and docstrings (cProfile and profile
 * name them as before). Called from a site whose call we saw and with no profiler on this
 * thread but ours, one defers the installation to our return event of that same call (on
 * 3.12+ the legacy tool is called before ours, tools running from the highest id down, and
 * is not yet installed then; before 3.12 the return is reported to our hook, still the
 * thread's profile function), so nothing reaches f, as without us. Any other call installs
 * at once. */
#include "adapters/python/internal.h"

static const char *const wrapped_names[SP_WRAP_COUNT] = {"setprofile", "_setprofileallthreads"};
static PyObject *wrap_setprofile(PyObject *self, PyObject *arg);
static PyObject *wrap_all_threads(PyObject *self, PyObject *arg);
/* Mutable and global: their docstrings are the originals', known only at run time, and a
 * builtin function points at its PyMethodDef for as long as it lives (past the measurement,
 * when the program kept it). */
PyMethodDef sp_python_wrapped_defs[SP_WRAP_COUNT] = {
    {"setprofile", wrap_setprofile, METH_O, NULL},
    {"_setprofileallthreads", wrap_all_threads, METH_O, NULL},
};
/* The originals (kept for good, see above) and our functions (while installed). Global: one
 * sys module per process. */
static PyObject *wrapped_originals[SP_WRAP_COUNT];
static PyObject *wrapped_ours[SP_WRAP_COUNT];

/* Per thread: which wrapper our CALL callback saw being called (1 + index; 0: none), and the
 * installation deferred to its C_RETURN. */
static _Thread_local int wrap_announced;
static _Thread_local int wrap_deferred;
static _Thread_local PyObject *wrap_deferred_arg;

void sp_python_wrap_announce(int which)
{
    wrap_announced = which + 1;
}

/* No profile function on this thread but ours. */
static bool only_our_profiler(void)
{
#if SP_HAVE_MONITORING
    return PyThreadState_Get()->c_profilefunc == NULL;
#else
    return PyThreadState_Get()->c_profilefunc == sp_python_profile_hook;
#endif
}

static PyObject *wrapped_call(int which, PyObject *arg)
{
    bool announced = wrap_announced == which + 1;
    wrap_announced = 0;
    if (announced && !wrap_deferred && only_our_profiler()) {
        wrap_deferred = which + 1;
        Py_INCREF(arg);
        wrap_deferred_arg = arg;
        Py_RETURN_NONE;
    }
    return PyObject_CallOneArg(wrapped_originals[which], arg);
}

static PyObject *wrap_setprofile(PyObject *self, PyObject *arg)
{
    (void)self;
    return wrapped_call(SP_WRAP_SETPROFILE, arg);
}

static PyObject *wrap_all_threads(PyObject *self, PyObject *arg)
{
    (void)self;
    return wrapped_call(SP_WRAP_ALL_THREADS, arg);
}

/* The call of wrapper `which` ended (C_RETURN or C_RAISE): a deferred installation happens
 * now; its error (an audit hook's refusal) is the call's, as without us. */
PyObject *sp_python_wrapped_returned(int which)
{
    wrap_announced = 0;
    if (wrap_deferred != which + 1)
        Py_RETURN_NONE;
    wrap_deferred = 0;
    PyObject *arg = wrap_deferred_arg;
    wrap_deferred_arg = NULL;
    PyObject *r = PyObject_CallOneArg(wrapped_originals[which], arg);
    Py_DECREF(arg);
    if (!r)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_NONE;
}

/* Our functions go into sys in place of the originals (once per measurement). */
void sp_python_wrappers_install(void)
{
    PyObject *sys = PyImport_ImportModule("sys");
    if (!sys) {
        PyErr_Clear();
        return;
    }
    PyObject *modname = PyUnicode_FromString("sys");
    for (int i = 0; i < SP_WRAP_COUNT && modname; i++) {
        if (wrapped_ours[i])
            continue;
        PyObject *orig = PyObject_GetAttrString(sys, wrapped_names[i]);
        if (!orig || !PyCFunction_Check(orig)) {
            Py_XDECREF(orig);
            PyErr_Clear();
            continue;
        }
        if (!wrapped_originals[i]) {
            wrapped_originals[i] = orig;
            sp_python_wrapped_defs[i].ml_doc = ((PyCFunctionObject *)orig)->m_ml->ml_doc;
        } else {
            Py_DECREF(orig);
        }
        PyObject *ours = PyCFunction_NewEx(&sp_python_wrapped_defs[i], sys, modname);
        if (ours && PyObject_SetAttrString(sys, wrapped_names[i], ours) == 0)
            wrapped_ours[i] = ours;
        else
            Py_XDECREF(ours);
        PyErr_Clear();
    }
    Py_XDECREF(modname);
    Py_DECREF(sys);
    PyErr_Clear();
}

/* The originals go back, where ours are still there. */
void sp_python_wrappers_remove(void)
{
    PyObject *sys = PyImport_ImportModule("sys");
    for (int i = 0; i < SP_WRAP_COUNT; i++) {
        if (!wrapped_ours[i])
            continue;
        if (sys) {
            PyObject *now = PyObject_GetAttrString(sys, wrapped_names[i]);
            if (now == wrapped_ours[i])
                PyObject_SetAttrString(sys, wrapped_names[i], wrapped_originals[i]);
            Py_XDECREF(now);
        }
        Py_CLEAR(wrapped_ours[i]);
    }
    Py_XDECREF(sys);
    PyErr_Clear();
}
