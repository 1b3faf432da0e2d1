/* Garbage collections (gc.callbacks, SCOREP_PYTHON_GC): a collection is the region gc:collect
 * in the call path where it runs, its generation a parameter.
 *
 * The callback is an object whose vectorcall is the C function itself
 * (sp_python_callback_new), as for the sys.monitoring callbacks: the collector calls it
 * without a Python frame and without the interpreter's recursion check. A Python function
 * there failed with RecursionError when a collection came while the program ran at its
 * recursion limit (CPython's test_exceptions recurses to it on purpose): the collector
 * reported the error as unraisable, and the program's own unraisable and audit hooks saw it.
 * It never raises. */
#include "adapters/python/internal.h"

/* The key of the info dict, made once: the callback runs inside a collection and should
 * allocate nothing of its own. Module-level because the callback has no other state. */
static PyObject *generation_key;

static void gc_start(PyObject *info)
{
    uint64_t time = sp_clock_now();
    sp_location *loc = sp_python_location();
    if (!loc)
        return;
    bool excluded;
    uint32_t region = sp_region_define_named("gc:collect", "", -1, SP_REGION_USER, &excluded);
    if (region == SP_NO_ID || excluded)
        return;
    sp_enter(loc, region, SP_KEY_NAMED | region, time);
    PyObject *generation = PyDict_Check(info) ? PyDict_GetItem(info, generation_key) : NULL;
    long value = generation ? PyLong_AsLong(generation) : -1;
    if (value == -1)
        PyErr_Clear();
    uint32_t parameter = sp_parameter_define("generation", SP_PARAM_INT64);
    if (parameter != SP_NO_ID)
        sp_parameter_int(loc, parameter, value, time);
}

static void gc_stop(void)
{
    uint64_t time = sp_clock_now();
    sp_location *loc = sp_python_location();
    if (!loc)
        return;
    bool excluded;
    uint32_t region = sp_region_find_named("gc:collect", SP_REGION_USER, &excluded);
    if (region != SP_NO_ID && !excluded)
        (void)sp_leave(loc, SP_KEY_NAMED | region, time);
}

/* callback(phase, info): phase "start" or "stop". */
static PyObject *gc_callback_call(PyObject *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames)
{
    (void)self;
    if (PyVectorcall_NARGS(nargsf) >= 2 && !kwnames && PyUnicode_Check(args[0])) {
        if (PyUnicode_CompareWithASCIIString(args[0], "start") == 0)
            gc_start(args[1]);
        else
            gc_stop();
    }
    Py_RETURN_NONE;
}

PyObject *sp_python_gc_callback_new(void)
{
    if (!generation_key && !(generation_key = PyUnicode_InternFromString("generation")))
        return NULL;
    return sp_python_callback_new(gc_callback_call);
}
