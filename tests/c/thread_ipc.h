/* A group of processes simulated by threads of one process: an implementation of the core's
 * sp_ipc_ops (core/ipc.h) in which every "rank" is a thread and the group operations are
 * copies between them, separated by a barrier. For tests of code built on sp_ipc (the
 * unification, the collective writers) with many ranks and no MPI. */
#ifndef SCOREP_TESTS_THREAD_IPC_H
#define SCOREP_TESTS_THREAD_IPC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ipc.h"

/* A message of the point-to-point operations, queued at its destination. */
typedef struct tg_message {
    struct tg_message *next;
    uint32_t source;
    uint64_t bytes;
    void *data;
} tg_message;

typedef struct {
    pthread_barrier_t barrier;
    pthread_mutex_t lock;  /* the mailboxes */
    pthread_cond_t *arrived; /* per destination: only the receiver wakes up */
    tg_message **mailboxes; /* per destination, oldest first */
    uint64_t *received;     /* per rank: bytes it received (a benchmark's measure) */
    uint32_t size;
    const void **slots;      /* per rank: what it offers */
    uint64_t *lengths;       /* per rank: how many bytes */
    const uint64_t *counts;  /* the root's counts of a v-operation */
    /* Called by the receiver with each message it takes (NULL: none): a benchmark that
     * counts memory per rank moves the message's bytes from its sender to its receiver. */
    void (*adopt)(void *data, uint32_t source, uint32_t receiver);
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
            g->received[root] += counts[r];
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

static int tg_send(void *ctx, const void *data, uint64_t bytes, uint32_t dest)
{
    thread_rank *me = ctx;
    thread_group *g = me->group;
    tg_message *m = malloc(sizeof *m);
    void *copy = malloc(bytes ? bytes : 1);
    if (!m || !copy) {
        free(m);
        free(copy);
        return -1;
    }
    memcpy(copy, data, bytes);
    *m = (tg_message){NULL, me->rank, bytes, copy};
    pthread_mutex_lock(&g->lock);
    tg_message **tail = &g->mailboxes[dest];
    while (*tail)
        tail = &(*tail)->next;
    *tail = m;
    pthread_cond_signal(&g->arrived[dest]);
    pthread_mutex_unlock(&g->lock);
    return 0;
}

static int tg_recv(void *ctx, void **data, uint64_t *bytes, uint32_t source)
{
    thread_rank *me = ctx;
    thread_group *g = me->group;
    pthread_mutex_lock(&g->lock);
    for (;;) {
        for (tg_message **m = &g->mailboxes[me->rank]; *m; m = &(*m)->next) {
            if ((*m)->source != source)
                continue;
            tg_message *found = *m;
            *m = found->next;
            pthread_mutex_unlock(&g->lock);
            *data = found->data;
            *bytes = found->bytes;
            g->received[me->rank] += found->bytes; /* only this rank's thread writes it */
            if (g->adopt)
                g->adopt(found->data, found->source, me->rank);
            free(found);
            return 0;
        }
        pthread_cond_wait(&g->arrived[me->rank], &g->lock);
    }
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

static inline int thread_group_init(thread_group *g, uint32_t size)
{
    memset(g, 0, sizeof *g);
    g->size = size;
    g->slots = calloc(size, sizeof *g->slots);
    g->lengths = calloc(size, sizeof *g->lengths);
    g->mailboxes = calloc(size, sizeof *g->mailboxes);
    g->received = calloc(size, sizeof *g->received);
    g->arrived = calloc(size, sizeof *g->arrived);
    if (!g->slots || !g->lengths || !g->mailboxes || !g->received || !g->arrived)
        return -1;
    pthread_mutex_init(&g->lock, NULL);
    for (uint32_t r = 0; r < size; r++)
        pthread_cond_init(&g->arrived[r], NULL);
    return pthread_barrier_init(&g->barrier, NULL, size) == 0 ? 0 : -1;
}

static inline void thread_group_free(thread_group *g)
{
    pthread_barrier_destroy(&g->barrier);
    pthread_mutex_destroy(&g->lock);
    for (uint32_t r = 0; r < g->size; r++)
        pthread_cond_destroy(&g->arrived[r]);
    free(g->arrived);
    free(g->slots);
    free(g->lengths);
    free(g->mailboxes);
    free(g->received);
}

/* `tree`: with point-to-point messages (the unification merges along a tree); else only the
 * collectives (everything merged at the root). */
static inline sp_ipc thread_group_ipc(thread_rank *me, bool tree)
{
    return (sp_ipc){.ops = tree ? &thread_group_ops : &thread_group_collective_ops, .ctx = me,
                    .rank = me->rank, .size = me->group->size};
}

/* Runs `fn` on one thread per rank of `g` and waits for all of them. `work` is an array of
 * g->size structures of `stride` bytes, each beginning with its thread_rank, filled in here.
 * Small stacks, so that 10^4 simulated ranks fit into memory. A thread that cannot start
 * ends the process: the ranks already running would wait for it at their first barrier. */
static inline void thread_group_run(thread_group *g, void *work, size_t stride,
                                    void *(*fn)(void *))
{
    pthread_t *threads = calloc(g->size, sizeof *threads);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (uint32_t r = 0; r < g->size; r++) {
        thread_rank *me = (thread_rank *)((char *)work + r * stride);
        *me = (thread_rank){g, r};
        if (!threads || pthread_create(&threads[r], &attr, fn, me) != 0) {
            fprintf(stderr, "cannot start simulated rank %u\n", r);
            exit(1);
        }
    }
    for (uint32_t r = 0; r < g->size; r++)
        pthread_join(threads[r], NULL);
    pthread_attr_destroy(&attr);
    free(threads);
}

#endif
