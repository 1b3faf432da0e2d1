#include "adapters/python.h"

#include <frameobject.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
/* 3.11 evaluates _PyInterpreterFrame structs; their layout is only in the internal headers. */
#define Py_BUILD_CORE
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE
#endif

#include "core/paths.h"

#if PY_VERSION_HEX >= 0x030C0000
#define SP_HAVE_MONITORING 1
/* 3.12 renamed the co_extra API (the old names remain, deprecated). */
#define sp_code_get_extra PyUnstable_Code_GetExtra
#define sp_code_set_extra PyUnstable_Code_SetExtra
#define sp_request_code_extra_index PyUnstable_Eval_RequestCodeExtraIndex
#else
#define SP_HAVE_MONITORING 0
#define sp_code_get_extra _PyCode_GetExtra
#define sp_code_set_extra _PyCode_SetExtra
#define sp_request_code_extra_index _PyEval_RequestCodeExtraIndex
#endif

/* The adapter's state. Global because interpreter hooks carry no context of ours, and
 * there is one interpreter and one measurement per process. */
static struct {
    Py_ssize_t code_extra_index; /* our slot in every code object (co_extra) */
    sp_instrumenter_kind kind;
    bool registered;
    char **exclude_dirs; /* code from below these is never recorded (scorep itself, ...) */
    size_t exclude_count;
    char *cwd;
    uint32_t generation31; /* the measurement generation, as stored in co_extra */
#if SP_HAVE_MONITORING
    int tool_id; /* -1 until we hold a sys.monitoring tool id */
    PyObject *monitoring;
    PyObject *disable; /* sys.monitoring.DISABLE */
    bool disabled_any; /* some event was switched off with DISABLE since the last restart */
    uint32_t disabled_generation; /* the measurement in which that happened */
#endif
} adapter = {.code_extra_index = -1,
#if SP_HAVE_MONITORING
             .tool_id = -1
#endif
};

/* ---- the program's pending exception ---------------------------------------------------
 * Hooks run while the program may have an exception pending (a generator entered through
 * throw() or close(), a frame unwinding). Whatever our slow paths call into Python must not
 * clear or replace it, so they save it first and put it back after (as _lsprof.c does). */

typedef struct {
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *exception;
#else
    PyObject *type, *value, *traceback;
#endif
} saved_exception;

static inline saved_exception exception_save(void)
{
    saved_exception saved;
#if PY_VERSION_HEX >= 0x030C0000
    saved.exception = PyErr_GetRaisedException();
#else
    PyErr_Fetch(&saved.type, &saved.value, &saved.traceback);
#endif
    return saved;
}

/* Drops any error our own calls left and reinstates the program's. */
static inline void exception_restore(saved_exception saved)
{
    if (PyErr_Occurred())
        PyErr_Clear();
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(saved.exception);
#else
    PyErr_Restore(saved.type, saved.value, saved.traceback);
#endif
}

/* ---- the code object -> region cache ---------------------------------------------------
 * co_extra holds [generation:31][filtered:1][region:32]: one load tells whether the code
 * object was seen in this measurement and what it is. */

#define EXTRA_FILTERED ((uintptr_t)1 << 32)

static inline int cached_region(PyCodeObject *code, uint32_t *region)
{
    void *extra = NULL;
    if (sp_code_get_extra((PyObject *)code, adapter.code_extra_index, &extra) < 0) {
        /* Only an invalid index fails here, and the program's exception stays. */
        return -1;
    }
    uintptr_t v = (uintptr_t)extra;
    if ((uint32_t)(v >> 33) != adapter.generation31)
        return -1;
    if (v & EXTRA_FILTERED)
        return 0;
    *region = (uint32_t)v;
    return 1;
}

static void cache_region(PyCodeObject *code, bool filtered, uint32_t region)
{
    uintptr_t v = ((uintptr_t)adapter.generation31 << 33) | (filtered ? EXTRA_FILTERED : 0) | region;
    saved_exception saved = exception_save();
    if (sp_code_set_extra((PyObject *)code, adapter.code_extra_index, (void *)v) < 0)
        PyErr_Clear();
    exception_restore(saved);
}

/* ---- naming: module[.Class]:function ---------------------------------------------------- */

#if PY_VERSION_HEX < 0x030B0000
/* Before 3.11 code objects have no qualname: find the function object that owns the code
 * (in the class of the first argument, or in the module) and take its __qualname__. */
static PyObject *function_code(PyObject *candidate)
{
    if (PyFunction_Check(candidate))
        return PyFunction_GET_CODE(candidate);
    if (Py_IS_TYPE(candidate, &PyStaticMethod_Type) || Py_IS_TYPE(candidate, &PyClassMethod_Type)) {
        PyObject *func = PyObject_GetAttrString(candidate, "__func__");
        if (!func) {
            PyErr_Clear();
            return NULL;
        }
        PyObject *code = PyFunction_Check(func) ? PyFunction_GET_CODE(func) : NULL;
        Py_DECREF(func);
        return code;
    }
    return NULL;
}

static PyObject *qualname_in_dict(PyObject *dict, PyCodeObject *code, int class_depth)
{
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(dict, &pos, &key, &value)) {
        if (function_code(value) == (PyObject *)code) {
            PyObject *func = PyFunction_Check(value) ? value : NULL;
            PyObject *owned = NULL;
            if (!func) {
                owned = PyObject_GetAttrString(value, "__func__");
                func = owned;
            }
            PyObject *qualname = func ? PyObject_GetAttrString(func, "__qualname__") : NULL;
            Py_XDECREF(owned);
            if (!qualname)
                PyErr_Clear();
            return qualname;
        }
        if (class_depth > 0 && PyType_Check(value)) {
            PyObject *class_dict = ((PyTypeObject *)value)->tp_dict;
            if (class_dict) {
                PyObject *q = qualname_in_dict(class_dict, code, class_depth - 1);
                if (q)
                    return q;
            }
        }
    }
    return NULL;
}

static PyObject *legacy_qualname(PyCodeObject *code, PyFrameObject *frame)
{
    if (frame && code->co_argcount > 0) {
        /* The first argument straight from the fast locals: PyFrame_FastToLocals would make
         * the frame's f_locals dict hold every local, keeping objects alive that the
         * program expects gone (test_contextlib's test_nokeepref). */
        PyObject *first = frame->f_localsplus[0];
        if (first && !PyCell_Check(first)) {
            PyObject *mro = PyType_Check(first) ? ((PyTypeObject *)first)->tp_mro
                                                : Py_TYPE(first)->tp_mro;
            for (Py_ssize_t i = 0; mro && i < PyTuple_GET_SIZE(mro); i++) {
                PyObject *dict = ((PyTypeObject *)PyTuple_GET_ITEM(mro, i))->tp_dict;
                PyObject *q = dict ? qualname_in_dict(dict, code, 0) : NULL;
                if (q)
                    return q;
            }
        }
    }
    if (frame && frame->f_globals && PyDict_Check(frame->f_globals)) {
        PyObject *q = qualname_in_dict(frame->f_globals, code, 2);
        if (q)
            return q;
    }
    Py_INCREF(code->co_name);
    return code->co_name;
}
#endif

static PyObject *globals_module_name(PyObject *globals)
{
    PyObject *name = NULL;
    if (globals && PyDict_Check(globals)) {
        name = PyDict_GetItemString(globals, "__name__");
        if (name && PyUnicode_Check(name))
            Py_INCREF(name);
        else
            name = NULL;
    }
    return name;
}

static PyObject *frame_module_name(PyFrameObject *frame)
{
    if (!frame)
        return NULL;
#if PY_VERSION_HEX >= 0x030B0000
    PyObject *globals = PyFrame_GetGlobals(frame);
#else
    PyObject *globals = frame->f_globals;
    Py_XINCREF(globals);
#endif
    PyObject *name = globals_module_name(globals);
    Py_XDECREF(globals);
    return name;
}

/* "module[.Class]:function" from the module name and a qualname such as
 * "Outer.Inner.method" or "func.<locals>.helper" (the part up to the last <locals> names
 * no class and is dropped). */
static char *region_name(const char *module, const char *qualname)
{
    const char *q = qualname;
    const char *locals = NULL;
    for (const char *p = strstr(q, "<locals>."); p; p = strstr(p + 1, "<locals>."))
        locals = p;
    if (locals)
        q = locals + strlen("<locals>.");
    const char *last_dot = NULL;
    /* A dot inside angle brackets ("<genexpr>") is not a separator. */
    int angle = 0;
    for (const char *p = q; *p; p++) {
        if (*p == '<')
            angle++;
        else if (*p == '>' && angle)
            angle--;
        else if (*p == '.' && !angle)
            last_dot = p;
    }
    size_t mlen = strlen(module);
    size_t need = mlen + strlen(q) + 3;
    char *name = malloc(need);
    if (!name)
        return NULL;
    if (last_dot) {
        snprintf(name, need, "%s.%.*s:%s", module, (int)(last_dot - q), q, last_dot + 1);
    } else {
        snprintf(name, need, "%s:%s", module, q);
    }
    return name;
}

const char *sp_python_absolute_path(const char *path, char *out, size_t out_len)
{
    if (!path[0] || !adapter.cwd || !sp_path_absolute(adapter.cwd, path, out, out_len))
        return path;
    return out;
}

/* `frame` (when known) is the frame about to run or running `code`; `globals` those of the
 * function when there is no frame object yet (frame evaluation on 3.11). */
static bool define_code_region(PyCodeObject *code, PyFrameObject *frame, PyObject *globals,
                               PyObject *module, PyObject *qualname, uint32_t *region)
{
    saved_exception saved = exception_save();
    bool recorded = false;
    PyObject *own_module = NULL, *own_qualname = NULL;
    char path[4096];
    const char *filename = PyUnicode_Check(code->co_filename) ? PyUnicode_AsUTF8(code->co_filename) : NULL;
    if (!filename) {
        PyErr_Clear();
        filename = "";
    }
    if (!sp_path_absolute(adapter.cwd, filename, path, sizeof path))
        snprintf(path, sizeof path, "%s", filename);
    for (size_t i = 0; i < adapter.exclude_count; i++)
        if (sp_path_is_within(path, adapter.exclude_dirs[i]))
            goto done; /* the measurement's own code, or code its host excluded */

    if (!module && globals) {
        module = own_module = globals_module_name(globals);
    } else if (!module) {
        if (!frame)
            frame = PyEval_GetFrame();
        module = own_module = frame_module_name(frame);
    }
    if (!qualname) {
#if PY_VERSION_HEX >= 0x030B0000
        qualname = code->co_qualname;
#else
        if (!frame)
            frame = PyEval_GetFrame();
        qualname = own_qualname = legacy_qualname(code, frame);
#endif
    }
    const char *module_text = module && PyUnicode_Check(module) ? PyUnicode_AsUTF8(module) : NULL;
    const char *qualname_text = qualname && PyUnicode_Check(qualname) ? PyUnicode_AsUTF8(qualname) : NULL;
    if (!module_text || !qualname_text)
        PyErr_Clear();
    char *name = region_name(module_text ? module_text : "unknown",
                             qualname_text ? qualname_text : PyUnicode_AsUTF8(code->co_name));
    if (name) {
        char *canonical = malloc(strlen(name) + (qualname_text ? strlen(qualname_text) : 0) + 2);
        if (canonical)
            sprintf(canonical, "%s:%s", module_text ? module_text : "unknown",
                    qualname_text ? qualname_text : "");
        uint32_t id = SP_NO_ID;
        /* A filtered function is decided here, once: on 3.12+ its events are then switched
         * off for good, before that it costs a cache lookup per call. */
        if (!sp_filter_excludes(sp_meas.filter, name, canonical, path))
            id = sp_defs_new_region(&sp_meas.defs, name, canonical, path, code->co_firstlineno,
                                    code->co_firstlineno, SP_PARADIGM_USER, SP_ROLE_FUNCTION,
                                    SP_REGION_PYTHON);
        free(canonical);
        free(name);
        if (id != SP_NO_ID) {
            *region = id;
            recorded = true;
        }
    }
done:
    Py_XDECREF(own_module);
    Py_XDECREF(own_qualname);
    exception_restore(saved);
    cache_region(code, !recorded, recorded ? *region : 0);
    return recorded;
}

/* The region of a code object: from its cache slot, else defined once (with the thread
 * busy, so nothing the definition runs is recorded). The one lookup behind both the
 * event path and the binding's explicit lookup. */
static inline bool lookup_code_region(PyCodeObject *code, PyFrameObject *frame,
                                      PyObject *globals, PyObject *module, PyObject *qualname,
                                      uint32_t *region)
{
    int cached = cached_region(code, region);
    if (cached >= 0)
        return cached == 1;
    sp_thread.busy++;
    bool recorded = define_code_region(code, frame, globals, module, qualname, region);
    sp_thread.busy--;
    return recorded;
}

bool sp_python_code_region(PyCodeObject *code, PyObject *module, PyObject *qualname,
                           uint32_t *region)
{
    return lookup_code_region(code, NULL, NULL, module, qualname, region);
}

void sp_python_exclude_code(PyCodeObject *code)
{
    cache_region(code, true, 0);
}

/* ---- locations ------------------------------------------------------------------------ */

/* The thread's name from threading._active (the main thread, threads started before the
 * measurement); threads started during it are named by scorep's threading hook. */
static PyObject *thread_name(unsigned long ident)
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

static sp_location *attach_thread(void)
{
    unsigned long ident = PyThread_get_thread_ident();
    char fallback[64];
    const char *name = NULL;
    PyObject *py_name = NULL;
    sp_thread.busy++;
    saved_exception saved = exception_save();
    if (sp_measurement_running() && sp_meas.config.all_threads) {
        py_name = thread_name(ident);
        name = py_name ? PyUnicode_AsUTF8(py_name) : NULL;
        if (!name) {
            PyErr_Clear();
            snprintf(fallback, sizeof fallback, "Thread %lu", ident);
            name = fallback;
        }
    }
    sp_location *loc = sp_location_attach(ident, name, false);
    Py_XDECREF(py_name);
    exception_restore(saved);
    sp_thread.busy--;
    return loc;
}

sp_location *sp_python_location(void)
{
    if (sp_location_cache_valid())
        return sp_thread.location;
    return attach_thread();
}

/* The event path: the thread's location, or NULL when nothing is to be recorded. */
static inline sp_location *event_location(void)
{
    if (sp_thread.busy)
        return NULL;
    if (sp_location_cache_valid())
        return sp_thread.location;
    return attach_thread();
}

static inline bool code_region(PyCodeObject *code, PyFrameObject *frame, PyObject *globals,
                               uint32_t *region)
{
    return lookup_code_region(code, frame, globals, NULL, NULL, region);
}

/* ---- sys.monitoring (3.12+) ------------------------------------------------------------ */

#if SP_HAVE_MONITORING
static PyObject *switch_off(void)
{
    adapter.disabled_any = true;
    adapter.disabled_generation = adapter.generation31;
    return Py_NewRef(adapter.disable);
}

/* PY_START, PY_RESUME: a function starts or a generator/coroutine resumes. */
static PyObject *on_py_enter(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    (void)self;
    (void)kwnames;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    uint64_t time = sp_clock_now();
    sp_location *loc = event_location();
    if (!loc || nargs < 1)
        Py_RETURN_NONE;
    PyCodeObject *code = (PyCodeObject *)args[0];
    uint32_t region;
    if (!code_region(code, NULL, NULL, &region))
        return switch_off();
    sp_enter(loc, region, (uintptr_t)code, time);
    Py_RETURN_NONE;
}

/* PY_THROW: resumed by throw(); not a local event, so it may not return DISABLE. */
static PyObject *on_py_throw(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    (void)self;
    (void)kwnames;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    uint64_t time = sp_clock_now();
    sp_location *loc = event_location();
    if (!loc || nargs < 1)
        Py_RETURN_NONE;
    PyCodeObject *code = (PyCodeObject *)args[0];
    uint32_t region;
    if (code_region(code, NULL, NULL, &region))
        sp_enter(loc, region, (uintptr_t)code, time);
    Py_RETURN_NONE;
}

/* PY_RETURN, PY_YIELD. */
static PyObject *on_py_leave(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    (void)self;
    (void)kwnames;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    uint64_t time = sp_clock_now();
    sp_location *loc = event_location();
    if (!loc || nargs < 1)
        Py_RETURN_NONE;
    PyObject *code = args[0];
    if (loc->depth && loc->stack[loc->depth - 1].key == (uintptr_t)code) {
        sp_leave(loc, (uintptr_t)code, time);
        Py_RETURN_NONE;
    }
    uint32_t region;
    if (cached_region((PyCodeObject *)code, &region) == 0)
        return switch_off();
    sp_leave(loc, (uintptr_t)code, time);
    Py_RETURN_NONE;
}

/* PY_UNWIND: an exception leaves the function (not a local event: no DISABLE). */
static PyObject *on_py_unwind(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    (void)self;
    (void)kwnames;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    uint64_t time = sp_clock_now();
    sp_location *loc = event_location();
    if (!loc || nargs < 1)
        Py_RETURN_NONE;
    PyObject *code = args[0];
    uint32_t region;
    if ((loc->depth && loc->stack[loc->depth - 1].key == (uintptr_t)code) ||
        cached_region((PyCodeObject *)code, &region) != 0)
        sp_leave(loc, (uintptr_t)code, time);
    Py_RETURN_NONE;
}

/* The callbacks are objects of a minimal type of our own whose vectorcall is the
 * function itself: sys.monitoring calls it directly, without the recursion checks and
 * thread-state lookups of a builtin function's call path (which cost a __tls_get_addr
 * each on interpreters built with a shared libpython). */
typedef struct {
    PyObject_HEAD
    vectorcallfunc call;
} monitoring_callback;

static PyTypeObject monitoring_callback_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "scorep._bindings.monitoring_callback",
    .tp_basicsize = sizeof(monitoring_callback),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(monitoring_callback, call),
    .tp_call = PyVectorcall_Call,
};

static const vectorcallfunc monitoring_callbacks[] = {on_py_enter, on_py_throw, on_py_leave,
                                                      on_py_unwind};

static PyObject *new_callback(vectorcallfunc call)
{
    if (PyType_Ready(&monitoring_callback_type) < 0)
        return NULL;
    monitoring_callback *cb = PyObject_New(monitoring_callback, &monitoring_callback_type);
    if (cb)
        cb->call = call;
    return (PyObject *)cb;
}

static const struct {
    const char *event;
    int callback;
} monitoring_events[] = {
    {"PY_START", 0}, {"PY_RESUME", 0}, {"PY_THROW", 1},
    {"PY_RETURN", 2}, {"PY_YIELD", 2}, {"PY_UNWIND", 3},
};

static long event_bit(const char *name)
{
    PyObject *events = PyObject_GetAttrString(adapter.monitoring, "events");
    PyObject *bit = events ? PyObject_GetAttrString(events, name) : NULL;
    long value = bit ? PyLong_AsLong(bit) : -1;
    Py_XDECREF(bit);
    Py_XDECREF(events);
    return value;
}

static int monitoring_set_events(long mask)
{
    PyObject *r = PyObject_CallMethod(adapter.monitoring, "set_events", "il", adapter.tool_id, mask);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static int monitoring_acquire_tool(void)
{
    if (adapter.tool_id >= 0)
        return 0;
    /* PROFILER_ID first; cProfile holds it when it runs too, then take a free one. */
    static const int candidates[] = {2, 3, 4};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        PyObject *r = PyObject_CallMethod(adapter.monitoring, "use_tool_id", "is", candidates[i],
                                          "scorep");
        if (r) {
            Py_DECREF(r);
            adapter.tool_id = candidates[i];
            break;
        }
        PyErr_Clear();
    }
    if (adapter.tool_id < 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "no free sys.monitoring tool id (ids 2-4 are taken by other tools)");
        return -1;
    }
    for (size_t i = 0; i < sizeof monitoring_events / sizeof monitoring_events[0]; i++) {
        long bit = event_bit(monitoring_events[i].event);
        PyObject *fn = new_callback(monitoring_callbacks[monitoring_events[i].callback]);
        PyObject *r = bit >= 0 && fn ? PyObject_CallMethod(adapter.monitoring, "register_callback",
                                                         "ilO", adapter.tool_id, bit, fn)
                                     : NULL;
        Py_XDECREF(fn);
        if (!r)
            return -1;
        Py_DECREF(r);
    }
    return 0;
}

static void monitoring_release_tool(void)
{
    if (adapter.tool_id < 0)
        return;
    monitoring_set_events(0);
    for (size_t i = 0; i < sizeof monitoring_events / sizeof monitoring_events[0]; i++) {
        long bit = event_bit(monitoring_events[i].event);
        PyObject *r = PyObject_CallMethod(adapter.monitoring, "register_callback", "ilO",
                                          adapter.tool_id, bit, Py_None);
        Py_XDECREF(r);
    }
    PyObject *r = PyObject_CallMethod(adapter.monitoring, "free_tool_id", "i", adapter.tool_id);
    Py_XDECREF(r);
    PyErr_Clear();
    adapter.tool_id = -1;
}

static int monitoring_register(void)
{
    if (monitoring_acquire_tool() != 0)
        return -1;
    if (adapter.disabled_any && adapter.disabled_generation != adapter.generation31) {
        /* Events switched off in an earlier measurement may belong to functions that this
         * one records (another filter, or a new generation of region ids). Within one
         * measurement they stay off: its filter decisions do not change. */
        PyObject *r = PyObject_CallMethod(adapter.monitoring, "restart_events", NULL);
        if (!r)
            return -1;
        Py_DECREF(r);
        adapter.disabled_any = false;
    }
    long mask = 0;
    for (size_t i = 0; i < sizeof monitoring_events / sizeof monitoring_events[0]; i++) {
        long bit = event_bit(monitoring_events[i].event);
        if (bit < 0)
            return -1;
        mask |= bit;
    }
    return monitoring_set_events(mask);
}
#endif

/* ---- PyEval_SetProfile / PyEval_SetTrace ------------------------------------------------ */

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

static void set_hook_all_threads(bool on)
{
    Py_tracefunc func = on ? hook : NULL;
#if PY_VERSION_HEX >= 0x030C0000
    if (adapter.kind == SP_INSTRUMENTER_PROFILE)
        PyEval_SetProfileAllThreads(func, NULL);
    else
        PyEval_SetTraceAllThreads(func, NULL);
#else
    PyThreadState *self = PyThreadState_Get();
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(self->interp); ts;
         ts = PyThreadState_Next(ts)) {
        if (adapter.kind == SP_INSTRUMENTER_PROFILE)
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
    if (!adapter.registered)
        return;
    if (adapter.kind == SP_INSTRUMENTER_PROFILE)
        PyEval_SetProfile(hook, NULL);
    else if (adapter.kind == SP_INSTRUMENTER_TRACE)
        PyEval_SetTrace(hook, NULL);
#endif
}

/* ---- PEP 523: wrapping frame evaluation (before 3.12) ------------------------------------
 * One call of ours per evaluation of a frame: a function call, or a generator/coroutine
 * resuming; the evaluation returns at return, yield/await and exception. Unlike the profile
 * hook this leaves the interpreter's fast paths on. */

#if PY_VERSION_HEX < 0x030C0000
#define SP_HAVE_EVAL 1
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

static PyObject *eval_frame(PyThreadState *tstate, sp_eval_frame *frame, int throwflag)
{
    uint64_t time = sp_clock_now();
    sp_location *loc = event_location();
    PyCodeObject *code = EVAL_FRAME_CODE(frame);
    uint32_t region;
    if (!loc || EVAL_FRAME_CREATES_GENERATOR(frame) ||
        !code_region(code, EVAL_FRAME_OBJECT(frame), EVAL_FRAME_GLOBALS(frame), &region))
        return eval_default(tstate, frame, throwflag);
    sp_enter(loc, region, (uintptr_t)code, time);
    PyObject *result = eval_default(tstate, frame, throwflag);
    time = sp_clock_now();
    /* The location may have gone (the measurement finalized inside this call). */
    loc = event_location();
    if (loc)
        sp_leave(loc, (uintptr_t)code, time);
    return result;
}

static int eval_register(void)
{
    PyInterpreterState *interp = PyInterpreterState_Get();
    _PyFrameEvalFunction current = _PyInterpreterState_GetEvalFrameFunc(interp);
    if (current != _PyEval_EvalFrameDefault && current != (_PyFrameEvalFunction)eval_frame) {
        /* Another tool (a debugger) evaluates frames: fall back to the profile hook. */
        adapter.kind = SP_INSTRUMENTER_PROFILE;
        set_hook_all_threads(true);
        return 0;
    }
    previous_eval_frame = current;
    _PyInterpreterState_SetEvalFrameFunc(interp, (_PyFrameEvalFunction)eval_frame);
    return 0;
}

static void eval_unregister(void)
{
    _PyInterpreterState_SetEvalFrameFunc(PyInterpreterState_Get(),
                                         previous_eval_frame ? previous_eval_frame
                                                             : _PyEval_EvalFrameDefault);
}
#else
#define SP_HAVE_EVAL 0
#endif

/* ---- control -------------------------------------------------------------------------- */

int sp_python_adapter_init(void)
{
    adapter.code_extra_index = sp_request_code_extra_index(NULL);
    if (adapter.code_extra_index < 0) {
        PyErr_SetString(PyExc_RuntimeError, "no code object extra slot left");
        return -1;
    }
#if SP_HAVE_MONITORING
    PyObject *sys = PyImport_ImportModule("sys");
    adapter.monitoring = sys ? PyObject_GetAttrString(sys, "monitoring") : NULL;
    Py_XDECREF(sys);
    adapter.disable = adapter.monitoring ? PyObject_GetAttrString(adapter.monitoring, "DISABLE") : NULL;
    if (!adapter.disable)
        return -1;
#endif
    return 0;
}

static void free_exclude_dirs(void)
{
    for (size_t i = 0; i < adapter.exclude_count; i++)
        free(adapter.exclude_dirs[i]);
    free(adapter.exclude_dirs);
    adapter.exclude_dirs = NULL;
    adapter.exclude_count = 0;
}

int sp_python_adapter_start(const char *const *exclude_dirs, size_t exclude_count,
                            const char *cwd, sp_instrumenter_kind kind)
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
    free(adapter.cwd);
    adapter.cwd = strdup(cwd ? cwd : "/");
    adapter.exclude_dirs = calloc(exclude_count ? exclude_count : 1, sizeof *adapter.exclude_dirs);
    if (!adapter.cwd || !adapter.exclude_dirs) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < exclude_count; i++) {
        adapter.exclude_dirs[i] = strdup(exclude_dirs[i]);
        if (!adapter.exclude_dirs[i]) {
            PyErr_NoMemory();
            return -1;
        }
        adapter.exclude_count = i + 1;
    }
    adapter.kind = kind;
    adapter.registered = false;
    adapter.generation31 = atomic_load(&sp_meas.generation) & 0x7fffffffu;
    return 0;
}

void sp_python_adapter_stop(void)
{
    sp_python_unregister();
#if SP_HAVE_MONITORING
    monitoring_release_tool();
#endif
    PyErr_Clear();
}

int sp_python_register(void)
{
    if (adapter.registered)
        return 0;
    switch (adapter.kind) {
    case SP_INSTRUMENTER_NONE:
        return 0;
    case SP_INSTRUMENTER_MONITORING:
#if SP_HAVE_MONITORING
        if (monitoring_register() != 0)
            return -1;
        break;
#else
        return -1;
#endif
    case SP_INSTRUMENTER_PROFILE:
    case SP_INSTRUMENTER_TRACE:
        set_hook_all_threads(true);
        break;
    case SP_INSTRUMENTER_EVAL:
#if SP_HAVE_EVAL
        if (eval_register() != 0)
            return -1;
        break;
#else
        return -1;
#endif
    }
    adapter.registered = true;
    return 0;
}

int sp_python_unregister(void)
{
    if (!adapter.registered)
        return 0;
    adapter.registered = false;
    switch (adapter.kind) {
    case SP_INSTRUMENTER_NONE:
        break;
    case SP_INSTRUMENTER_MONITORING:
#if SP_HAVE_MONITORING
        return monitoring_set_events(0);
#else
        break;
#endif
    case SP_INSTRUMENTER_PROFILE:
    case SP_INSTRUMENTER_TRACE:
        set_hook_all_threads(false);
        break;
    case SP_INSTRUMENTER_EVAL:
#if SP_HAVE_EVAL
        eval_unregister();
#endif
        break;
    }
    return 0;
}

bool sp_python_registered(void)
{
    return adapter.registered;
}
