/* Naming code objects as regions (module[.Class]:function) and caching the region in the
 * code object's co_extra slot. */
#include "adapters/python/internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/paths.h"

static void cache_region(PyCodeObject *code, int known, uint32_t region)
{
    uintptr_t v = ((uintptr_t)sp_py.generation30 << EXTRA_GENERATION_SHIFT) |
                  (known == CODE_FILTERED ? EXTRA_FILTERED : 0) |
                  (known == CODE_LINES ? EXTRA_LINES : 0) | (known == CODE_FILTERED ? 0 : region);
    saved_exception saved = exception_save();
    if (sp_code_set_extra((PyObject *)code, sp_py.code_extra_index, (void *)v) < 0)
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

/* A function's qualified name found from its module's globals alone (its frame is gone):
 * module-level functions and methods of the module's classes; else its plain name. */
PyObject *sp_python_qualname_in_globals(PyCodeObject *code, PyObject *globals)
{
    PyObject *q = qualname_in_dict(globals, code, 2);
    if (q)
        return q;
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
    if (!path[0] || !sp_py.cwd || !sp_path_absolute(sp_py.cwd, path, out, out_len))
        return path;
    return out;
}

/* mpi4py.futures runs the program's main script in its workers as module "__worker__" and
 * makes it sys.modules["__main__"]: it is the main module there, named so as in every other
 * way of running the program (profiles of the launch modes compare). */
static bool is_worker_main(const char *module)
{
    if (strcmp(module, "__worker__") != 0)
        return false;
    PyObject *modules = PyImport_GetModuleDict();
    PyObject *main = modules ? PyDict_GetItemString(modules, "__main__") : NULL;
    PyObject *name = main ? PyObject_GetAttrString(main, "__name__") : NULL;
    bool worker = name && PyUnicode_Check(name) &&
                  PyUnicode_CompareWithASCIIString(name, "__worker__") == 0;
    Py_XDECREF(name);
    PyErr_Clear();
    return worker;
}

/* A code object's file name as UTF-8. A name Python decoded with surrogateescape (bytes
 * not valid in the locale's encoding, e.g. UTF-8 paths under LC_ALL=C) is its original
 * bytes read as UTF-8, invalid ones replaced: the Python side converts paths the same way,
 * so excluded directories still match. `*decoded` keeps the text alive. */
static const char *filename_utf8(PyObject *filename, PyObject **decoded)
{
    *decoded = NULL;
    if (!PyUnicode_Check(filename))
        return "";
    const char *text = PyUnicode_AsUTF8(filename);
    if (text)
        return text;
    PyErr_Clear();
    PyObject *bytes = PyUnicode_EncodeFSDefault(filename);
    if (bytes) {
        *decoded = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(bytes), PyBytes_GET_SIZE(bytes),
                                        "replace");
        Py_DECREF(bytes);
        if (*decoded && (text = PyUnicode_AsUTF8(*decoded)))
            return text;
    }
    PyErr_Clear();
    return "";
}

/* `frame` (when known) is the frame about to run or running `code`; `globals` those of the
 * function when there is no frame object yet (frame evaluation on 3.11). */
int sp_python_define_code_region(PyCodeObject *code, PyFrameObject *frame, PyObject *globals,
                                 PyObject *module, PyObject *qualname, uint32_t *region)
{
    saved_exception saved = exception_save();
    int known = CODE_FILTERED;
    PyObject *own_module = NULL, *own_qualname = NULL;
    char path[4096];
    PyObject *decoded_filename = NULL;
    const char *filename = filename_utf8(code->co_filename, &decoded_filename);
    if (!sp_path_absolute(sp_py.cwd, filename, path, sizeof path))
        snprintf(path, sizeof path, "%s", filename);
    Py_XDECREF(decoded_filename);
    for (size_t i = 0; i < sp_py.exclude_count; i++)
        if (sp_path_is_within(path, sp_py.exclude_dirs[i]))
            goto done; /* the measurement's own code, or code its host excluded */

    if (!module && globals) {
        module = own_module = globals_module_name(globals);
    } else if (!module) {
#if PY_VERSION_HEX >= 0x030B0000
        /* The running function's globals, not a frame object made for them: making one
         * allocates, so it may run the garbage collector inside the program's call, whose
         * callbacks then see a frame the program would not have (test_frame's
         * test_sneaky_frame_object). */
        if (!frame)
            module = own_module = globals_module_name(PyEval_GetGlobals());
        else
#endif
        {
            if (!frame)
                frame = PyEval_GetFrame();
            module = own_module = frame_module_name(frame);
        }
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
    /* multiprocessing runs the program's main module as __mp_main__ in the processes it
     * spawns, mpi4py.futures as __worker__: the same functions as the parent's __main__, so
     * the same regions. */
    if (module_text && (strcmp(module_text, "__mp_main__") == 0 || is_worker_main(module_text)))
        module_text = "__main__";
    char *name = region_name(module_text ? module_text : "unknown",
                             qualname_text ? qualname_text : PyUnicode_AsUTF8(code->co_name));
    if (name) {
        char *canonical = malloc(strlen(name) + (qualname_text ? strlen(qualname_text) : 0) + 2);
        if (canonical)
            sprintf(canonical, "%s:%s", module_text ? module_text : "unknown",
                    qualname_text ? qualname_text : "");
        /* A filtered function is decided here, once: on 3.12+ its events are then switched
         * off for good, before that it costs a cache lookup per call. */
        uint32_t id = sp_region_define_code(name, canonical ? canonical : name, path,
                                            code->co_firstlineno);
        if (id != SP_NO_ID) {
            *region = id;
            known = sp_python_lines_chosen(code, name) ? CODE_LINES : CODE_RECORDED;
        }
        free(canonical);
        free(name);
    }
done:
    Py_XDECREF(own_module);
    Py_XDECREF(own_qualname);
    exception_restore(saved);
    cache_region(code, known, known == CODE_FILTERED ? 0 : *region);
    return known;
}

bool sp_python_code_region(PyCodeObject *code, PyObject *module, PyObject *qualname,
                           uint32_t *region)
{
    return lookup_code_region(code, NULL, NULL, module, qualname, region) != CODE_FILTERED;
}

void sp_python_exclude_code(PyCodeObject *code)
{
    cache_region(code, CODE_FILTERED, 0);
}

int sp_python_lines_add_code(PyCodeObject *code)
{
    if (!sp_py.line_codes) {
        sp_py.line_codes = PySet_New(NULL);
        if (!sp_py.line_codes)
            return -1;
    }
    if (PySet_Add(sp_py.line_codes, (PyObject *)code) < 0)
        return -1;
    /* Already seen in this measurement: its cached answer changes now. */
    uint32_t region;
    if (cached_region(code, &region) == CODE_RECORDED) {
#if SP_HAVE_MONITORING
        if (sp_python_monitoring_line_events(code) < 0)
            return -1;
#endif
        cache_region(code, CODE_LINES, region);
    }
    return 0;
}

