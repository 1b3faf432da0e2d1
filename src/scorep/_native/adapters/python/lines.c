/* Line-level profiles of chosen functions: which functions, and each thread's stack of the
 * chosen frames that run with the line each executes. */
#include "adapters/python/internal.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    PyCodeObject *code; /* borrowed: the frame keeps it alive while it is on the stack */
    uint32_t region;
    uint32_t line;  /* 0: none yet (the function just started) */
    uint32_t hits;  /* 1 when the line began with a line event, 0 when a resume continues it */
    uint64_t start;
} line_frame;

/* The calling thread's chosen frames, innermost last. Thread-local because line events of a
 * thread concern its own frames only; `generation` tells a stack left by an earlier
 * measurement. */
static SP_TLS struct {
    line_frame *frames;
    uint32_t capacity;
    uint32_t generation;
} stack;

/* The depth of `stack`: a variable of its own, which the leave path tests inline. */
SP_TLS uint32_t sp_python_line_frames;

static void free_patterns(void)
{
    for (size_t i = 0; i < sp_py.line_pattern_count; i++)
        free(sp_py.line_patterns[i]);
    free(sp_py.line_patterns);
    sp_py.line_patterns = NULL;
    sp_py.line_pattern_count = 0;
}

int sp_python_lines_start(const char *const *patterns, size_t count)
{
    free_patterns();
    if (!count)
        return 0;
    sp_py.line_patterns = calloc(count, sizeof *sp_py.line_patterns);
    if (!sp_py.line_patterns) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        sp_py.line_patterns[i] = strdup(patterns[i]);
        if (!sp_py.line_patterns[i]) {
            PyErr_NoMemory();
            return -1;
        }
        sp_py.line_pattern_count = i + 1;
    }
    return 0;
}

void sp_python_lines_stop(void)
{
    free_patterns();
}

bool sp_python_lines_chosen(PyCodeObject *code, const char *region_name)
{
    bool chosen = false;
    for (size_t i = 0; i < sp_py.line_pattern_count && !chosen; i++)
        chosen = fnmatch(sp_py.line_patterns[i], region_name, 0) == 0;
    if (!chosen && sp_py.line_codes) {
        int found = PySet_Contains(sp_py.line_codes, (PyObject *)code);
        if (found < 0)
            PyErr_Clear();
        chosen = found == 1;
    }
#if SP_HAVE_MONITORING
    if (chosen && sp_python_monitoring_line_events(code) < 0) {
        PyErr_Clear(); /* no LINE events for it (another instrumenter): no line profile */
        chosen = false;
    }
#endif
    return chosen;
}

static line_frame *push(void)
{
    uint32_t generation = sp_measurement_generation();
    if (stack.generation != generation) {
        stack.generation = generation;
        sp_python_line_frames = 0;
    }
    if (sp_python_line_frames == stack.capacity) {
        uint32_t capacity = stack.capacity ? stack.capacity * 2 : 16;
        line_frame *bigger = realloc(stack.frames, capacity * sizeof *bigger);
        if (!bigger)
            return NULL;
        stack.frames = bigger;
        stack.capacity = capacity;
    }
    return &stack.frames[sp_python_line_frames++];
}

static inline line_frame *top_of(PyCodeObject *code)
{
    if (!sp_python_line_frames || stack.generation != sp_measurement_generation())
        return NULL;
    line_frame *top = &stack.frames[sp_python_line_frames - 1];
    return top->code == code ? top : NULL;
}

static inline void close_line(sp_location *loc, line_frame *f, uint64_t time)
{
    if (f->line)
        sp_line(loc, f->region, f->line, f->hits, time > f->start ? time - f->start : 0);
}

void sp_python_lines_begin(sp_location *loc, PyCodeObject *code, uint32_t region, uint32_t line,
                           uint64_t time)
{
    (void)loc;
    line_frame *f = push();
    if (f)
        *f = (line_frame){.code = code, .region = region, .line = line, .hits = 0, .start = time};
}

void sp_python_lines_line(sp_location *loc, PyCodeObject *code, uint32_t line, uint64_t time)
{
    line_frame *f = top_of(code);
    if (!f)
        return; /* a line of a frame that is not chosen (a callee under the trace function) */
    close_line(loc, f, time);
    f->line = line;
    f->hits = 1;
    f->start = time;
}

void sp_python_lines_end(sp_location *loc, PyCodeObject *code, uint64_t time)
{
    line_frame *f = top_of(code);
    if (!f)
        return;
    close_line(loc, f, time);
    sp_python_line_frames--;
}
