/* Native frames of samples (--native): see native.c. Used by the sampler (sampling.c). */
#ifndef SCOREP_ADAPTERS_PYTHON_NATIVE_H
#define SCOREP_ADAPTERS_PYTHON_NATIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define SP_NATIVE_DEPTH 128 /* frames kept of a native stack (the innermost ones) */

/* One thread's native stack at a tick, innermost first. */
typedef struct {
    pid_t tid;
    unsigned long pthread; /* its pthread_t: what a Python thread state calls it */
    char comm[16];         /* its name (/proc/self/task/TID/comm), "" if not known */
    uint32_t count;
    bool fresh; /* of the last tick; else of the one before (the handler ran late) */
    bool complete; /* unwound to the stack's first frame (not cut by depth or a library
                    * without unwind tables) */
    /* Not signalled (it waited in a call a signal would end early): one frame, the call
     * it waits in, not unwound; its place is right below the innermost Python frame. */
    bool blocked;
    uintptr_t ips[SP_NATIVE_DEPTH];
} sp_native_stack;

enum {
    SP_NATIVE_FRAME = 0,       /* a frame of its own (a region) */
    SP_NATIVE_EVAL = 1,        /* the interpreter evaluating Python frames: one call of
                                * _PyEval_EvalFrameDefault */
    SP_NATIVE_INTERPRETER = 2, /* the interpreter's call machinery: left out */
};

/* Installs the signal handler and empties the tables: 0, or -1 with a Python error. */
int sp_native_start(void);
void sp_native_stop(void);
bool sp_native_enabled(void);
void sp_native_forget_in_child(void);
/* A thread of the tool's (the sampler's GIL waiter) left out of the threads sampled; 0:
 * none. */
void sp_native_ignore(pid_t tid);

/* The sampler thread, at a tick: asks every thread of the process for its native stack. */
void sp_native_signal(void);
/* Whether a thread signalled at the last tick has not answered yet (for at most 20 ms). */
bool sp_native_pending(void);
/* The pass: the native stacks the threads gave for the last tick (at most `capacity`). */
uint32_t sp_native_collect(sp_native_stack *out, uint32_t capacity);

/* The pass (not the handler): the kind of the frame at `ip` and, for SP_NATIVE_FRAME, its
 * region (SP_NO_ID: filtered). `innermost`: the interrupted instruction itself, not a
 * return address. */
int sp_native_region(uintptr_t ip, bool innermost, uint32_t *region);

#endif
