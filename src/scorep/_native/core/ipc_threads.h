/* A group of ranks that are threads of one process (core/ipc.h): the group operations are
 * copies between the threads, separated by a barrier, and point-to-point messages are queued
 * at their destination. The offline wait-state analysis (the reports' reader) replays a trace
 * with it, one thread per rank of the traced run, so that the same engine (core/waitstates.h)
 * that the ranks run at the end of a measurement runs on the trace afterwards. */
#ifndef SCOREP_CORE_IPC_THREADS_H
#define SCOREP_CORE_IPC_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/ipc.h"

/* Runs fn(ipc, args[r]) for every rank r < size, each on a thread of its own whose `ipc` is
 * that rank of one group of `size` threads, and waits for all. `stack_bytes`: each thread's
 * stack, 0 for the system's default (the C tests' simulations of 10^4 ranks need small
 * ones to fit into memory). Returns 0 when every call returned 0; -1 with one line in err
 * when a thread could not start (none runs then) or a call failed. */
SP_MUST_CHECK int sp_ipc_threads_run(uint32_t size, size_t stack_bytes,
                                     int (*fn)(const sp_ipc *ipc, void *arg),
                                     void *const *args, char *err, size_t errlen);

#endif
