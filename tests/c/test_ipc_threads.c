/* The in-process group of threads as ranks (core/ipc_threads.h), on which the reports'
 * reader replays a trace's wait states: every group operation and point-to-point messages
 * among 5 threads, what a failing rank makes of the whole, the empty group, and the stacks
 * the threads get. Each
 * thread writes what it saw into its own slot; the checks run in the main thread. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ipc.h"
#include "core/ipc_threads.h"
#include "ctest.h"

#define RANKS 5

typedef struct {
    int ok[8]; /* one flag per step, 1 when the step saw what it should */
} seen;

static int all_operations(const sp_ipc *ipc, void *arg)
{
    seen *s = arg;
    uint32_t me = ipc->rank, n = ipc->size;
    /* bcast from rank 2 */
    uint64_t value = me == 2 ? 0xfeedu : 0;
    s->ok[0] = ipc->ops->bcast(ipc->ctx, &value, sizeof value, 2) == 0 && value == 0xfeedu;
    /* gather to 0: each rank's number */
    uint32_t all[RANKS] = {0};
    int r = ipc->ops->gather(ipc->ctx, &me, sizeof me, all, 0);
    s->ok[1] = r == 0;
    if (me == 0)
        for (uint32_t i = 0; i < n; i++)
            s->ok[1] &= all[i] == i;
    /* gatherv of rank+1 bytes each, through the helper that sizes them first */
    unsigned char mine[RANKS];
    memset(mine, (int)('a' + me), sizeof mine);
    void *joined = NULL;
    uint64_t sizes[RANKS] = {0};
    s->ok[2] = sp_ipc_gather_bytes(ipc, mine, me + 1, &joined, sizes) == 0;
    if (me == 0) {
        const unsigned char *p = joined;
        for (uint32_t i = 0; i < n && s->ok[2]; i++) {
            s->ok[2] &= sizes[i] == i + 1;
            for (uint32_t k = 0; k <= i; k++)
                s->ok[2] &= *p++ == 'a' + i;
        }
    } else {
        s->ok[2] &= joined == NULL;
    }
    free(joined);
    /* scatter from 0: rank r gets r*r bytes of value r (none for rank 0) */
    void *parts[RANKS];
    uint64_t part_sizes[RANKS];
    unsigned char storage[RANKS][RANKS * RANKS];
    for (uint32_t i = 0; i < n; i++) {
        memset(storage[i], (int)i, sizeof storage[i]);
        parts[i] = storage[i];
        part_sizes[i] = (uint64_t)i * i;
    }
    void *got = NULL;
    uint64_t got_size = 0;
    s->ok[3] = sp_ipc_scatter_bytes(ipc, parts, part_sizes, &got, &got_size) == 0 &&
               got_size == (uint64_t)me * me;
    for (uint64_t k = 0; s->ok[3] && k < got_size; k++)
        s->ok[3] &= ((unsigned char *)got)[k] == me;
    free(got);
    /* a ring of messages, two rounds: each rank sends to the next, receives from the one
     * before; messages from one source arrive in order */
    uint32_t next = (me + 1) % n, prev = (me + n - 1) % n;
    s->ok[4] = 1;
    for (uint32_t round = 0; round < 2; round++) {
        uint64_t out = (uint64_t)me << 8 | round;
        s->ok[4] &= ipc->ops->send(ipc->ctx, &out, sizeof out, next) == 0;
    }
    for (uint32_t round = 0; round < 2; round++) {
        void *data = NULL;
        uint64_t bytes = 0;
        s->ok[4] &= ipc->ops->recv(ipc->ctx, &data, &bytes, prev) == 0 && bytes == 8 &&
                    *(uint64_t *)data == ((uint64_t)prev << 8 | round);
        free(data);
    }
    int64_t offset = 1;
    s->ok[5] = ipc->ops->clock_offset(ipc->ctx, &offset) == 0 && offset == 0;
    s->ok[6] = ipc->ops->barrier(ipc->ctx) == 0 && ipc->ops->agree(ipc->ctx, 1.0) == 0;
    s->ok[7] = 1;
    return 0;
}

static void test_group_operations(void)
{
    seen s[RANKS];
    void *args[RANKS];
    memset(s, 0, sizeof s);
    for (int r = 0; r < RANKS; r++)
        args[r] = &s[r];
    char err[256] = "";
    CHECK(sp_ipc_threads_run(RANKS, 0, all_operations, args, err, sizeof err) == 0);
    CHECK_STR(err, "");
    for (int r = 0; r < RANKS; r++)
        for (int step = 0; step < 8; step++)
            if (!s[r].ok[step]) {
                fprintf(stderr, "rank %d, step %d\n", r, step);
                CHECK(s[r].ok[step]);
            }
}

static int fails_on_rank_3(const sp_ipc *ipc, void *arg)
{
    (void)arg;
    /* every rank takes part in the group operations; one fails its own work after them */
    if (ipc->ops->barrier(ipc->ctx) != 0)
        return -1;
    return ipc->rank == 3 ? -1 : 0;
}

static void test_a_failing_rank_fails_the_run(void)
{
    char err[256] = "";
    CHECK(sp_ipc_threads_run(RANKS, 0, fails_on_rank_3, NULL, err, sizeof err) == -1);
    CHECK_STR(err, "a rank's part of the replay failed");
    CHECK(sp_ipc_threads_run(0, 0, fails_on_rank_3, NULL, err, sizeof err) == 0);
}

static int stack_size(const sp_ipc *ipc, void *arg)
{
    (void)ipc;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return -1;
    int status = pthread_attr_getstacksize(&attr, (size_t *)arg);
    pthread_attr_destroy(&attr);
    return status;
}

/* The C tests' simulations of 10^4 ranks (tests/c/thread_ipc.h) ask for small stacks; the
 * reader's replay keeps the system's default. */
static void test_stack_size_as_asked(void)
{
    enum { SMALL = 256 * 1024 };
    size_t sizes[RANKS] = {0};
    void *args[RANKS];
    for (int r = 0; r < RANKS; r++)
        args[r] = &sizes[r];
    char err[256] = "";
    CHECK(sp_ipc_threads_run(RANKS, SMALL, stack_size, args, err, sizeof err) == 0);
    for (int r = 0; r < RANKS; r++)
        CHECK_EQ_U64(sizes[r], SMALL);
    CHECK(sp_ipc_threads_run(RANKS, 0, stack_size, args, err, sizeof err) == 0);
    pthread_attr_t defaults;
    size_t expected = 0;
    CHECK(pthread_getattr_default_np(&defaults) == 0);
    CHECK(pthread_attr_getstacksize(&defaults, &expected) == 0);
    pthread_attr_destroy(&defaults);
    for (int r = 0; r < RANKS; r++)
        CHECK_EQ_U64(sizes[r], expected);
}

CTEST_MAIN(test_group_operations, test_a_failing_rank_fails_the_run, test_stack_size_as_asked)
