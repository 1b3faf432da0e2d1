/* A group of processes simulated by threads of one process, for tests and benchmarks of code
 * built on sp_ipc (the unification, the profile reduction, the wait-state replay) with many
 * ranks and no MPI. The group is the core's (core/ipc_threads.h: the one the reader replays
 * wait states with); what is here only measures on top of it: each rank's ipc forwards to
 * the core's and counts the bytes the rank received, and may hand every received message to
 * a hook (a benchmark's per-rank memory count), or leave out the point-to-point messages
 * (the unification's gather-to-root path). */
#ifndef SCOREP_TESTS_THREAD_IPC_H
#define SCOREP_TESTS_THREAD_IPC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ipc.h"
#include "core/ipc_threads.h"

typedef struct {
    uint32_t size;
    uint64_t *received; /* per rank: bytes it received (a benchmark's measure) */
    /* Called by the receiver with each message it takes (NULL: none): a benchmark that
     * counts memory per rank moves the message's bytes from its sender to its receiver. */
    void (*adopt)(void *data, uint32_t source, uint32_t receiver);
    size_t stack_bytes; /* each rank's thread's stack */
} thread_group;

typedef struct {
    thread_group *group;
    uint32_t rank;
    sp_ipc core; /* this rank of the core's group */
} thread_rank;

static int tg_agree(void *ctx, double timeout)
{
    const sp_ipc *c = &((thread_rank *)ctx)->core;
    return c->ops->agree(c->ctx, timeout);
}

static int tg_barrier(void *ctx)
{
    const sp_ipc *c = &((thread_rank *)ctx)->core;
    return c->ops->barrier(c->ctx);
}

static int tg_bcast(void *ctx, void *data, uint64_t bytes, uint32_t root)
{
    const sp_ipc *c = &((thread_rank *)ctx)->core;
    return c->ops->bcast(c->ctx, data, bytes, root);
}

static int tg_gather(void *ctx, const void *in, uint64_t bytes, void *out, uint32_t root)
{
    const sp_ipc *c = &((thread_rank *)ctx)->core;
    return c->ops->gather(c->ctx, in, bytes, out, root);
}

static int tg_gatherv(void *ctx, const void *in, uint64_t bytes, void *out,
                      const uint64_t *counts, uint32_t root)
{
    thread_rank *me = ctx;
    if (me->rank == root)
        for (uint32_t r = 0; r < me->group->size; r++)
            me->group->received[root] += counts[r];
    return me->core.ops->gatherv(me->core.ctx, in, bytes, out, counts, root);
}

static int tg_scatter(void *ctx, const void *in, void *out, uint64_t bytes, uint32_t root)
{
    const sp_ipc *c = &((thread_rank *)ctx)->core;
    return c->ops->scatter(c->ctx, in, out, bytes, root);
}

static int tg_scatterv(void *ctx, const void *in, const uint64_t *counts, void *out,
                       uint64_t bytes, uint32_t root)
{
    const sp_ipc *c = &((thread_rank *)ctx)->core;
    return c->ops->scatterv(c->ctx, in, counts, out, bytes, root);
}

static int tg_clock_offset(void *ctx, int64_t *offset_ns)
{
    const sp_ipc *c = &((thread_rank *)ctx)->core;
    return c->ops->clock_offset(c->ctx, offset_ns);
}

static int tg_send(void *ctx, const void *data, uint64_t bytes, uint32_t dest)
{
    const sp_ipc *c = &((thread_rank *)ctx)->core;
    return c->ops->send(c->ctx, data, bytes, dest);
}

static int tg_recv(void *ctx, void **data, uint64_t *bytes, uint32_t source)
{
    thread_rank *me = ctx;
    int status = me->core.ops->recv(me->core.ctx, data, bytes, source);
    if (status == 0) {
        me->group->received[me->rank] += *bytes; /* only this rank's thread writes it */
        if (me->group->adopt)
            me->group->adopt(*data, source, me->rank);
    }
    return status;
}

static const sp_ipc_ops thread_group_ops = {
    .agree = tg_agree,
    .barrier = tg_barrier,
    .bcast = tg_bcast,
    .gather = tg_gather,
    .gatherv = tg_gatherv,
    .scatter = tg_scatter,
    .scatterv = tg_scatterv,
    .clock_offset = tg_clock_offset,
    .send = tg_send,
    .recv = tg_recv,
};

/* The same group without point-to-point messages: the unification's gather-to-root path. */
static const sp_ipc_ops thread_group_collective_ops = {
    .agree = tg_agree,
    .barrier = tg_barrier,
    .bcast = tg_bcast,
    .gather = tg_gather,
    .gatherv = tg_gatherv,
    .scatter = tg_scatter,
    .scatterv = tg_scatterv,
    .clock_offset = tg_clock_offset,
};

/* Small stacks by default, so that 10^4 simulated ranks fit into memory. */
static inline int thread_group_init(thread_group *g, uint32_t size)
{
    *g = (thread_group){.size = size, .received = calloc(size, sizeof *g->received),
                        .stack_bytes = 256 * 1024};
    return g->received ? 0 : -1;
}

static inline void thread_group_free(thread_group *g)
{
    free(g->received);
}

/* `tree`: with point-to-point messages (the unification merges along a tree); else only the
 * collectives (everything merged at the root). */
static inline sp_ipc thread_group_ipc(thread_rank *me, bool tree)
{
    return (sp_ipc){.ops = tree ? &thread_group_ops : &thread_group_collective_ops, .ctx = me,
                    .rank = me->rank, .size = me->group->size};
}

typedef struct {
    thread_group *group;
    void *me; /* the rank's structure: its thread_rank first */
    void *(*fn)(void *);
} thread_group_start;

static int thread_group_rank_main(const sp_ipc *core, void *arg)
{
    thread_group_start *start = arg;
    *(thread_rank *)start->me = (thread_rank){start->group, core->rank, *core};
    start->fn(start->me);
    return 0;
}

/* Runs `fn` on one thread per rank of `g` and waits for all of them. `work` is an array of
 * g->size structures of `stride` bytes, each beginning with its thread_rank, filled in here.
 * A group that cannot start ends the process: nothing of the test could run. */
static inline void thread_group_run(thread_group *g, void *work, size_t stride,
                                    void *(*fn)(void *))
{
    thread_group_start *starts = calloc(g->size, sizeof *starts);
    void **args = calloc(g->size, sizeof *args);
    char err[256] = "out of memory";
    if (starts && args)
        for (uint32_t r = 0; r < g->size; r++) {
            starts[r] = (thread_group_start){g, (char *)work + r * stride, fn};
            args[r] = &starts[r];
        }
    if (!starts || !args ||
        sp_ipc_threads_run(g->size, g->stack_bytes, thread_group_rank_main, args, err,
                           sizeof err) != 0) {
        fprintf(stderr, "cannot start %u simulated ranks: %s\n", g->size, err);
        exit(1);
    }
    free(starts);
    free(args);
}

#endif
