#include "core/ipc_threads.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct tq_message {
    struct tq_message *next;
    uint32_t source;
    uint64_t bytes;
    void *data;
} tq_message;

typedef struct {
    pthread_barrier_t barrier;
    pthread_mutex_t lock; /* the mailboxes */
    pthread_cond_t *arrived; /* per destination: only the receiver wakes up */
    tq_message **mailboxes;  /* per destination, oldest first */
    uint32_t size;
    const void **slots;      /* per rank: what it offers to a group operation */
    uint64_t *lengths;
    const uint64_t *counts;  /* the root's counts of a v-operation */
} tq_group;

/* Threads wait here until all of them exist: one that cannot be created would otherwise
 * leave the others at their first group operation for ever. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int state; /* 0 waiting, 1 go, -1 give up */
} tq_gate;

typedef struct {
    tq_group *group;
    tq_gate *gate;
    uint32_t rank;
    int (*fn)(const sp_ipc *ipc, void *arg);
    void *arg;
    int status;
} tq_rank;


static int tq_wait(tq_group *g)
{
    int r = pthread_barrier_wait(&g->barrier);
    return r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : -1;
}

static int tq_agree(void *ctx, double timeout)
{
    (void)timeout;
    return tq_wait(((tq_rank *)ctx)->group);
}

static int tq_barrier(void *ctx)
{
    return tq_wait(((tq_rank *)ctx)->group);
}

static int tq_bcast(void *ctx, void *data, uint64_t bytes, uint32_t root)
{
    tq_rank *me = ctx;
    tq_group *g = me->group;
    if (me->rank == root)
        g->slots[root] = data;
    tq_wait(g);
    if (me->rank != root && bytes)
        memcpy(data, g->slots[root], bytes);
    return tq_wait(g);
}

static int tq_gatherv(void *ctx, const void *in, uint64_t bytes, void *out,
                      const uint64_t *counts, uint32_t root)
{
    tq_rank *me = ctx;
    tq_group *g = me->group;
    g->slots[me->rank] = in;
    g->lengths[me->rank] = bytes;
    tq_wait(g);
    int status = 0;
    if (me->rank == root) {
        uint64_t offset = 0;
        for (uint32_t r = 0; r < g->size; r++) {
            uint64_t want = counts ? counts[r] : bytes;
            if (g->lengths[r] != want)
                status = -1;
            else if (want)
                memcpy((char *)out + offset, g->slots[r], want);
            offset += want;
        }
    }
    return tq_wait(g) == 0 ? status : -1;
}

static int tq_gather(void *ctx, const void *in, uint64_t bytes, void *out, uint32_t root)
{
    return tq_gatherv(ctx, in, bytes, out, NULL, root);
}

static int tq_scatterv(void *ctx, const void *in, const uint64_t *counts, void *out,
                       uint64_t bytes, uint32_t root)
{
    tq_rank *me = ctx;
    tq_group *g = me->group;
    if (me->rank == root) {
        g->slots[root] = in;
        g->counts = counts;
    }
    tq_wait(g);
    uint64_t offset = 0;
    for (uint32_t r = 0; r < me->rank; r++)
        offset += g->counts ? g->counts[r] : bytes;
    uint64_t want = g->counts ? g->counts[me->rank] : bytes;
    int status = want == bytes ? 0 : -1;
    if (status == 0 && bytes)
        memcpy(out, (const char *)g->slots[root] + offset, bytes);
    /* the root may clear counts for the next operation only after everyone read them */
    int w = tq_wait(g);
    if (me->rank == root)
        g->counts = NULL;
    return w == 0 ? status : -1;
}

static int tq_scatter(void *ctx, const void *in, void *out, uint64_t bytes, uint32_t root)
{
    return tq_scatterv(ctx, in, NULL, out, bytes, root);
}

static int tq_send(void *ctx, const void *data, uint64_t bytes, uint32_t dest)
{
    tq_rank *me = ctx;
    tq_group *g = me->group;
    if (dest >= g->size)
        return -1;
    tq_message *m = malloc(sizeof *m);
    void *copy = malloc(bytes ? bytes : 1);
    if (!m || !copy) {
        free(m);
        free(copy);
        return -1;
    }
    if (bytes)
        memcpy(copy, data, bytes);
    *m = (tq_message){NULL, me->rank, bytes, copy};
    pthread_mutex_lock(&g->lock);
    tq_message **tail = &g->mailboxes[dest];
    while (*tail)
        tail = &(*tail)->next;
    *tail = m;
    pthread_cond_signal(&g->arrived[dest]);
    pthread_mutex_unlock(&g->lock);
    return 0;
}

static int tq_recv(void *ctx, void **data, uint64_t *bytes, uint32_t source)
{
    tq_rank *me = ctx;
    tq_group *g = me->group;
    pthread_mutex_lock(&g->lock);
    for (;;) {
        for (tq_message **m = &g->mailboxes[me->rank]; *m; m = &(*m)->next) {
            if ((*m)->source != source)
                continue;
            tq_message *found = *m;
            *m = found->next;
            pthread_mutex_unlock(&g->lock);
            *data = found->data;
            *bytes = found->bytes;
            free(found);
            return 0;
        }
        pthread_cond_wait(&g->arrived[me->rank], &g->lock);
    }
}

static const sp_ipc_ops tq_ops = {
    .agree = tq_agree,
    .barrier = tq_barrier,
    .bcast = tq_bcast,
    .gather = tq_gather,
    .gatherv = tq_gatherv,
    .scatter = tq_scatter,
    .scatterv = tq_scatterv,
    .clock_offset = sp_ipc_same_clock, /* one process, one clock */
    .send = tq_send,
    .recv = tq_recv,
};

static void *tq_main(void *p)
{
    tq_rank *me = p;
    pthread_mutex_lock(&me->gate->lock);
    while (me->gate->state == 0)
        pthread_cond_wait(&me->gate->changed, &me->gate->lock);
    int state = me->gate->state;
    pthread_mutex_unlock(&me->gate->lock);
    if (state < 0) {
        me->status = -1;
        return NULL;
    }
    sp_ipc ipc = {&tq_ops, me, me->rank, me->group->size};
    me->status = me->fn(&ipc, me->arg);
    return NULL;
}

int sp_ipc_threads_run(uint32_t size, size_t stack_bytes,
                       int (*fn)(const sp_ipc *ipc, void *arg), void *const *args, char *err,
                       size_t errlen)
{
    if (size == 0)
        return 0;
    tq_group g;
    memset(&g, 0, sizeof g);
    g.size = size;
    g.slots = calloc(size, sizeof *g.slots);
    g.lengths = calloc(size, sizeof *g.lengths);
    g.mailboxes = calloc(size, sizeof *g.mailboxes);
    g.arrived = calloc(size, sizeof *g.arrived);
    tq_rank *ranks = calloc(size, sizeof *ranks);
    pthread_t *threads = calloc(size, sizeof *threads);
    bool ready = g.slots && g.lengths && g.mailboxes && g.arrived && ranks && threads;
    pthread_attr_t attr;
    bool attr_ready = ready && pthread_attr_init(&attr) == 0;
    if (attr_ready && stack_bytes)
        ready = pthread_attr_setstacksize(&attr, stack_bytes) == 0;
    ready = ready && attr_ready;
    if (ready) {
        pthread_mutex_init(&g.lock, NULL);
        for (uint32_t r = 0; r < size; r++)
            pthread_cond_init(&g.arrived[r], NULL);
        ready = pthread_barrier_init(&g.barrier, NULL, size) == 0;
    }
    int status = 0;
    if (!ready) {
        status = sp_error(err, errlen, "out of memory for a group of %u threads", size);
    } else {
        tq_gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
        uint32_t started = 0;
        for (uint32_t r = 0; r < size; r++) {
            ranks[r] = (tq_rank){&g, &gate, r, fn, args ? args[r] : NULL, 0};
            if (pthread_create(&threads[r], &attr, tq_main, &ranks[r]) != 0)
                break;
            started++;
        }
        pthread_mutex_lock(&gate.lock);
        gate.state = started == size ? 1 : -1;
        pthread_cond_broadcast(&gate.changed);
        pthread_mutex_unlock(&gate.lock);
        for (uint32_t r = 0; r < started; r++) {
            pthread_join(threads[r], NULL);
            if (ranks[r].status != 0)
                status = -1;
        }
        if (started < size)
            sp_error(err, errlen, "could not start %u threads, one per rank", size);
        else if (status != 0)
            sp_error(err, errlen, "a rank's part of the replay failed");
        pthread_mutex_destroy(&gate.lock);
        pthread_cond_destroy(&gate.changed);
        pthread_barrier_destroy(&g.barrier);
        pthread_mutex_destroy(&g.lock);
        for (uint32_t r = 0; r < size; r++) {
            pthread_cond_destroy(&g.arrived[r]);
            for (tq_message *m = g.mailboxes[r]; m;) {
                tq_message *next = m->next;
                free(m->data);
                free(m);
                m = next;
            }
        }
    }
    if (attr_ready)
        pthread_attr_destroy(&attr);
    free(g.arrived);
    free(g.slots);
    free(g.lengths);
    free(g.mailboxes);
    free(ranks);
    free(threads);
    return status;
}
