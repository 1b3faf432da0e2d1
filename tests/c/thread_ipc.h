/* A group of processes simulated by threads of one process: an implementation of the core's
 * sp_ipc_ops (core/ipc.h) in which every "rank" is a thread and the group operations are
 * copies between them, separated by a barrier. For tests of code built on sp_ipc (the
 * unification, the collective writers) with many ranks and no MPI. */
#ifndef SCOREP_TESTS_THREAD_IPC_H
#define SCOREP_TESTS_THREAD_IPC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ipc.h"

typedef struct {
    pthread_barrier_t barrier;
    uint32_t size;
    const void **slots;      /* per rank: what it offers */
    uint64_t *lengths;       /* per rank: how many bytes */
    const uint64_t *counts;  /* the root's counts of a v-operation */
} thread_group;

typedef struct {
    thread_group *group;
    uint32_t rank;
} thread_rank;

static inline int tg_wait(thread_group *g)
{
    int r = pthread_barrier_wait(&g->barrier);
    return r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : -1;
}

static int tg_agree(void *ctx, double timeout)
{
    (void)timeout;
    return tg_wait(((thread_rank *)ctx)->group);
}

static int tg_barrier(void *ctx)
{
    return tg_wait(((thread_rank *)ctx)->group);
}

static int tg_bcast(void *ctx, void *data, uint64_t bytes, uint32_t root)
{
    thread_rank *me = ctx;
    thread_group *g = me->group;
    if (me->rank == root)
        g->slots[root] = data;
    tg_wait(g);
    if (me->rank != root)
        memcpy(data, g->slots[root], bytes);
    return tg_wait(g);
}

static int tg_gather(void *ctx, const void *in, uint64_t bytes, void *out, uint32_t root)
{
    thread_rank *me = ctx;
    thread_group *g = me->group;
    g->slots[me->rank] = in;
    g->lengths[me->rank] = bytes;
    tg_wait(g);
    int status = 0;
    if (me->rank == root)
        for (uint32_t r = 0; r < g->size; r++) {
            if (g->lengths[r] != bytes)
                status = -1;
            else
                memcpy((char *)out + r * bytes, g->slots[r], bytes);
        }
    return tg_wait(g) == 0 ? status : -1;
}

static int tg_gatherv(void *ctx, const void *in, uint64_t bytes, void *out,
                      const uint64_t *counts, uint32_t root)
{
    thread_rank *me = ctx;
    thread_group *g = me->group;
    g->slots[me->rank] = in;
    g->lengths[me->rank] = bytes;
    tg_wait(g);
    int status = 0;
    if (me->rank == root) {
        uint64_t offset = 0;
        for (uint32_t r = 0; r < g->size; r++) {
            if (g->lengths[r] != counts[r])
                status = -1;
            else if (counts[r])
                memcpy((char *)out + offset, g->slots[r], counts[r]);
            offset += counts[r];
        }
    }
    return tg_wait(g) == 0 ? status : -1;
}

static int tg_scatter(void *ctx, const void *in, void *out, uint64_t bytes, uint32_t root)
{
    thread_rank *me = ctx;
    thread_group *g = me->group;
    if (me->rank == root)
        g->slots[root] = in;
    tg_wait(g);
    memcpy(out, (const char *)g->slots[root] + me->rank * bytes, bytes);
    return tg_wait(g);
}

static int tg_scatterv(void *ctx, const void *in, const uint64_t *counts, void *out,
                       uint64_t bytes, uint32_t root)
{
    thread_rank *me = ctx;
    thread_group *g = me->group;
    if (me->rank == root) {
        g->slots[root] = in;
        g->counts = counts;
    }
    tg_wait(g);
    uint64_t offset = 0;
    for (uint32_t r = 0; r < me->rank; r++)
        offset += g->counts[r];
    int status = g->counts[me->rank] == bytes ? 0 : -1;
    if (status == 0 && bytes)
        memcpy(out, (const char *)g->slots[root] + offset, bytes);
    return tg_wait(g) == 0 ? status : -1;
}

static int tg_clock_offset(void *ctx, int64_t *offset_ns)
{
    (void)ctx;
    *offset_ns = 0;
    return 0;
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
};

static inline int thread_group_init(thread_group *g, uint32_t size)
{
    memset(g, 0, sizeof *g);
    g->size = size;
    g->slots = calloc(size, sizeof *g->slots);
    g->lengths = calloc(size, sizeof *g->lengths);
    if (!g->slots || !g->lengths)
        return -1;
    return pthread_barrier_init(&g->barrier, NULL, size) == 0 ? 0 : -1;
}

static inline void thread_group_free(thread_group *g)
{
    pthread_barrier_destroy(&g->barrier);
    free(g->slots);
    free(g->lengths);
}

static inline sp_ipc thread_group_ipc(thread_rank *me)
{
    return (sp_ipc){.ops = &thread_group_ops, .ctx = me, .rank = me->rank,
                    .size = me->group->size};
}

#endif
