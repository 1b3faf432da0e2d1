/* The Python adapter's control (start, stop, switching instrumentation on and off) and
 * the threads' locations. */
#include "adapters/python/internal.h"

#include <stdlib.h>
#include <string.h>

sp_python_adapter sp_py = {.code_extra_index = -1,
#if SP_HAVE_MONITORING
                           .tool_id = -1
#endif
};

/* ---- locations ------------------------------------------------------------------------ */

/* The thread's name from threading._active (the main thread, threads started before the
 * measurement); threads started during it are named by scorep's threading hook. */
PyObject *sp_python_thread_name(unsigned long ident)
{
    PyObject *modules = PyImport_GetModuleDict();
    PyObject *mod = modules ? PyDict_GetItemString(modules, "threading") : NULL;
    if (!mod)
        return NULL;
    PyObject *active = PyObject_GetAttrString(mod, "_active");
    if (!active) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *key = PyLong_FromUnsignedLong(ident);
    PyObject *thread = key && PyDict_Check(active) ? PyDict_GetItem(active, key) : NULL;
    PyObject *name = thread ? PyObject_GetAttrString(thread, "_name") : NULL;
    Py_XDECREF(key);
    Py_DECREF(active);
    if (!name || !PyUnicode_Check(name)) {
        Py_XDECREF(name);
        PyErr_Clear();
        return NULL;
    }
    return name;
}

sp_location *sp_python_attach_thread(void)
{
    unsigned long ident = PyThread_get_thread_ident();
    char fallback[64];
    const char *name = NULL;
    PyObject *py_name = NULL;
    sp_thread.busy++;
    saved_exception saved = exception_save();
    if (sp_measurement_running() && sp_measurement_config()->all_threads) {
        py_name = sp_python_thread_name(ident);
        name = py_name ? PyUnicode_AsUTF8(py_name) : NULL;
        if (!name) {
            PyErr_Clear();
            snprintf(fallback, sizeof fallback, "Thread %lu", ident);
            name = fallback;
        }
    }
    PyThreadState *ts = PyGILState_GetThisThreadState();
    sp_location *loc = ts ? sp_location_attach_keyed(sp_python_key_of(ts), ident, name, false)
                          : sp_location_attach(ident, name, false);
    Py_XDECREF(py_name);
    exception_restore(saved);
    sp_thread.busy--;
    return loc;
}

sp_location *sp_python_location(void)
{
    if (sp_location_cache_valid())
        return sp_thread.location;
    return sp_python_attach_thread();
}

sp_location *sp_python_attach_named(const char *name)
{
    PyThreadState *ts = PyGILState_GetThisThreadState();
    unsigned long ident = PyThread_get_thread_ident();
    return ts ? sp_location_attach_keyed(sp_python_key_of(ts), ident, name, true)
              : sp_location_attach(ident, name, true);
}

/* ---- control -------------------------------------------------------------------------- */

/* Whether co_extra has the layout code_extra() reads directly: a value stored through the
 * API into a fresh code object must come back the same way. Otherwise every lookup goes
 * through the API. Returns -1 with a Python exception when no code object can be made. */
static int check_code_extra_layout(void)
{
    PyCodeObject *probe = PyCode_NewEmpty("scorep", "probe", 1);
    if (!probe)
        return -1;
    void *marker = (void *)(uintptr_t)0x5C0AE9u;
    sp_py.code_extra_direct = false;
    if (sp_code_set_extra((PyObject *)probe, sp_py.code_extra_index, marker) == 0) {
        sp_py.code_extra_direct = true;
        sp_py.code_extra_direct = code_extra(probe) == marker;
        sp_code_set_extra((PyObject *)probe, sp_py.code_extra_index, NULL);
    }
    PyErr_Clear();
    Py_DECREF(probe);
    return 0;
}

int sp_python_adapter_init(void)
{
    sp_py.code_extra_index = sp_request_code_extra_index(NULL);
    if (sp_py.code_extra_index < 0) {
        PyErr_SetString(PyExc_RuntimeError, "no code object extra slot left");
        return -1;
    }
    if (check_code_extra_layout() != 0)
        return -1;
#if SP_HAVE_MONITORING
    PyObject *sys = PyImport_ImportModule("sys");
    sp_py.monitoring = sys ? PyObject_GetAttrString(sys, "monitoring") : NULL;
    Py_XDECREF(sys);
    sp_py.disable = sp_py.monitoring ? PyObject_GetAttrString(sp_py.monitoring, "DISABLE") : NULL;
    if (!sp_py.disable)
        return -1;
#endif
    return 0;
}

static void free_exclude_dirs(void)
{
    for (size_t i = 0; i < sp_py.exclude_count; i++)
        free(sp_py.exclude_dirs[i]);
    free(sp_py.exclude_dirs);
    sp_py.exclude_dirs = NULL;
    sp_py.exclude_count = 0;
}

int sp_python_adapter_start(const char *const *exclude_dirs, size_t exclude_count,
                            const char *cwd, sp_instrumenter_kind kind,
                            const char *const *line_patterns, size_t line_pattern_count,
                            const sp_config *config)
{
#if !SP_HAVE_MONITORING
    if (kind == SP_INSTRUMENTER_MONITORING) {
        PyErr_SetString(PyExc_ValueError, "sys.monitoring needs Python 3.12 or newer");
        return -1;
    }
#endif
#if !SP_HAVE_EVAL
    if (kind == SP_INSTRUMENTER_EVAL) {
        PyErr_SetString(PyExc_ValueError, "the frame evaluation instrumenter is for Python "
                                          "before 3.12; use monitoring");
        return -1;
    }
#endif
    free_exclude_dirs();
    free(sp_py.cwd);
    sp_py.cwd = strdup(cwd ? cwd : "/");
    sp_py.exclude_dirs = calloc(exclude_count ? exclude_count : 1, sizeof *sp_py.exclude_dirs);
    if (!sp_py.cwd || !sp_py.exclude_dirs) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < exclude_count; i++) {
        sp_py.exclude_dirs[i] = strdup(exclude_dirs[i]);
        if (!sp_py.exclude_dirs[i]) {
            PyErr_NoMemory();
            return -1;
        }
        sp_py.exclude_count = i + 1;
    }
    sp_py.kind = kind;
    sp_py.registered = false;
    sp_py.generation30 = sp_measurement_generation() & GENERATION_MASK;
    /* With unwinding, Python functions are seen through calling contexts and samples (when
     * there is a sampling event), never as events of their own. */
    sp_py.sampling = config->unwinding;
    sp_python_c_calls_start(config->c_calls && !config->unwinding);
    if (sp_python_lines_start(line_patterns, line_pattern_count) != 0)
        return -1;
    return sp_python_sampling_start(config->unwinding, config->sampling_period_us,
                                    config->sampling_cpu);
}

void sp_python_adapter_stop(void)
{
    sp_python_unregister();
    sp_python_sampling_stop();
    sp_python_lines_stop();
    sp_python_c_calls_stop();
#if SP_HAVE_MONITORING
    sp_python_monitoring_release();
#endif
    PyErr_Clear();
}

int sp_python_register(void)
{
    if (sp_py.registered)
        return 0;
    if (sp_py.sampling) {
        if (sp_python_sampling_register() != 0)
            return -1;
        sp_py.registered = true;
        return 0;
    }
    switch (sp_py.kind) {
    case SP_INSTRUMENTER_NONE:
        return 0;
    case SP_INSTRUMENTER_MONITORING:
#if SP_HAVE_MONITORING
        if (sp_python_monitoring_register() != 0)
            return -1;
        break;
#else
        return -1;
#endif
    case SP_INSTRUMENTER_PROFILE:
    case SP_INSTRUMENTER_TRACE:
        sp_python_hooks_set_all_threads(true);
        break;
    case SP_INSTRUMENTER_EVAL:
#if SP_HAVE_EVAL
        if (sp_python_eval_register() != 0)
            return -1;
        /* Frame evaluation sees no C calls: the profile hook's c_call events do. */
        if (sp_py.c_calls && sp_py.kind == SP_INSTRUMENTER_EVAL) {
            sp_python_hooks_set_all_threads(true);
            sp_python_wrappers_install();
        }
        break;
#else
        return -1;
#endif
    }
    sp_py.registered = true;
    return 0;
}

int sp_python_unregister(void)
{
    if (!sp_py.registered)
        return 0;
    sp_py.registered = false;
    if (sp_py.sampling) {
        sp_python_sampling_unregister();
        return 0;
    }
    switch (sp_py.kind) {
    case SP_INSTRUMENTER_NONE:
        break;
    case SP_INSTRUMENTER_MONITORING:
#if SP_HAVE_MONITORING
        return sp_python_monitoring_set_events(0);
#else
        break;
#endif
    case SP_INSTRUMENTER_PROFILE:
    case SP_INSTRUMENTER_TRACE:
        sp_python_hooks_set_all_threads(false);
        break;
    case SP_INSTRUMENTER_EVAL:
#if SP_HAVE_EVAL
        sp_python_eval_unregister();
        if (sp_py.c_calls) {
            sp_python_wrappers_remove();
            sp_python_hooks_set_all_threads(false);
        }
#endif
        break;
    }
    return 0;
}

bool sp_python_registered(void)
{
    return sp_py.registered;
}
