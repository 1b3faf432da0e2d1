/* What the Python adapter's files share: the adapter's state and the inline pieces of the
 * event path (the code object's region cache, the thread's location, the program's pending
 * exception). Nothing outside adapters/python/ includes this. */
#ifndef SCOREP_ADAPTERS_PYTHON_INTERNAL_H
#define SCOREP_ADAPTERS_PYTHON_INTERNAL_H

#include "adapters/python/python.h"

#include <frameobject.h>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
/* 3.11 evaluates _PyInterpreterFrame structs; their layout is only in the internal headers. */
#define Py_BUILD_CORE
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE
#endif

#if PY_VERSION_HEX >= 0x030C0000
#define SP_HAVE_MONITORING 1
#define SP_HAVE_EVAL 0
/* 3.12 renamed the co_extra API (the old names remain, deprecated). */
#define sp_code_get_extra PyUnstable_Code_GetExtra
#define sp_code_set_extra PyUnstable_Code_SetExtra
#define sp_request_code_extra_index PyUnstable_Eval_RequestCodeExtraIndex
#else
#define SP_HAVE_MONITORING 0
#define SP_HAVE_EVAL 1
#define sp_code_get_extra _PyCode_GetExtra
#define sp_code_set_extra _PyCode_SetExtra
#define sp_request_code_extra_index _PyEval_RequestCodeExtraIndex
#endif

typedef struct sp_python_adapter {
    Py_ssize_t code_extra_index; /* our slot in every code object (co_extra) */
    bool code_extra_direct;      /* co_extra's layout is the one code_extra() reads */
    sp_instrumenter_kind kind;
    bool registered;
    char **exclude_dirs; /* code from below these is never recorded (scorep itself, ...) */
    size_t exclude_count;
    char *cwd;
    uint32_t generation30; /* the measurement generation, as stored in co_extra */
    char **line_patterns;  /* region names whose lines are profiled (--lines) */
    size_t line_pattern_count;
    PyObject *line_codes;  /* code objects chosen by scorep.user.lines (a set; kept) */
    bool sampling;         /* unwinding: Python functions are sampled, not instrumented */
    bool c_calls;          /* C functions called from Python are regions */
    /* C callables -> regions (see "C functions as regions" below): an open-addressing
     * table, emptied at every measurement's start, grown on the slow path only. */
    struct sp_c_slot *c_slots;
    size_t c_mask; /* capacity - 1 (a power of two), 0 while there is no table */
    size_t c_count;
    PyObject *c_kept;          /* callables whose address is their key, kept alive (a list) */
    PyTypeObject *ufunc_type;  /* numpy.ufunc, once a call of one was seen */
#if SP_HAVE_MONITORING
    int tool_id; /* -1 until we hold a sys.monitoring tool id */
    PyObject *monitoring;
    PyObject *disable; /* sys.monitoring.DISABLE */
    PyObject *line_event_codes; /* code objects whose LINE events we switched on (a list) */
    bool disabled_any; /* some event was switched off with DISABLE since the last restart */
    uint32_t disabled_generation; /* the measurement in which that happened */
#endif
} sp_python_adapter;

/* The adapter's state. Global because interpreter hooks carry no context of ours, and
 * there is one interpreter and one measurement per process. */
extern sp_python_adapter sp_py;

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
 * co_extra holds [generation:30][lines:1][filtered:1][region:32]: one load tells whether the
 * code object was seen in this measurement, what it is and whether its lines are profiled. */

#define EXTRA_FILTERED ((uintptr_t)1 << 32)
#define EXTRA_LINES ((uintptr_t)1 << 33)
#define EXTRA_GENERATION_SHIFT 34
#define GENERATION_MASK 0x3fffffffu

/* What the cache says of a code object. */
enum { CODE_UNKNOWN = -1, CODE_FILTERED = 0, CODE_RECORDED = 1, CODE_LINES = 2 };

/* CPython keeps a code object's extra slots in `co_extra` as {size, slots[]} (PEP 523's
 * layout, the same from 3.6 to 3.13; private, so checked against the API once at start-up,
 * see sp_python_adapter_init). Read directly, a lookup is a few loads instead of a call into
 * the interpreter's library on every event. */
typedef struct {
    Py_ssize_t size;
    void *slots[1];
} sp_code_extra_layout;

static inline void *code_extra(PyCodeObject *code)
{
    if (__builtin_expect(sp_py.code_extra_direct, 1)) {
        const sp_code_extra_layout *e = (const sp_code_extra_layout *)code->co_extra;
        return e && e->size > sp_py.code_extra_index ? e->slots[sp_py.code_extra_index] : NULL;
    }
    void *extra = NULL;
    if (sp_code_get_extra((PyObject *)code, sp_py.code_extra_index, &extra) < 0)
        return NULL; /* only an invalid index fails here, and the program's exception stays */
    return extra;
}

static inline int cached_region(PyCodeObject *code, uint32_t *region)
{
    uintptr_t v = (uintptr_t)code_extra(code);
    if ((uint32_t)(v >> EXTRA_GENERATION_SHIFT) != sp_py.generation30)
        return CODE_UNKNOWN;
    if (v & EXTRA_FILTERED)
        return CODE_FILTERED;
    *region = (uint32_t)v;
    return v & EXTRA_LINES ? CODE_LINES : CODE_RECORDED;
}


/* naming.c: defines the code object's region (or its exclusion) and caches the answer;
 * returns CODE_FILTERED, CODE_RECORDED or CODE_LINES. */
int sp_python_define_code_region(PyCodeObject *code, PyFrameObject *frame, PyObject *globals,
                                 PyObject *module, PyObject *qualname, uint32_t *region);
#if PY_VERSION_HEX < 0x030B0000
/* Before 3.11 (no co_qualname): the qualified name from the module's globals, new reference. */
PyObject *sp_python_qualname_in_globals(PyCodeObject *code, PyObject *globals);
#endif

/* A callable object of a minimal type of our own whose vectorcall is `call` itself (NULL with
 * an exception set when it cannot be made): sys.monitoring and the collector call it
 * directly, without the recursion checks and thread-state lookups of a builtin function's
 * call path (which cost a __tls_get_addr each on interpreters built with a shared
 * libpython) and without a Python frame. The sys.monitoring callbacks and the gc callback. */
PyObject *sp_python_callback_new(vectorcallfunc call);

/* The region of a code object: from its cache slot, else defined once (with the thread
 * busy, so nothing the definition runs is recorded). The one lookup behind both the
 * event path and the binding's explicit lookup. */
static inline int lookup_code_region(PyCodeObject *code, PyFrameObject *frame,
                                     PyObject *globals, PyObject *module, PyObject *qualname,
                                     uint32_t *region)
{
    int cached = cached_region(code, region);
    if (cached != CODE_UNKNOWN)
        return cached;
    sp_thread.busy++;
    int known = sp_python_define_code_region(code, frame, globals, module, qualname, region);
    sp_thread.busy--;
    return known;
}

/* CODE_FILTERED (0: not recorded), CODE_RECORDED or CODE_LINES (recorded, lines too). */
static inline int code_region(PyCodeObject *code, PyFrameObject *frame, PyObject *globals,
                              uint32_t *region)
{
    return lookup_code_region(code, frame, globals, NULL, NULL, region);
}

/* ---- C functions as regions (ccalls.c) ---------------------------------------------------
 * What cProfile records as C calls: builtin functions and methods of C types (one region per
 * PyMethodDef, however many bound method objects call it), and numpy ufuncs (one per ufunc
 * object). Calls of classes, of Python functions and of other callables are no C regions. */

struct sp_c_slot {
    uintptr_t key;  /* 0: empty */
    uint32_t value; /* the region, or C_SLOT_FILTERED */
};
#define C_SLOT_FILTERED UINT32_MAX

/* The key of `callable` when it is a C function we record, else 0. `self` is the first
 * argument (sys.monitoring passes a method descriptor and its object). */
static inline uintptr_t c_callable_key(PyObject *callable)
{
    PyTypeObject *t = Py_TYPE(callable);
    if (t == &PyFunction_Type || t == &PyMethod_Type)
        return 0;
    if (t == &PyCFunction_Type || t == &PyCMethod_Type)
        return (uintptr_t)((PyCFunctionObject *)callable)->m_ml;
    if (t == &PyMethodDescr_Type)
        return (uintptr_t)((PyMethodDescrObject *)callable)->d_method;
    if (t == sp_py.ufunc_type)
        return (uintptr_t)callable;
    if (PyType_HasFeature(t, Py_TPFLAGS_TYPE_SUBCLASS))
        return 0; /* calling a class: its __init__ is recorded as a Python function */
    /* Subclasses of builtin functions (Cython's functions), as cProfile records them. */
    if (PyType_IsSubtype(t, &PyCFunction_Type))
        return (uintptr_t)((PyCFunctionObject *)callable)->m_ml;
    if (!sp_py.ufunc_type && t->tp_name[0] == 'n' && strcmp(t->tp_name, "numpy.ufunc") == 0) {
        sp_py.ufunc_type = t;
        return (uintptr_t)callable;
    }
    return 0;
}

/* Defines the region of the C callable `callable` with `key` (the slow path). */
int sp_python_define_c_region(uintptr_t key, PyObject *callable, uint32_t *region);

/* CODE_FILTERED or CODE_RECORDED, with *region. */
static inline int c_region(uintptr_t key, PyObject *callable, uint32_t *region)
{
    if (__builtin_expect(sp_py.c_mask != 0, 1)) {
        size_t mask = sp_py.c_mask;
        for (size_t i = (size_t)((key >> 4) * 0x9E3779B97F4A7C15ull >> 20) & mask;;
             i = (i + 1) & mask) {
            const struct sp_c_slot *slot = &sp_py.c_slots[i];
            if (slot->key == key) {
                if (slot->value == C_SLOT_FILTERED)
                    return CODE_FILTERED;
                *region = slot->value;
                return CODE_RECORDED;
            }
            if (!slot->key)
                break;
        }
    }
    sp_thread.busy++;
    int known = sp_python_define_c_region(key, callable, region);
    sp_thread.busy--;
    return known;
}

/* Per measurement. */
int sp_python_c_calls_start(bool on);
void sp_python_c_calls_stop(void);

/* ---- line-level profiles (lines.c) ------------------------------------------------------
 * Each thread keeps a stack of the frames of chosen functions that run: the line each
 * executes and since when. A line's time runs until the next line event, yield or return of
 * its frame; callees' time belongs to the calling line. */

/* Whether a newly defined region's lines are profiled: its name matches --lines, or its code
 * object was chosen with scorep.user.lines. */
bool sp_python_lines_chosen(PyCodeObject *code, const char *region_name);
/* A chosen function starts (line 0: not known yet) or a chosen generator resumes at `line`
 * (its continued line gets time but no hit). */
void sp_python_lines_begin(sp_location *loc, PyCodeObject *code, uint32_t region, uint32_t line,
                           uint64_t time);
/* The frame of `code` reached `line`. */
void sp_python_lines_line(sp_location *loc, PyCodeObject *code, uint32_t line, uint64_t time);
/* The frame of `code` returns, yields or unwinds. */
void sp_python_lines_end(sp_location *loc, PyCodeObject *code, uint64_t time);
/* How many chosen frames the calling thread runs (of any measurement): while 0, a leave
 * needs no call of sp_python_lines_end. Thread-local, as each thread's line stack. */
extern SP_TLS uint32_t sp_python_line_frames;
/* Per measurement. */
int sp_python_lines_start(const char *const *patterns, size_t count);
void sp_python_lines_stop(void);

/* adapter.c: the calling thread's location, made when it first records. */
sp_location *sp_python_attach_thread(void);
/* The name of the thread `ident` from threading (a new reference), or NULL. */
PyObject *sp_python_thread_name(unsigned long ident);

/* ---- sampling (sampling.c) --------------------------------------------------------------
 * SCOREP_ENABLE_UNWINDING: calling contexts for every event from the start of the
 * measurement; with a period, samples of every thread's stack while instrumentation is on
 * (instead of the events of every call). */
int sp_python_sampling_start(bool unwinding, uint64_t period_us, bool cpu);
int sp_python_sampling_register(void);
void sp_python_sampling_unregister(void);
void sp_python_sampling_stop(void);
/* The measurement clock's ticks per nanosecond (CPU time is counted in ns). */
double sp_python_ticks_per_ns(void);
/* A thread state's location key (the core's sp_location_attach_keyed). */
uint64_t sp_python_key_of(PyThreadState *ts);

/* The event path: the thread's location, or NULL when nothing is to be recorded. */
static inline sp_location *event_location(void)
{
    if (sp_thread.busy)
        return NULL;
    if (sp_location_cache_valid())
        return sp_thread.location;
    return sp_python_attach_thread();
}

/* The ways of seeing calls (one file each). */
#if SP_HAVE_MONITORING
int sp_python_monitoring_register(void);   /* monitoring.c */
int sp_python_monitoring_set_events(long mask);
void sp_python_monitoring_release(void);
/* LINE events of one code object on; 0 or -1 (a Python exception). */
int sp_python_monitoring_line_events(PyCodeObject *code);
#endif
void sp_python_hooks_set_all_threads(bool on); /* hooks.c: profile/trace hooks */
/* hooks.c: the profile function of ours (compared with a thread's c_profilefunc). */
int sp_python_profile_hook(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg);
/* setprofile.c: sys.setprofile and sys._setprofileallthreads replaced while C calls are
 * recorded; a call event of one announces it, its return event ends it (NULL: its error). */
enum { SP_WRAP_SETPROFILE, SP_WRAP_ALL_THREADS, SP_WRAP_COUNT };
extern PyMethodDef sp_python_wrapped_defs[SP_WRAP_COUNT];
static inline int sp_python_wrapped_index(uintptr_t key)
{
    if (__builtin_expect(key - (uintptr_t)sp_python_wrapped_defs < sizeof sp_python_wrapped_defs, 0))
        return (int)((key - (uintptr_t)sp_python_wrapped_defs) / sizeof sp_python_wrapped_defs[0]);
    return -1;
}
void sp_python_wrap_announce(int which);
PyObject *sp_python_wrapped_returned(int which);
void sp_python_wrappers_install(void);
void sp_python_wrappers_remove(void);
#if SP_HAVE_EVAL
int sp_python_eval_register(void);             /* eval_frame.c: PEP 523 */
void sp_python_eval_unregister(void);
#endif
/* Before 3.12: line events of the calling thread on while a chosen frame runs (a C trace
 * function of ours, the thread's own one put back after). */
void sp_python_hooks_lines_on(void);  /* hooks.c */
void sp_python_hooks_lines_off(void);

#endif
