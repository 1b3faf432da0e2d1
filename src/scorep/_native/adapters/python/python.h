/* The Python adapter: turns function calls, returns, yields and resumes of the interpreter
 * into core events. On 3.12+ through sys.monitoring (a filtered function's events are
 * switched off for good), before that by wrapping frame evaluation (PEP 523), which keeps
 * the interpreter out of its slow tracing mode; the C-level profile and trace hooks remain
 * as the original bindings' instrumenter types. */
#ifndef SCOREP_ADAPTERS_PYTHON_H
#define SCOREP_ADAPTERS_PYTHON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/measurement.h"

typedef enum {
    SP_INSTRUMENTER_NONE = 0,   /* "dummy": user regions only */
    SP_INSTRUMENTER_MONITORING, /* sys.monitoring, 3.12+ */
    SP_INSTRUMENTER_PROFILE,    /* PyEval_SetProfile */
    SP_INSTRUMENTER_TRACE,      /* PyEval_SetTrace: the same events plus line events we skip */
    SP_INSTRUMENTER_EVAL,       /* the frame evaluation API of PEP 523, before 3.12 */
} sp_instrumenter_kind;

/* Once per process, at module import. */
int sp_python_adapter_init(void);

/* Per measurement: directories whose code is never recorded (the scorep package itself, a
 * Jupyter kernel's machinery) and the working directory relative source paths are resolved
 * against. */
int sp_python_adapter_start(const char *const *exclude_dirs, size_t exclude_count,
                            const char *cwd, sp_instrumenter_kind kind,
                            const char *const *line_patterns, size_t line_pattern_count,
                            const sp_config *config);
void sp_python_adapter_stop(void);

/* `path` made absolute against the measurement's working directory, as os.path.abspath
 * would (user regions give their caller's __file__, which may be relative). Returns `path`
 * itself when it does not fit or no measurement runs. */
const char *sp_python_absolute_path(const char *path, char *out, size_t out_len);

int sp_python_register(void);
int sp_python_unregister(void);
bool sp_python_registered(void);

/* A thread started through threading while registered: hooks of the profile/trace kind are
 * per thread before 3.12 and are installed in it here. */
void sp_python_thread_started(void);

/* The calling thread's location (NULL: no measurement, or this thread is not measured). */
sp_location *sp_python_location(void);

/* A new gc.callbacks entry that makes each collection the region gc:collect (its generation
 * a parameter); called without a Python frame, it never raises. */
PyObject *sp_python_gc_callback_new(void);

/* The calling thread's location, made (and named) when it has none: a thread that starts
 * (threading's bootstrap), or the one that starts the measurement. */
sp_location *sp_python_attach_named(const char *name);

/* The region of a code object; when `module`/`qualname` are NULL they are found from the
 * running frame. Returns false when the code object is filtered out (or on error). */
bool sp_python_code_region(PyCodeObject *code, PyObject *module, PyObject *qualname,
                           uint32_t *region);

/* A terminating signal the measured process handles in Python is sent to the main thread
 * again until the Python handler reports that it started (sp_python_signal_handled): a
 * signal that arrives just before the main thread blocks is otherwise never handled
 * (signals.c). Call right after installing the Python handler for `sig`. */
int sp_python_watch_signal(int sig);
void sp_python_signal_handled(void);

/* Chooses a code object for line-level profiling (scorep.user.lines), in this measurement
 * and the following ones. Returns 0, or -1 with a Python exception. */
int sp_python_lines_add_code(PyCodeObject *code);

/* Wraps (on) or unwraps the PyMem and PyObject allocators that count each thread's
 * allocated and freed bytes for the Python memory metrics (memory.c). */
void sp_python_memory_hook(bool on);

/* Marks a code object as never recorded (the tool's own frames around the program). */
void sp_python_exclude_code(PyCodeObject *code);

/* Samples read where the threads are (the default) or at safe points (before start). */
void sp_python_sampling_set_async(bool on);
/* Samples carry native frames (--native, SCOREP_SAMPLING_NATIVE); before a start. */
void sp_python_sampling_set_native(bool on);
/* --native: [0] native stacks read, [1] threads whose handler did not answer in time,
 * [2] samples of blocked threads not signalled (one frame), [3] handlers that found the call
 * they interrupted ended with EINTR (an upper bound on the calls a signal still ended
 * early: the thread was read as running and blocked before its signal came), [4] writes to
 * a pipe, socket or terminal that the signal cut short, completed by the handler. */
void sp_python_native_counts(uint64_t counts[5]);
/* Samples read where the threads were, and those taken at a safe point instead because a
 * code object was not known yet, the read failed its checks, the thread was new, or no
 * capture came with the pass: since the last start; and the errno that made reads where the
 * threads are unavailable (0: none). */
/* [6] --native samples merged whole (C frames between Python frames placed), [7] those
 * whose native and Python stacks did not match (the innermost C frames only); [8]-[11] time
 * no sample stands for (ns) and long gaps; [12] ticks at which the GIL's holder ran an audit
 * hook or a trace function and was not asked to give the GIL up (before 3.12). */
void sp_python_sampling_counts(uint64_t counts[13]);

#endif
