/* The callable objects the interpreter calls our C functions through (internal.h). */
#include "adapters/python/internal.h"

typedef struct {
    PyObject_HEAD
    vectorcallfunc call;
} sp_callback;

static PyTypeObject sp_callback_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "scorep._bindings.callback",
    .tp_basicsize = sizeof(sp_callback),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(sp_callback, call),
    .tp_call = PyVectorcall_Call,
};

PyObject *sp_python_callback_new(vectorcallfunc call)
{
    if (PyType_Ready(&sp_callback_type) < 0)
        return NULL;
    sp_callback *cb = PyObject_New(sp_callback, &sp_callback_type);
    if (cb)
        cb->call = call;
    return (PyObject *)cb;
}
