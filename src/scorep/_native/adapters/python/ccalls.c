/* C functions called from Python as regions: their names (module[.Type]:function, and the
 * spelling cProfile gives them, kept as the region's canonical name for the .prof export) and
 * the table from C callable to region. */
#include "adapters/python/internal.h"

#include <stdlib.h>
#include <string.h>

#define C_TABLE_INITIAL 1024

int sp_python_c_calls_start(bool on)
{
    sp_py.c_calls = on;
    sp_py.c_count = 0;
    /* Region ids and filter decisions belong to one measurement. */
    if (sp_py.c_slots)
        memset(sp_py.c_slots, 0, (sp_py.c_mask + 1) * sizeof *sp_py.c_slots);
    Py_CLEAR(sp_py.c_kept);
    return 0;
}

void sp_python_c_calls_stop(void)
{
    sp_py.c_calls = false;
}

static void table_insert(uintptr_t key, uint32_t value)
{
    size_t mask = sp_py.c_mask;
    size_t i = (size_t)((key >> 4) * 0x9E3779B97F4A7C15ull >> 20) & mask;
    while (sp_py.c_slots[i].key && sp_py.c_slots[i].key != key)
        i = (i + 1) & mask;
    if (!sp_py.c_slots[i].key)
        sp_py.c_count++;
    sp_py.c_slots[i] = (struct sp_c_slot){key, value};
}

/* Room for one more entry at a load of at most one half. Returns false when out of memory:
 * the callable is then not cached (and defined again at its next call). */
static bool table_room(void)
{
    if (sp_py.c_mask && (sp_py.c_count + 1) * 2 <= sp_py.c_mask + 1)
        return true;
    size_t old_capacity = sp_py.c_mask ? sp_py.c_mask + 1 : 0;
    size_t capacity = old_capacity ? old_capacity * 2 : C_TABLE_INITIAL;
    struct sp_c_slot *old = sp_py.c_slots;
    struct sp_c_slot *slots = calloc(capacity, sizeof *slots);
    if (!slots)
        return false;
    sp_py.c_slots = slots;
    sp_py.c_mask = capacity - 1;
    sp_py.c_count = 0;
    for (size_t i = 0; i < old_capacity; i++)
        if (old[i].key)
            table_insert(old[i].key, old[i].value);
    free(old);
    return true;
}

/* "module.Type" of a C type: tp_name is "module.Type" for extension types and the bare
 * name for the interpreter's own ("list"), which live in builtins. */
static PyObject *type_path(PyTypeObject *type)
{
    return strchr(type->tp_name, '.') ? PyUnicode_FromString(type->tp_name)
                                      : PyUnicode_FromFormat("builtins.%s", type->tp_name);
}

/* The name of a module given as a str or a module object, or NULL. */
static PyObject *module_name_of(PyObject *module)
{
    if (!module)
        return NULL;
    if (PyUnicode_Check(module)) {
        Py_INCREF(module);
        return module;
    }
    if (PyModule_Check(module)) {
        PyObject *name = PyModule_GetNameObject(module);
        if (!name)
            PyErr_Clear();
        return name;
    }
    return NULL;
}

/* The region name and cProfile's spelling of a builtin function or bound method, as
 * _lsprof.c's normalizeUserObj spells it: a method of a type is repr() of the type's
 * attribute ("<method 'append' of 'list' objects>"), anything else
 * "<built-in method module.name>". */
static int name_cfunction(PyCFunctionObject *fn, PyObject **name, PyObject **spelling)
{
    const char *fname = fn->m_ml->ml_name;
    PyObject *self = fn->m_self;
    if (self && !PyModule_Check(self)) {
        PyTypeObject *type = PyType_Check(self) ? (PyTypeObject *)self : Py_TYPE(self);
        PyObject *attr_name = PyUnicode_FromString(fname);
        PyObject *attr = attr_name ? _PyType_Lookup(Py_TYPE(self), attr_name) : NULL;
        Py_XDECREF(attr_name);
        PyErr_Clear();
        if (attr && Py_IS_TYPE(attr, &PyMethodDescr_Type) &&
            ((PyMethodDescrObject *)attr)->d_method == fn->m_ml)
            type = PyDescr_TYPE(attr); /* where it is defined: ndarray's dot on a subclass */
        if (attr)
            *spelling = PyObject_Repr(attr);
        PyObject *path = type_path(type);
        *name = path ? PyUnicode_FromFormat("%U:%s", path, fname) : NULL;
        Py_XDECREF(path);
        if (*spelling && *name)
            return 0;
        PyErr_Clear();
        Py_CLEAR(*spelling);
    }
    PyObject *module = module_name_of(fn->m_module);
    if (!module && self && PyModule_Check(self))
        module = module_name_of(self);
    if (!*name)
        *name = PyUnicode_FromFormat("%s:%s", module ? PyUnicode_AsUTF8(module) : "builtins",
                                     fname);
    *spelling = module ? PyUnicode_FromFormat("<built-in method %U.%s>", module, fname)
                       : PyUnicode_FromFormat("<built-in method %s>", fname);
    Py_XDECREF(module);
    return *name && *spelling ? 0 : -1;
}

/* A method descriptor (sys.monitoring reports `lst.sort()` as list.sort called with lst):
 * "module.Type:method", spelled as its repr, which is what cProfile shows. */
static int name_method_descriptor(PyMethodDescrObject *descr, PyObject **name,
                                  PyObject **spelling)
{
    PyObject *path = type_path(PyDescr_TYPE(descr));
    *name = path ? PyUnicode_FromFormat("%U:%s", path, descr->d_method->ml_name) : NULL;
    Py_XDECREF(path);
    *spelling = PyObject_Repr((PyObject *)descr);
    return *name && *spelling ? 0 : -1;
}

/* A numpy ufunc: "numpy:exp", spelled as its repr ("<ufunc 'exp'>"; cProfile does not see
 * ufunc calls). */
static int name_ufunc(PyObject *ufunc, PyObject **name, PyObject **spelling)
{
    PyObject *fname = PyObject_GetAttrString(ufunc, "__name__");
    *name = fname && PyUnicode_Check(fname) ? PyUnicode_FromFormat("numpy:%U", fname) : NULL;
    Py_XDECREF(fname);
    *spelling = PyObject_Repr(ufunc);
    return *name && *spelling ? 0 : -1;
}

int sp_python_define_c_region(uintptr_t key, PyObject *callable, uint32_t *region)
{
    saved_exception saved = exception_save();
    PyObject *name = NULL, *spelling = NULL;
    int named;
    PyTypeObject *t = Py_TYPE(callable);
    if (t == &PyMethodDescr_Type)
        named = name_method_descriptor((PyMethodDescrObject *)callable, &name, &spelling);
    else if (t == sp_py.ufunc_type)
        named = name_ufunc(callable, &name, &spelling);
    else
        named = name_cfunction((PyCFunctionObject *)callable, &name, &spelling);
    uint32_t id = SP_NO_ID;
    const char *name_text = named == 0 ? PyUnicode_AsUTF8(name) : NULL;
    const char *spelling_text = name_text ? PyUnicode_AsUTF8(spelling) : NULL;
    /* The measurement's own C functions (scorep._bindings: user regions, parameters) are
     * never regions: one that opens a user region would hold it inside its own frame. */
    if (spelling_text && strncmp(name_text, "scorep.", strlen("scorep.")) != 0)
        id = sp_region_define_c(name_text, spelling_text);
    /* A callable that cannot be named, or out of memory, counts as filtered. */
    if (table_room()) {
        /* A ufunc's key is its address: kept alive, no other object gets its key. */
        bool keep = t == sp_py.ufunc_type;
        if (keep && !sp_py.c_kept)
            sp_py.c_kept = PyList_New(0);
        if (!keep || (sp_py.c_kept && PyList_Append(sp_py.c_kept, callable) == 0))
            table_insert(key, id == SP_NO_ID ? C_SLOT_FILTERED : id);
    }
    Py_XDECREF(name);
    Py_XDECREF(spelling);
    exception_restore(saved);
    if (id == SP_NO_ID)
        return CODE_FILTERED;
    *region = id;
    return CODE_RECORDED;
}
