/* scorep._bindings: the CPython module. Glue only: argument conversion between Python and
 * the core and the Python adapter; every decision is made there or in Python. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "adapters/process/process.h"
#include "adapters/python/python.h"
#include "core/experiment_dir.h"
#include "core/io.h"
#include "core/measurement.h"

static sp_instrumenter_kind parse_instrumenter(const char *name)
{
    if (strcmp(name, "monitoring") == 0)
        return SP_INSTRUMENTER_MONITORING;
    if (strcmp(name, "profile") == 0)
        return SP_INSTRUMENTER_PROFILE;
    if (strcmp(name, "trace") == 0)
        return SP_INSTRUMENTER_TRACE;
    if (strcmp(name, "none") == 0)
        return SP_INSTRUMENTER_NONE;
    if (strcmp(name, "eval") == 0)
        return SP_INSTRUMENTER_EVAL;
    return (sp_instrumenter_kind)-1;
}

/* A sequence of str as C strings (borrowed from the sequence, which is kept). */
typedef struct {
    PyObject *fast;
    const char **items;
    size_t count;
} string_list;

static void string_list_free(string_list *list)
{
    PyMem_Free(list->items);
    Py_XDECREF(list->fast);
    memset(list, 0, sizeof *list);
}

/* None or NULL: an empty list. Returns 0, or -1 with a Python exception. */
static int string_list_from(string_list *list, PyObject *seq, const char *what)
{
    memset(list, 0, sizeof *list);
    if (!seq || seq == Py_None)
        return 0;
    list->fast = PySequence_Fast(seq, what);
    if (!list->fast)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(list->fast);
    list->items = PyMem_Calloc((size_t)n + 1, sizeof *list->items);
    if (!list->items) {
        string_list_free(list);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        list->items[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(list->fast, i));
        if (!list->items[i]) {
            string_list_free(list);
            return -1;
        }
    }
    list->count = (size_t)n;
    return 0;
}

/* The metrics asked for: a sequence of (source, name, per_process) with source one of
 * "rusage", "perf", "papi", "python", "native". The names stay owned by the tuples (valid
 * during the start). Returns 0, or -1 with a Python exception. */
static int metric_requests_from(PyObject *metrics, sp_metric_request *out, uint32_t *count)
{
    static const char *const source_names[SP_METRIC_SOURCE_COUNT] = {
        [SP_METRIC_SOURCE_RUSAGE] = "rusage", [SP_METRIC_SOURCE_PERF] = "perf",
        [SP_METRIC_SOURCE_PAPI] = "papi", [SP_METRIC_SOURCE_PYTHON] = "python",
        [SP_METRIC_SOURCE_NATIVE] = "native"};
    *count = 0;
    if (!metrics || metrics == Py_None)
        return 0;
    PyObject *seq = PySequence_Fast(metrics, "metrics must be a sequence of tuples");
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int status = 0;
    if (n > SP_MAX_METRICS * 2) {
        PyErr_Format(PyExc_ValueError, "at most %d metrics", SP_MAX_METRICS);
        status = -1;
    }
    for (Py_ssize_t i = 0; i < n && status == 0; i++) {
        const char *source, *name;
        int per_process;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "ssp", &source, &name,
                              &per_process)) {
            status = -1;
            break;
        }
        int id = -1;
        for (int k = 0; k < SP_METRIC_SOURCE_COUNT; k++)
            if (strcmp(source_names[k], source) == 0)
                id = k;
        if (id < 0) {
            PyErr_Format(PyExc_ValueError, "unknown metric source '%s'", source);
            status = -1;
            break;
        }
        out[(*count)++] = (sp_metric_request){(uint8_t)id, per_process != 0, name};
    }
    Py_DECREF(seq);
    return status;
}

/* What start() takes: one dict whose keys are exactly the fields of `start_fields`, each
 * converted by its kind into `start_request`. The table is the one place that names them:
 * the Python side asks for it (start_defaults()), so the two sides cannot drift apart, and
 * a missing, unknown or mistyped field is an error naming it. */
typedef struct {
    sp_config config;
    const char *timer, *instrumenter, *thread_name, *cwd;
    PyObject *program_args, *exclude_dirs, *line_patterns, *spawn_args, *metrics;
    bool do_register, memory;
} start_request;

typedef enum {
    FIELD_BOOL,
    FIELD_U32,
    FIELD_U64,
    FIELD_DOUBLE,
    FIELD_STR,      /* str */
    FIELD_STR_NONE, /* str or None (NULL) */
    FIELD_SEQ,      /* a sequence, converted after the table (borrowed) */
} field_kind;

typedef struct {
    const char *name;
    field_kind kind;
    size_t offset;
    /* The default (start_defaults()): a number, or text for FIELD_STR. */
    double number;
    const char *text;
} start_field;

#define CFG(member) offsetof(start_request, config.member)
#define REQ(member) offsetof(start_request, member)
static const start_field start_fields[] = {
    {"experiment_dir", FIELD_STR, CFG(experiment_dir), 0, ""},
    {"tracing", FIELD_BOOL, CFG(tracing), 0, NULL},
    {"profiling", FIELD_BOOL, CFG(profiling), 1, NULL},
    {"verbose", FIELD_BOOL, CFG(verbose), 0, NULL},
    {"all_threads", FIELD_BOOL, CFG(all_threads), 1, NULL},
    {"total_memory", FIELD_U64, CFG(total_memory), (double)SP_DEFAULT_TOTAL_MEMORY, NULL},
    {"timer", FIELD_STR, REQ(timer), 0, "tsc"},
    {"max_callpath_depth", FIELD_U32, CFG(max_callpath_depth), SP_DEFAULT_MAX_CALLPATH_DEPTH,
     NULL},
    {"profile_base_name", FIELD_STR, CFG(profile_base_name), 0, "profile"},
    {"profile_write_slice", FIELD_U64, CFG(profile_write_slice), 0, NULL},
    {"program_name", FIELD_STR, CFG(program_name), 0, "python"},
    {"program_path", FIELD_STR_NONE, CFG(program_path), 0, NULL},
    {"program_args", FIELD_SEQ, REQ(program_args), 0, NULL},
    {"machine_name", FIELD_STR, CFG(machine_name), 0, "Linux"},
    {"node_name", FIELD_STR, CFG(node_name), 0, "localhost"},
    {"creator", FIELD_STR, CFG(creator), 0, "scorep"},
    {"exclude_dirs", FIELD_SEQ, REQ(exclude_dirs), 0, NULL},
    {"cwd", FIELD_STR_NONE, REQ(cwd), 0, NULL},
    {"instrumenter", FIELD_STR, REQ(instrumenter), 0, "none"},
    {"thread_name", FIELD_STR, REQ(thread_name), 0, "MainThread"},
    {"register", FIELD_BOOL, REQ(do_register), 1, NULL},
    {"filter_file", FIELD_STR_NONE, CFG(filter_file), 0, NULL},
    {"mpi", FIELD_BOOL, CFG(mpi), 0, NULL},
    {"overwrite", FIELD_BOOL, CFG(overwrite), 1, NULL},
    {"mpi_timeout", FIELD_DOUBLE, CFG(mpi_timeout), 60.0, NULL},
    {"mpi_groups", FIELD_STR_NONE, CFG(mpi_groups), 0, NULL},
    {"spawn_args", FIELD_SEQ, REQ(spawn_args), 0, NULL},
    {"spawned", FIELD_BOOL, CFG(spawned), 0, NULL},
    {"line_patterns", FIELD_SEQ, REQ(line_patterns), 0, NULL},
    {"io_posix", FIELD_BOOL, CFG(io_posix), 0, NULL},
    {"unwinding", FIELD_BOOL, CFG(unwinding), 0, NULL},
    {"sampling_event", FIELD_STR_NONE, CFG(sampling_event), 0, NULL},
    {"sampling_period_us", FIELD_U64, CFG(sampling_period_us), 0, NULL},
    {"sampling_cpu", FIELD_BOOL, CFG(sampling_cpu), 0, NULL},
    {"metrics", FIELD_SEQ, REQ(metrics), 0, NULL},
    {"memory", FIELD_BOOL, REQ(memory), 0, NULL},
    {"quiet", FIELD_BOOL, CFG(quiet_warnings), 0, NULL},
    {"c_calls", FIELD_BOOL, CFG(c_calls), 0, NULL},
    {"wait_states", FIELD_BOOL, CFG(wait_states), 1, NULL},
};
#undef CFG
#undef REQ
#define START_FIELD_COUNT (sizeof start_fields / sizeof start_fields[0])

static int field_error(const start_field *f, const char *expected, PyObject *value)
{
    PyErr_Format(PyExc_TypeError, "start(): configuration field '%s' must be %s, not %s",
                 f->name, expected, Py_TYPE(value)->tp_name);
    return -1;
}

/* Returns 0, or -1 with a Python exception naming the field. */
static int field_convert(const start_field *f, PyObject *value, start_request *req)
{
    char *at = (char *)req + f->offset;
    switch (f->kind) {
    case FIELD_BOOL:
        if (!PyBool_Check(value) && !PyLong_Check(value))
            return field_error(f, "a bool", value);
        *(bool *)at = PyObject_IsTrue(value) == 1;
        return 0;
    case FIELD_U32:
    case FIELD_U64: {
        if (!PyLong_Check(value) || PyBool_Check(value))
            return field_error(f, "an int", value);
        unsigned long long n = PyLong_AsUnsignedLongLong(value);
        if (PyErr_Occurred() || (f->kind == FIELD_U32 && n > UINT32_MAX)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "start(): configuration field '%s' is out of range",
                         f->name);
            return -1;
        }
        if (f->kind == FIELD_U32)
            *(uint32_t *)at = (uint32_t)n;
        else
            *(uint64_t *)at = n;
        return 0;
    }
    case FIELD_DOUBLE:
        if (!PyFloat_Check(value) && !(PyLong_Check(value) && !PyBool_Check(value)))
            return field_error(f, "a number", value);
        *(double *)at = PyFloat_AsDouble(value);
        return PyErr_Occurred() ? -1 : 0;
    case FIELD_STR:
    case FIELD_STR_NONE:
        if (value == Py_None && f->kind == FIELD_STR_NONE) {
            *(const char **)at = NULL;
            return 0;
        }
        if (!PyUnicode_Check(value))
            return field_error(f, f->kind == FIELD_STR ? "a str" : "a str or None", value);
        *(const char **)at = PyUnicode_AsUTF8(value);
        return *(const char **)at ? 0 : -1;
    case FIELD_SEQ:
        if (value != Py_None && !PySequence_Check(value))
            return field_error(f, "a sequence", value);
        *(PyObject **)at = value;
        return 0;
    }
    return 0;
}

/* Fills `req` from the dict `fields` (borrowed strings stay valid while it lives). */
static int start_request_from(PyObject *fields, start_request *req)
{
    if (!PyDict_Check(fields)) {
        PyErr_Format(PyExc_TypeError, "start() takes a dict of its configuration, not %s",
                     Py_TYPE(fields)->tp_name);
        return -1;
    }
    memset(req, 0, sizeof *req);
    for (size_t i = 0; i < START_FIELD_COUNT; i++) {
        PyObject *value = PyDict_GetItemString(fields, start_fields[i].name);
        if (!value) {
            PyErr_Format(PyExc_KeyError, "start(): configuration field '%s' is missing",
                         start_fields[i].name);
            return -1;
        }
        if (field_convert(&start_fields[i], value, req) != 0)
            return -1;
    }
    if ((size_t)PyDict_Size(fields) != START_FIELD_COUNT) {
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (PyDict_Next(fields, &pos, &key, &value)) {
            const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
            bool known = false;
            for (size_t i = 0; name && i < START_FIELD_COUNT && !known; i++)
                known = strcmp(start_fields[i].name, name) == 0;
            if (!known) {
                PyErr_Clear();
                PyErr_Format(PyExc_KeyError, "start(): no configuration field %R", key);
                return -1;
            }
        }
    }
    return 0;
}

/* Binding shims, a family: each py_* function converts its arguments, calls one core
 * function and converts the result; many share their shape (no arguments, a bool or None
 * back), which the duplicates tool pairs. Argument conversion only (ARCHITECTURE.md). */
static PyObject *py_start_defaults(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < START_FIELD_COUNT; i++) {
        const start_field *f = &start_fields[i];
        PyObject *value = NULL;
        switch (f->kind) {
        case FIELD_BOOL:
            value = PyBool_FromLong(f->number != 0);
            break;
        case FIELD_U32:
        case FIELD_U64:
            value = PyLong_FromUnsignedLongLong((unsigned long long)f->number);
            break;
        case FIELD_DOUBLE:
            value = PyFloat_FromDouble(f->number);
            break;
        case FIELD_STR:
            value = PyUnicode_FromString(f->text);
            break;
        case FIELD_STR_NONE:
            Py_INCREF(Py_None);
            value = Py_None;
            break;
        case FIELD_SEQ:
            value = PyList_New(0);
            break;
        }
        if (!value || PyDict_SetItemString(d, f->name, value) != 0) {
            Py_XDECREF(value);
            Py_CLEAR(d);
        }
        Py_XDECREF(value);
    }
    return d;
}

/* The steps on top of the core, in the order sp_measurement_start_with runs them. */
typedef struct {
    start_request *req;
    string_list dirs, patterns;
    sp_instrumenter_kind kind;
} start_context;

static int step_adapter(void *context, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    start_context *c = context;
    return sp_python_adapter_start(c->dirs.items, c->dirs.count, c->req->cwd, c->kind,
                                   c->patterns.items, c->patterns.count, &c->req->config);
}

static void undo_adapter(void *context)
{
    (void)context;
    sp_python_adapter_stop();
}

static int step_memory(void *context, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    if (((start_context *)context)->req->memory)
        sp_python_memory_hook(true);
    return 0;
}

static void undo_memory(void *context)
{
    (void)context;
    sp_python_memory_hook(false);
}

static int step_register(void *context, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    start_context *c = context;
    /* The starting thread is location 0; it writes ProgramBegin. */
    sp_python_attach_named(c->req->thread_name);
    return c->req->do_register ? sp_python_register() : 0;
}

static const sp_start_step start_steps[] = {
    {step_adapter, undo_adapter},
    {step_memory, undo_memory},
    {step_register, NULL},
};

static PyObject *py_start(PyObject *self, PyObject *fields)
{
    (void)self;
    start_request req;
    if (start_request_from(fields, &req) != 0)
        return NULL;
    sp_config *config = &req.config;
    sp_metric_request requests[SP_MAX_METRICS * 2];
    if (metric_requests_from(req.metrics, requests, &config->metric_request_count) != 0)
        return NULL;
    config->metric_requests = requests;
    start_context context = {.req = &req, .kind = parse_instrumenter(req.instrumenter)};
    if ((int)context.kind < 0) {
        PyErr_Format(PyExc_ValueError, "unknown instrumenter '%s'", req.instrumenter);
        return NULL;
    }
    if (strcmp(req.timer, "tsc") == 0) {
        config->timer = SP_TIMER_TSC;
    } else if (strcmp(req.timer, "clock_gettime") == 0) {
        config->timer = SP_TIMER_CLOCK_GETTIME;
    } else {
        PyErr_Format(PyExc_ValueError, "unknown timer '%s'", req.timer);
        return NULL;
    }
    string_list argv, spawn;
    string_list *lists[] = {&argv, &context.dirs, &context.patterns, &spawn};
    PyObject *sources[] = {req.program_args, req.exclude_dirs, req.line_patterns,
                           req.spawn_args};
    for (size_t i = 0; i < 4; i++) {
        if (string_list_from(lists[i], sources[i], "a sequence of str") == 0)
            continue;
        while (i-- > 0)
            string_list_free(lists[i]);
        return NULL;
    }
    config->program_args = argv.items;
    config->program_argc = (uint32_t)argv.count;
    config->spawn_args = spawn.items;
    config->spawn_argc = (uint32_t)spawn.count;
    char err[512] = "";
    int status = sp_measurement_start_with(config, start_steps,
                                           sizeof start_steps / sizeof start_steps[0],
                                           &context, err, sizeof err);
    if (status != 0 && !PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, err[0] ? err : "the measurement did not start");
    for (size_t i = 0; i < 4; i++)
        string_list_free(lists[i]);
    if (status != 0)
        return NULL;
    Py_RETURN_NONE;
}

static int set_item(PyObject *dict, const char *key, PyObject *value)
{
    if (!value)
        return -1;
    int r = PyDict_SetItemString(dict, key, value);
    Py_DECREF(value);
    return r;
}

static PyObject *py_finalize(PyObject *self, PyObject *args)
{
    (void)self;
    long long exit_status = 0;
    if (!PyArg_ParseTuple(args, "|L", &exit_status))
        return NULL;
    /* The core decides: a measurement the MPI_Finalize wrapper already wrote returns its
     * results, one that never ran an error. */
    sp_python_adapter_stop();
    sp_python_memory_hook(false);
    sp_results r;
    char err[512] = "";
    int status = sp_measurement_finalize(exit_status, &r, err, sizeof err);
    /* The child processes' files go whatever became of the results. */
    const sp_process_outcome *outcomes = NULL;
    uint32_t noutcomes = sp_process_finished(&outcomes);
    if (status != 0) {
        PyErr_SetString(PyExc_RuntimeError, err);
        return NULL;
    }
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    PyObject *processes = PyList_New(0);
    if (!processes || set_item(d, "child_processes", processes) != 0) {
        Py_DECREF(d);
        return NULL;
    }
    static const char *const fates[] = {"adopted", "lost", "late"};
    for (uint32_t i = 0; i < noutcomes; i++) {
        const sp_process_outcome *o = &outcomes[i];
        PyObject *item = Py_BuildValue(
            "{s:I,s:I,s:K,s:s,s:N,s:s,s:d,s:K,s:O}", "number", o->number, "parent",
            o->parent, "pid", (unsigned long long)o->pid, "method", o->method, "name",
            PyUnicode_DecodeUTF8(o->name, (Py_ssize_t)strlen(o->name), "replace"), "fate",
            fates[o->fate], "seconds", o->seconds, "lost_bytes",
            (unsigned long long)o->lost_bytes, "idle", o->idle ? Py_True : Py_False);
        if (!item || PyList_Append(processes, item) != 0) {
            Py_XDECREF(item);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(item);
    }
    if (set_item(d, "ticks_per_second", PyLong_FromUnsignedLongLong(r.ticks_per_second)) ||
        set_item(d, "start_time", PyLong_FromUnsignedLongLong(r.start_time)) ||
        set_item(d, "end_time", PyLong_FromUnsignedLongLong(r.end_time)) ||
        set_item(d, "realtime_start_ns", PyLong_FromUnsignedLongLong(r.realtime_start_ns)) ||
        set_item(d, "locations", PyLong_FromUnsignedLong(r.locations)) ||
        set_item(d, "regions", PyLong_FromUnsignedLong(r.regions)) ||
        set_item(d, "enters", PyLong_FromUnsignedLongLong(r.enters)) ||
        set_item(d, "samples", PyLong_FromUnsignedLongLong(r.samples)) ||
        set_item(d, "unmatched_leaves", PyLong_FromUnsignedLongLong(r.unmatched_leaves)) ||
        set_item(d, "trace_flushes", PyLong_FromUnsignedLongLong(r.trace_flushes)) ||
        set_item(d, "trace_lost_records", PyLong_FromUnsignedLongLong(r.trace_lost_records)) ||
        set_item(d, "memory_peak_bytes", PyLong_FromUnsignedLongLong(r.memory_peak_bytes)) ||
        set_item(d, "memory_over_budget_bytes",
                 PyLong_FromUnsignedLongLong(r.memory_over_budget_bytes)) ||
        set_item(d, "metric_reads_ns", PyLong_FromUnsignedLongLong(r.metric_reads_ns)) ||
        set_item(d, "metric_read_cost_ns", PyLong_FromUnsignedLongLong(r.metric_read_cost_ns)) ||
        set_item(d, "max_depth", PyLong_FromUnsignedLong(r.max_depth)) ||
        set_item(d, "experiment_dir", PyUnicode_DecodeFSDefault(r.output_dir)) ||
        set_item(d, "mpi_rank", PyLong_FromLong(r.mpi_rank)) ||
        set_item(d, "mpi_size", PyLong_FromLong(r.mpi_size)) ||
        set_item(d, "mpi_collective", PyBool_FromLong(r.mpi_collective)) ||
        set_item(d, "processes", PyLong_FromUnsignedLong(r.processes)) ||
        set_item(d, "process_member", PyBool_FromLong(r.process_member)) ||
        set_item(d, "process_alone", PyBool_FromLong(r.process_alone)) ||
        set_item(d, "process_named", PyBool_FromLong(r.process_named)) ||
        set_item(d, "process_number", PyLong_FromUnsignedLong(r.process_number)) ||
        set_item(d, "process_trace_failures", PyLong_FromUnsignedLong(r.process_trace_failures)) ||
        set_item(d, "process_trace_error",
                 PyUnicode_DecodeUTF8(r.process_trace_error,
                                      (Py_ssize_t)strlen(r.process_trace_error), "replace")) ||
        set_item(d, "part_written", PyBool_FromLong(r.part_written)) ||
        set_item(d, "spawned_ranks", PyLong_FromUnsignedLong(r.spawned_ranks)) ||
        set_item(d, "parts_missing", PyUnicode_FromString(r.parts_missing)) ||
        set_item(d, "profile_folded_calls", PyLong_FromUnsignedLongLong(r.profile_folded_calls)) ||
        set_item(d, "profile_dropped_calls", PyLong_FromUnsignedLongLong(r.profile_dropped_calls)) ||
        set_item(d, "profile_dropped_samples",
                 PyLong_FromUnsignedLongLong(r.profile_dropped_samples)) ||
        set_item(d, "profile_folded_parameters",
                 PyLong_FromUnsignedLongLong(r.profile_folded_parameters)) ||
        set_item(d, "trace_spill_failures", PyLong_FromUnsignedLongLong(r.trace_spill_failures)) ||
        set_item(d, "trace_spill_error", PyUnicode_DecodeUTF8(r.trace_spill_error,
                                                              (Py_ssize_t)strlen(r.trace_spill_error),
                                                              "replace")) ||
        set_item(d, "trace_error", PyUnicode_DecodeUTF8(r.trace_error, (Py_ssize_t)strlen(r.trace_error),
                                                        "replace")) ||
        set_item(d, "wait_states", PyBool_FromLong(r.wait_states)) ||
        set_item(d, "wait_state_violations", PyLong_FromUnsignedLongLong(r.wait_state_violations)) ||
        set_item(d, "wait_state_unmatched", PyLong_FromUnsignedLongLong(r.wait_state_unmatched)) ||
        set_item(d, "wait_state_ns", PyLong_FromUnsignedLongLong(r.wait_state_ns)) ||
        set_item(d, "wait_state_error",
                 PyUnicode_DecodeUTF8(r.wait_state_error, (Py_ssize_t)strlen(r.wait_state_error),
                                      "replace"))) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *py_running(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyBool_FromLong(sp_measurement_running());
}

static PyObject *py_register(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (sp_measurement_running() && sp_python_register() != 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_unregister(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (sp_python_unregister() != 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_registered(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyBool_FromLong(sp_python_registered());
}

static PyObject *py_thread_begin(PyObject *self, PyObject *name)
{
    (void)self;
    if (!sp_measurement_running())
        Py_RETURN_NONE;
    const char *text = PyUnicode_AsUTF8(name);
    if (!text)
        return NULL;
    sp_python_attach_named(text);
    sp_python_thread_started();
    Py_RETURN_NONE;
}

static PyObject *py_thread_rename(PyObject *self, PyObject *name)
{
    (void)self;
    const char *text = PyUnicode_AsUTF8(name);
    if (!text) {
        PyErr_Clear(); /* a name that is not UTF-8: the location keeps its earlier name */
        Py_RETURN_NONE;
    }
    if (sp_measurement_running() && sp_location_cache_valid() && sp_thread.location)
        sp_location_set_name(sp_thread.location, text);
    Py_RETURN_NONE;
}

/* The Python callable run after MPI_Abort made the core write the results (set by
 * set_abort_callback; the core's hook carries no context, hence a module-level ref). */
static PyObject *abort_callback;

static void run_abort_callback(void)
{
    PyGILState_STATE gil = PyGILState_Ensure(); /* mpi4py may call MPI_Abort without it */
    if (abort_callback) {
        PyObject *r = PyObject_CallNoArgs(abort_callback);
        if (!r)
            PyErr_WriteUnraisable(abort_callback);
        Py_XDECREF(r);
    }
    PyGILState_Release(gil);
}

static PyObject *py_set_abort_callback(PyObject *self, PyObject *callback)
{
    (void)self;
    if (callback != Py_None)
        Py_INCREF(callback);
    Py_XSETREF(abort_callback, callback == Py_None ? NULL : callback);
    sp_measurement_set_abort_hook(abort_callback ? run_abort_callback : NULL);
    Py_RETURN_NONE;
}

static PyObject *py_thread_ended(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    sp_measurement_thread_ended();
    Py_RETURN_NONE;
}

/* The tool's own work on this thread (its verbose output, its files): nothing it does in
 * between is recorded. */
static PyObject *py_quiet_begin(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    sp_measurement_quiet_begin();
    Py_RETURN_NONE;
}

static PyObject *py_quiet_end(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    sp_measurement_quiet_end();
    Py_RETURN_NONE;
}

/* ---- user regions ---------------------------------------------------------------------- */

/* The user region of (name, file, line) arguments: 1 with *region set, 0 when it is not
 * recorded (the filter excludes it, out of memory), -1 with a Python exception. */
static int named_region_of(PyObject *const *args, uint32_t *region)
{
    const char *name = PyUnicode_AsUTF8(args[0]);
    const char *file = args[1] == Py_None ? "" : PyUnicode_AsUTF8(args[1]);
    long line = args[2] == Py_None ? -1 : PyLong_AsLong(args[2]);
    if (!name || !file || (line == -1 && PyErr_Occurred()))
        return -1;
    char absolute[4096];
    file = sp_python_absolute_path(file, absolute, sizeof absolute);
    bool excluded;
    *region = sp_region_define_named(name, file, (int32_t)line, SP_REGION_USER, &excluded);
    return *region != SP_NO_ID && !excluded;
}

/* The user region a region_end/rewind_end names: 1 with *region set (SP_NO_ID: never
 * begun), 0 when the filter excludes it, -1 with a Python exception. */
static int existing_region_of(PyObject *name, const char **text, uint32_t *region)
{
    *text = PyUnicode_AsUTF8(name);
    if (!*text)
        return -1;
    bool excluded;
    *region = sp_region_find_named(*text, SP_REGION_USER, &excluded);
    return !excluded;
}

/* region_begin(name, file, line) and rewind_begin(name, file, line). */
static PyObject *begin_named(PyObject *const *args, Py_ssize_t nargs, bool rewind)
{
    uint64_t time = sp_clock_now();
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, rewind ? "rewind_begin(name, file, line)"
                                                : "region_begin(name, file, line)");
        return NULL;
    }
    sp_location *loc = sp_python_location();
    if (!loc)
        Py_RETURN_NONE;
    uint32_t region;
    int found = named_region_of(args, &region);
    if (found < 0)
        return NULL;
    if (found && rewind)
        sp_rewind_begin(loc, region, time);
    else if (found)
        sp_enter(loc, region, SP_KEY_NAMED | region, time);
    Py_RETURN_NONE;
}

static PyObject *py_region_begin(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return begin_named(args, nargs, false);
}

static PyObject *py_region_end(PyObject *self, PyObject *name)
{
    (void)self;
    uint64_t time = sp_clock_now();
    sp_location *loc = sp_python_location();
    if (!loc)
        Py_RETURN_NONE;
    const char *text;
    uint32_t region;
    int found = existing_region_of(name, &text, &region);
    if (found < 0)
        return NULL;
    if (found && (region == SP_NO_ID || !sp_leave(loc, SP_KEY_NAMED | region, time)))
        sp_region_exit_without_enter(loc, text, time);
    Py_RETURN_NONE;
}

static PyObject *py_code_region_begin(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    uint64_t time = sp_clock_now();
    if (nargs != 3 || !PyCode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "code_region_begin(code, module, qualname)");
        return NULL;
    }
    sp_location *loc = sp_python_location();
    if (!loc)
        Py_RETURN_NONE;
    uint32_t region;
    if (sp_python_code_region((PyCodeObject *)args[0], args[1], args[2], &region))
        sp_enter(loc, region, (uintptr_t)args[0], time);
    Py_RETURN_NONE;
}

static PyObject *py_code_region_end(PyObject *self, PyObject *code)
{
    (void)self;
    uint64_t time = sp_clock_now();
    sp_location *loc = sp_python_location();
    if (loc)
        sp_leave(loc, (uintptr_t)code, time);
    Py_RETURN_NONE;
}

static PyObject *py_rewind_begin(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return begin_named(args, nargs, true);
}

static PyObject *py_rewind_end(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    uint64_t time = sp_clock_now();
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "rewind_end(name, value)");
        return NULL;
    }
    sp_location *loc = sp_python_location();
    if (!loc)
        Py_RETURN_NONE;
    int discard = PyObject_IsTrue(args[1]);
    if (discard < 0)
        return NULL;
    const char *text;
    uint32_t region;
    int found = existing_region_of(args[0], &text, &region);
    if (found < 0)
        return NULL;
    if (found && (region == SP_NO_ID || !sp_rewind_end(loc, region, discard, time)))
        sp_region_exit_without_enter(loc, text, time);
    Py_RETURN_NONE;
}

/* ---- samples taken apart from the event path (the Jupyter kernel's monitor) ----------- */

/* metric_samples(columns, rows): columns (name, unit, description, is_double, mode) with
 * mode "absolute_point", "absolute_last" or "relative_last"; rows (time_ns, values) with a
 * value per column (None: 0). For the running measurement's trace. */
static PyObject *py_metric_samples(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *columns, *rows;
    if (!PyArg_ParseTuple(args, "OO", &columns, &rows))
        return NULL;
    PyObject *cols = PySequence_Fast(columns, "columns must be a sequence");
    if (!cols)
        return NULL;
    PyObject *rs = PySequence_Fast(rows, "rows must be a sequence");
    if (!rs) {
        Py_DECREF(cols);
        return NULL;
    }
    Py_ssize_t ncols = PySequence_Fast_GET_SIZE(cols), nrows = PySequence_Fast_GET_SIZE(rs);
    sp_metric_sample_column *c = calloc(ncols ? (size_t)ncols : 1, sizeof *c);
    uint64_t *times = calloc(nrows ? (size_t)nrows : 1, sizeof *times);
    uint64_t *values = calloc(nrows && ncols ? (size_t)(nrows * ncols) : 1, sizeof *values);
    PyObject *result = NULL;
    if (!c || !times || !values) {
        PyErr_NoMemory();
        goto out;
    }
    if (ncols > 200) {
        PyErr_SetString(PyExc_ValueError, "at most 200 sample columns");
        goto out;
    }
    for (Py_ssize_t i = 0; i < ncols; i++) {
        const char *name, *unit, *description, *mode;
        int is_double;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(cols, i), "sssps", &name, &unit,
                              &description, &is_double, &mode))
            goto out;
        snprintf(c[i].name, sizeof c[i].name, "%s", name);
        snprintf(c[i].unit, sizeof c[i].unit, "%s", unit);
        snprintf(c[i].description, sizeof c[i].description, "%s", description);
        c[i].is_double = is_double;
        c[i].mode = strcmp(mode, "absolute_last") == 0   ? SP_METRIC_ABSOLUTE_LAST
                    : strcmp(mode, "relative_last") == 0 ? SP_METRIC_RELATIVE_LAST
                                                         : SP_METRIC_ABSOLUTE_POINT;
    }
    for (Py_ssize_t r = 0; r < nrows; r++) {
        PyObject *time, *vals;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(rs, r), "OO", &time, &vals))
            goto out;
        times[r] = PyLong_AsUnsignedLongLong(time);
        if (PyErr_Occurred())
            goto out;
        PyObject *vs = PySequence_Fast(vals, "values must be a sequence");
        if (!vs)
            goto out;
        if (PySequence_Fast_GET_SIZE(vs) != ncols) {
            Py_DECREF(vs);
            PyErr_SetString(PyExc_ValueError, "a row needs a value per column");
            goto out;
        }
        for (Py_ssize_t k = 0; k < ncols; k++) {
            PyObject *v = PySequence_Fast_GET_ITEM(vs, k);
            uint64_t bits = 0;
            if (v != Py_None && c[k].is_double) {
                double d = PyFloat_AsDouble(v);
                memcpy(&bits, &d, sizeof bits);
            } else if (v != Py_None) {
                bits = PyLong_AsUnsignedLongLong(v);
            }
            values[r * ncols + k] = bits;
        }
        Py_DECREF(vs);
        if (PyErr_Occurred())
            goto out;
    }
    char err[256] = "";
    if (sp_metric_samples_set(c, (uint32_t)ncols, times, values, (uint64_t)nrows, err,
                              sizeof err) != 0) {
        PyErr_SetString(PyExc_RuntimeError, err);
        goto out;
    }
    result = Py_None;
    Py_INCREF(result);
out:
    free(c);
    free(times);
    free(values);
    Py_DECREF(cols);
    Py_DECREF(rs);
    return result;
}

/* ---- garbage collections (gc.callbacks, SCOREP_PYTHON_GC) ------------------------------- */

static PyObject *py_gc_callback(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return sp_python_gc_callback_new();
}

/* ---- parameters and recording -------------------------------------------------------- */

/* parameter_int/uint/string(name, value): the value converted as `type` says, recorded on
 * the calling thread's location. */
static PyObject *record_parameter(PyObject *const *args, Py_ssize_t nargs, sp_param_type type,
                                  const char *usage)
{
    uint64_t time = sp_clock_now();
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, usage);
        return NULL;
    }
    int64_t number = 0;
    const char *text = NULL;
    if (type == SP_PARAM_INT64) {
        long long value = PyLong_AsLongLong(args[1]);
        if (value == -1 && PyErr_Occurred())
            return NULL;
        number = value;
    } else if (type == SP_PARAM_UINT64) {
        unsigned long long value = PyLong_AsUnsignedLongLong(args[1]);
        if (value == (unsigned long long)-1 && PyErr_Occurred())
            return NULL;
        number = (int64_t)value;
    } else {
        text = PyUnicode_AsUTF8(args[1]);
        if (!text)
            return NULL;
    }
    sp_location *loc = sp_python_location();
    if (!loc)
        Py_RETURN_NONE;
    const char *name = PyUnicode_AsUTF8(args[0]);
    if (!name)
        return NULL;
    uint32_t parameter = sp_parameter_define(name, type);
    if (parameter == SP_NO_ID)
        Py_RETURN_NONE;
    if (type == SP_PARAM_INT64) {
        sp_parameter_int(loc, parameter, number, time);
    } else if (type == SP_PARAM_UINT64) {
        sp_parameter_uint(loc, parameter, (uint64_t)number, time);
    } else {
        uint32_t string = sp_string_define(text);
        if (string != SP_NO_ID)
            sp_parameter_string(loc, parameter, string, time);
    }
    Py_RETURN_NONE;
}

static PyObject *py_parameter_int(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return record_parameter(args, nargs, SP_PARAM_INT64, "parameter_int(name, value)");
}

static PyObject *py_parameter_uint(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return record_parameter(args, nargs, SP_PARAM_UINT64, "parameter_uint(name, value)");
}

static PyObject *py_parameter_string(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return record_parameter(args, nargs, SP_PARAM_STRING, "parameter_string(name, value)");
}

static PyObject *py_set_recording(PyObject *self, PyObject *on)
{
    (void)self;
    uint64_t time = sp_clock_now();
    int value = PyObject_IsTrue(on);
    if (value < 0)
        return NULL;
    if (sp_measurement_running())
        sp_set_recording(value, time);
    Py_RETURN_NONE;
}

static PyObject *py_lines_code(PyObject *self, PyObject *code)
{
    (void)self;
    if (!PyCode_Check(code)) {
        PyErr_SetString(PyExc_TypeError, "lines_code(code object)");
        return NULL;
    }
    if (sp_python_lines_add_code((PyCodeObject *)code) != 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_exclude_code(PyObject *self, PyObject *code)
{
    (void)self;
    if (!PyCode_Check(code)) {
        PyErr_SetString(PyExc_TypeError, "exclude_code(code object)");
        return NULL;
    }
    if (sp_measurement_running())
        sp_python_exclude_code((PyCodeObject *)code);
    Py_RETURN_NONE;
}

static PyObject *py_abandon(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    sp_python_adapter_stop();
    sp_python_memory_hook(false);
    sp_measurement_abandon();
    sp_process_forget();
    Py_RETURN_NONE;
}

/* ---- child processes (adapters/process) ------------------------------------------------ */

static PyObject *py_process_root(PyObject *self, PyObject *arg)
{
    (void)self;
    double timeout = PyFloat_AsDouble(arg);
    if (timeout == -1.0 && PyErr_Occurred())
        return NULL;
    char err[512];
    if (sp_process_root(timeout, err, sizeof err) != 0) {
        PyErr_SetString(PyExc_RuntimeError, err);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *py_process_wait(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    Py_BEGIN_ALLOW_THREADS
    sp_process_wait();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *py_process_member(PyObject *self, PyObject *args)
{
    (void)self;
    sp_process_lineage lineage = {0};
    PyObject *dir = NULL;
    const char *method;
    double timeout;
    unsigned long long parent_pid;
    long long reserved = -1;
    if (!PyArg_ParseTuple(args, "O&IIIKsd|L", PyUnicode_FSConverter, &dir, &lineage.root,
                          &lineage.parent, &lineage.base, &parent_pid, &method, &timeout,
                          &reserved))
        return NULL;
    lineage.parent_pid = parent_pid;
    int fits = snprintf(lineage.dir, sizeof lineage.dir, "%s", PyBytes_AS_STRING(dir)) <
               (int)sizeof lineage.dir;
    Py_DECREF(dir);
    char err[512] = "the experiment directory's path is too long";
    uint32_t number = reserved < 0 || reserved >= SP_PROCESS_NONE ? SP_PROCESS_NONE
                                                                   : (uint32_t)reserved;
    if (!fits || sp_process_member(&lineage, method, timeout, number, err, sizeof err) != 0) {
        PyErr_SetString(PyExc_RuntimeError, err);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *py_process_reserve(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    uint32_t number = sp_process_reserve();
    if (number == SP_PROCESS_NONE)
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLong(number);
}

static PyObject *py_process_reserved_pid(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned int number;
    unsigned long long pid;
    if (!PyArg_ParseTuple(args, "IK", &number, &pid))
        return NULL;
    sp_process_reserved_pid(number, pid);
    Py_RETURN_NONE;
}

static PyObject *py_process_unreserve(PyObject *self, PyObject *arg)
{
    (void)self;
    unsigned long number = PyLong_AsUnsignedLong(arg);
    if (number == (unsigned long)-1 && PyErr_Occurred())
        return NULL;
    sp_process_unreserve((uint32_t)number);
    Py_RETURN_NONE;
}

/* The lineage that `get` gives (the core decides whether there is one), as a dict; None
 * when there is none. */
static PyObject *lineage_or_none(bool (*get)(sp_process_lineage *out))
{
    sp_process_lineage l;
    if (!get(&l))
        Py_RETURN_NONE;
    return Py_BuildValue("{s:N,s:I,s:I,s:I,s:K}", "dir", PyUnicode_DecodeFSDefault(l.dir),
                         "root", l.root, "parent", l.parent, "base", l.base, "parent_pid",
                         (unsigned long long)l.parent_pid);
}

static PyObject *py_process_lineage(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return lineage_or_none(sp_process_lineage_for_child);
}

static PyObject *py_process_forked_lineage(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return lineage_or_none(sp_process_forked_lineage);
}

/* The process's own environment, as the C library holds it: what execv, system() and a
 * child started without an environment of its own get. os.environ is a copy that
 * os.putenv, os.unsetenv and C code's setenv leave behind; a child's environment built from
 * os.environ would lose what they set. A list of b"NAME=value". */
static PyObject *py_environ(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    PyObject *list = PyList_New(0);
    if (!list)
        return NULL;
    for (char **entry = environ; entry && *entry; entry++) {
        PyObject *item = PyBytes_FromString(*entry);
        if (!item || PyList_Append(list, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(item);
    }
    return list;
}

static PyObject *py_process_set_name(PyObject *self, PyObject *name)
{
    (void)self;
    const char *text = PyUnicode_AsUTF8(name);
    if (!text)
        return NULL;
    sp_process_set_name(text);
    Py_RETURN_NONE;
}

static PyObject *py_recording(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    /* Also in a forked child, whose copy of the measurement stopped in the fork. */
    return PyBool_FromLong(sp_measurement_recording());
}

static PyObject *py_watch_signal(PyObject *self, PyObject *arg)
{
    (void)self;
    long sig = PyLong_AsLong(arg);
    if (sig == -1 && PyErr_Occurred())
        return NULL;
    if (sp_python_watch_signal((int)sig) != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    Py_RETURN_NONE;
}

static PyObject *py_signal_handled(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    sp_python_signal_handled();
    Py_RETURN_NONE;
}

/* The calling thread's events are not recorded until release_events(): the tool's own
 * Python code that calls into the standard library (json, os.environ) while the program
 * is measured. Nests. */
static PyObject *py_hold_events(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    sp_thread.busy++;
    Py_RETURN_NONE;
}

static PyObject *py_release_events(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (sp_thread.busy)
        sp_thread.busy--;
    Py_RETURN_NONE;
}

/* ---- filter files, for the command line's checks and scorep-score ------------------- */

static void free_filter_capsule(PyObject *capsule)
{
    sp_filter_free(PyCapsule_GetPointer(capsule, "scorep.filter"));
}

static PyObject *py_filter_load(PyObject *self, PyObject *path)
{
    (void)self;
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(path, &bytes))
        return NULL;
    sp_filter *filter = NULL;
    char err[1024];
    int status = sp_filter_load(PyBytes_AS_STRING(bytes), &filter, err, sizeof err);
    Py_DECREF(bytes);
    if (status != 0) {
        PyErr_SetString(PyExc_ValueError, err);
        return NULL;
    }
    PyObject *capsule = PyCapsule_New(filter, "scorep.filter", free_filter_capsule);
    if (!capsule)
        sp_filter_free(filter);
    return capsule;
}

static PyObject *py_filter_excludes(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule;
    const char *name, *mangled = NULL, *file = NULL;
    if (!PyArg_ParseTuple(args, "Os|zz", &capsule, &name, &mangled, &file))
        return NULL;
    sp_filter *filter = PyCapsule_GetPointer(capsule, "scorep.filter");
    if (!filter)
        return NULL;
    return PyBool_FromLong(sp_filter_excludes(filter, name, mangled, file));
}

static PyObject *py_filter_rule_count(PyObject *self, PyObject *capsule)
{
    (void)self;
    sp_filter *filter = PyCapsule_GetPointer(capsule, "scorep.filter");
    if (!filter)
        return NULL;
    return PyLong_FromSize_t(sp_filter_rule_count(filter));
}

static PyObject *py_experiment_dir(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    const char *dir = sp_measurement_experiment_dir();
    if (!dir)
        Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(dir);
}

/* Before the end of an MPI-mode measurement whose ranks never initialized MPI: the
 * directory Python prepared for this process alone. */
static PyObject *py_experiment_dir_prepare(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *bytes;
    int overwrite;
    if (!PyArg_ParseTuple(args, "O&p", PyUnicode_FSConverter, &bytes, &overwrite))
        return NULL;
    sp_experiment_dir_claim claim;
    char err[8192] = "";
    int status =
        sp_experiment_dir_prepare(PyBytes_AS_STRING(bytes), overwrite != 0, &claim, err, sizeof err);
    Py_DECREF(bytes);
    if (status != 0) {
        PyErr_SetString(PyExc_RuntimeError, err);
        return NULL;
    }
    PyObject *moved = claim.moved_to[0] ? PyUnicode_DecodeFSDefault(claim.moved_to) : NULL;
    if (claim.moved_to[0] && !moved)
        return NULL;
    return Py_BuildValue("(NN)", moved ? moved : (Py_INCREF(Py_None), Py_None),
                         claim.lock_fd >= 0 ? PyLong_FromLong(claim.lock_fd)
                                            : (Py_INCREF(Py_None), Py_None));
}

static PyObject *py_set_experiment_dir(PyObject *self, PyObject *path)
{
    (void)self;
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(path, &bytes))
        return NULL;
    char err[512];
    int status = sp_measurement_set_experiment_dir(PyBytes_AS_STRING(bytes), err, sizeof err);
    Py_DECREF(bytes);
    if (status != 0) {
        PyErr_SetString(PyExc_RuntimeError, err);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *py_mpi_info(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    uint32_t rank, size;
    if (!sp_measurement_group(&rank, &size))
        Py_RETURN_NONE;
    return Py_BuildValue("(II)", rank, size);
}

static PyObject *py_set_exit_status(PyObject *self, PyObject *args)
{
    (void)self;
    long long status;
    if (!PyArg_ParseTuple(args, "L", &status))
        return NULL;
    sp_measurement_set_exit_status(status);
    Py_RETURN_NONE;
}

static PyObject *py_tsc_usable(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    char why[256] = "";
    bool ok = sp_clock_tsc_usable(why, sizeof why);
    return Py_BuildValue("(Ns)", PyBool_FromLong(ok), why);
}

static PyObject *py_tsc_synchronized(PyObject *self, PyObject *budget)
{
    (void)self;
    long ms = PyLong_AsLong(budget);
    if (ms < 0 && PyErr_Occurred())
        return NULL;
    char why[256] = "";
    uint64_t hand_overs = 0, resolution_ns = 0;
    bool ok;
    Py_BEGIN_ALLOW_THREADS
    ok = sp_clock_tsc_synchronized(ms > 0 ? (unsigned)ms : 1u, &hand_overs, &resolution_ns, why,
                                   sizeof why);
    Py_END_ALLOW_THREADS
    return Py_BuildValue("(NKKs)", PyBool_FromLong(ok), (unsigned long long)hand_overs,
                         (unsigned long long)resolution_ns, why);
}

static PyObject *py_tsc_invariant(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyBool_FromLong(sp_clock_tsc_invariant());
}

static PyObject *py_set_sampling_async(PyObject *self, PyObject *arg)
{
    (void)self;
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
    sp_python_sampling_set_async(on);
    Py_RETURN_NONE;
}

static PyObject *py_set_sampling_native(PyObject *self, PyObject *arg)
{
    (void)self;
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
    sp_python_sampling_set_native(on);
    Py_RETURN_NONE;
}

static PyObject *py_sampling_counts(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    uint64_t c[13], n[5];
    sp_python_sampling_counts(c);
    sp_python_native_counts(n);
    return Py_BuildValue("{sKsKsKsKsKsisKsKsKsKsKsKsKsKsKsKsKsK}", "async", (unsigned long long)c[0],
                         "unknown_code", (unsigned long long)c[1], "failed_check",
                         (unsigned long long)c[2], "new_thread", (unsigned long long)c[3],
                         "no_read", (unsigned long long)c[4], "unavailable_errno", (int)c[5],
                         "native_stacks", (unsigned long long)n[0], "native_missed",
                         (unsigned long long)n[1], "native_blocked",
                         (unsigned long long)n[2], "native_interrupted",
                         (unsigned long long)n[3], "native_completed_writes",
                         (unsigned long long)n[4], "native_merged", (unsigned long long)c[6],
                         "native_unmatched", (unsigned long long)c[7], "owed_dropped_ns",
                         (unsigned long long)c[8], "owed_left_ns", (unsigned long long)c[9],
                         "gap_cut_ns", (unsigned long long)c[10], "gaps",
                         (unsigned long long)c[11], "hook_waits", (unsigned long long)c[12]);
}

static PyMethodDef methods[] = {
    {"set_sampling_async", py_set_sampling_async, METH_O,
     "Read samples where the threads are (True) or at safe points (False); before start."},
    {"set_sampling_native", py_set_sampling_native, METH_O,
     "Samples carry the threads' native frames (--native); before start."},
    {"sampling_counts", py_sampling_counts, METH_NOARGS,
     "Samples of the last measurement: read where the threads were, and taken at a safe "
     "point instead, by reason."},
    {"start", py_start, METH_O,
     "start(config): start a measurement in this process; config is a dict with exactly the "
     "fields of start_defaults()."},
    {"start_defaults", py_start_defaults, METH_NOARGS,
     "Every field start() takes, at the core's default."},
    {"finalize", py_finalize, METH_VARARGS,
     "finalize(exit_status=0) -> dict: close the measurement and write its files."},
    {"running", py_running, METH_NOARGS, "Whether a measurement runs."},
    {"register", py_register, METH_NOARGS, "Switch automatic instrumentation on."},
    {"unregister", py_unregister, METH_NOARGS, "Switch automatic instrumentation off."},
    {"registered", py_registered, METH_NOARGS, "Whether automatic instrumentation is on."},
    {"thread_begin", py_thread_begin, METH_O, "Measure the calling thread, named as given."},
    {"thread_rename", py_thread_rename, METH_O, "Rename the calling thread's location."},
    {"quiet_begin", py_quiet_begin, METH_NOARGS,
     "The tool's own work on this thread begins: nothing is recorded until quiet_end()."},
    {"quiet_end", py_quiet_end, METH_NOARGS, "The tool's own work on this thread ends."},
    {"set_abort_callback", py_set_abort_callback, METH_O,
     "A callable run after MPI_Abort made the core write this rank's results."},
    {"thread_ended", py_thread_ended, METH_NOARGS,
     "The calling thread's work is done: its buffers go back to the budget."},
    {"region_begin", (PyCFunction)(void (*)(void))py_region_begin, METH_FASTCALL,
     "region_begin(name, file, line)"},
    {"region_end", py_region_end, METH_O, "region_end(name)"},
    {"code_region_begin", (PyCFunction)(void (*)(void))py_code_region_begin, METH_FASTCALL,
     "code_region_begin(code, module, qualname)"},
    {"code_region_end", py_code_region_end, METH_O, "code_region_end(code)"},
    {"rewind_begin", (PyCFunction)(void (*)(void))py_rewind_begin, METH_FASTCALL,
     "rewind_begin(name, file, line)"},
    {"rewind_end", (PyCFunction)(void (*)(void))py_rewind_end, METH_FASTCALL,
     "rewind_end(name, discard)"},
    {"parameter_int", (PyCFunction)(void (*)(void))py_parameter_int, METH_FASTCALL, NULL},
    {"parameter_uint", (PyCFunction)(void (*)(void))py_parameter_uint, METH_FASTCALL, NULL},
    {"parameter_string", (PyCFunction)(void (*)(void))py_parameter_string, METH_FASTCALL, NULL},
    {"set_recording", py_set_recording, METH_O, "Switch recording on or off."},
    {"metric_samples", py_metric_samples, METH_VARARGS,
     "metric_samples(columns, rows): samples for the trace as asynchronous metrics."},
    {"gc_callback", py_gc_callback, METH_NOARGS,
     "A gc.callbacks entry: each collection is the region gc:collect (generation a parameter)."},
    {"filter_load", py_filter_load, METH_O,
     "filter_load(path) -> filter: parse a Score-P filter file (ValueError: file:line: why)."},
    {"filter_excludes", py_filter_excludes, METH_VARARGS,
     "filter_excludes(filter, name, mangled=None, file=None) -> bool"},
    {"filter_rule_count", py_filter_rule_count, METH_O, "Number of patterns of a filter."},
    {"experiment_dir", py_experiment_dir, METH_NOARGS, "The running measurement's directory."},
    {"experiment_dir_prepare", py_experiment_dir_prepare, METH_VARARGS,
     "experiment_dir_prepare(path, overwrite) -> (moved_to, lock_fd): the one policy for an "
     "experiment directory (core/experiment_dir.h); RuntimeError with the reason."},
    {"set_experiment_dir", py_set_experiment_dir, METH_O,
     "Where an MPI-mode measurement without MPI writes."},
    {"mpi_info", py_mpi_info, METH_NOARGS, "(rank, size) once MPI is initialized, else None."},
    {"set_exit_status", py_set_exit_status, METH_VARARGS,
     "set_exit_status(status): the program's exit status, for a write at MPI_Finalize."},
    {"exclude_code", py_exclude_code, METH_O, "Never record this code object."},
    {"lines_code", py_lines_code, METH_O,
     "Profile this code object's lines (scorep.user.lines), now and in later measurements."},
    {"abandon", py_abandon, METH_NOARGS,
     "Stop measuring without writing anything (a forked child of a measured process)."},
    {"tsc_usable", py_tsc_usable, METH_NOARGS, "(usable, reason) for the TSC timer."},
    {"process_root", py_process_root, METH_O,
     "process_root(timeout): this process is the root of the children it starts."},
    {"process_member", py_process_member, METH_VARARGS,
     "process_member(dir, root, parent, base, parent_pid, method, timeout): join as a child."},
    {"process_wait", py_process_wait, METH_NOARGS,
     "The root waits (GIL released) until its child processes ended, at most its timeout."},
    {"process_reserve", py_process_reserve, METH_NOARGS,
     "A number for a child about to start (None: children are not followed)."},
    {"process_reserved_pid", py_process_reserved_pid, METH_VARARGS,
     "process_reserved_pid(number, pid): the reserved child's pid."},
    {"process_unreserve", py_process_unreserve, METH_O, "The child did not start after all."},
    {"process_lineage", py_process_lineage, METH_NOARGS,
     "What a child started now inherits (dict), or None."},
    {"process_forked_lineage", py_process_forked_lineage, METH_NOARGS,
     "In a forked child: what the parent handed down (dict), or None."},
    {"process_set_name", py_process_set_name, METH_O, "The child process's name."},
    {"environ", py_environ, METH_NOARGS,
     "The C environment (list of b\"NAME=value\"), which os.environ does not follow."},
    {"recording", py_recording, METH_NOARGS, "Whether recording is on."},
    {"watch_signal", py_watch_signal, METH_O,
     "watch_signal(signum): the signal is sent to the main thread again until its Python "
     "handler calls signal_handled()."},
    {"signal_handled", py_signal_handled, METH_NOARGS,
     "The Python handler of a watched signal started."},
    {"hold_events", py_hold_events, METH_NOARGS,
     "The calling thread records nothing until release_events() (nests)."},
    {"release_events", py_release_events, METH_NOARGS, "Ends one hold_events()."},
    {"tsc_invariant", py_tsc_invariant, METH_NOARGS, "Whether the CPU's TSC is invariant."},
    {"tsc_synchronized", py_tsc_synchronized, METH_O,
     "tsc_synchronized(budget_ms) -> (agree, hand_overs, resolution_ns, reason): whether the "
     "TSCs of the CPUs this process may run on agree."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "scorep._bindings", "The scorep measurement core.", -1, methods,
    NULL, NULL, NULL, NULL,
};

/* TRACE_RECORDS {event: raw records} and IO_CALLS {region: (events, count)}: the tables
 * scorep-score's trace-size estimate counts by, as the trace substrate and the I/O adapter
 * define them (core/measurement.h, core/io.h). */
static int add_event_tables(PyObject *m)
{
    static const char *const io_classes[] = {
        [SP_IO_CALL_NONE] = "none",         [SP_IO_CALL_CREATE] = "create",
        [SP_IO_CALL_DESTROY] = "destroy",   [SP_IO_CALL_SEEK] = "seek",
        [SP_IO_CALL_TRANSFER] = "transfer", [SP_IO_CALL_FLUSH] = "flush",
        [SP_IO_CALL_DUPLICATE] = "duplicate",
    };
    sp_trace_event_records records[64];
    size_t n = sp_measurement_trace_records(records, 64);
    PyObject *trace = PyDict_New(), *io = PyDict_New();
    int status = trace && io && n <= 64 ? 0 : -1;
    for (size_t i = 0; status == 0 && i < n; i++) {
        PyObject *v = PyLong_FromUnsignedLong(records[i].records);
        status = v ? PyDict_SetItemString(trace, records[i].event, v) : -1;
        Py_XDECREF(v);
    }
    size_t ncalls;
    const sp_io_call *calls = sp_io_calls(&ncalls);
    for (size_t i = 0; status == 0 && i < ncalls; i++) {
        PyObject *v = Py_BuildValue("(sI)", io_classes[calls[i].events], calls[i].count);
        status = v ? PyDict_SetItemString(io, calls[i].region, v) : -1;
        Py_XDECREF(v);
    }
    if (status == 0 && PyModule_AddObject(m, "TRACE_RECORDS", trace) == 0)
        trace = NULL;
    else
        status = -1;
    if (status == 0 && PyModule_AddObject(m, "IO_CALLS", io) == 0)
        io = NULL;
    else
        status = -1;
    Py_XDECREF(trace);
    Py_XDECREF(io);
    return status;
}

PyMODINIT_FUNC PyInit__bindings(void);
PyMODINIT_FUNC PyInit__bindings(void)
{
    if (sp_python_adapter_init() != 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    /* Sizes and limits the Python side needs (scorep-score's models, the notes on the
     * results): exported, so that Python never repeats them by hand. */
    sp_layout layout;
    sp_measurement_layout(&layout);
    if (PyModule_AddIntConstant(m, "CHUNK_SIZE", layout.chunk_bytes) < 0 ||
        PyModule_AddIntConstant(m, "TRACE_RECORD_SIZE", layout.trace_record_bytes) < 0 ||
        PyModule_AddIntConstant(m, "TRACE_CHUNK_HEADER_SIZE", layout.trace_chunk_header_bytes) < 0 ||
        PyModule_AddIntConstant(m, "PROFILE_BLOCK_NODES", layout.profile_nodes_per_chunk) < 0 ||
        PyModule_AddIntConstant(m, "PROFILE_MAX_PARAMETER_VALUES",
                                layout.profile_max_parameter_values) < 0 ||
        PyModule_AddIntConstant(m, "MAX_LOCATIONS", layout.max_locations) < 0 ||
        PyModule_AddIntConstant(m, "DEFAULT_MAX_CALLPATH_DEPTH",
                                layout.default_max_callpath_depth) < 0 ||
        PyModule_AddIntConstant(m, "DEFAULT_TOTAL_MEMORY", (long)layout.default_total_memory) < 0 ||
        add_event_tables(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
