#include "core/ipc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---- the group of one ------------------------------------------------------------------ */

static int single_agree(void *ctx, double timeout)
{
    (void)ctx, (void)timeout;
    return 0;
}

static int single_barrier(void *ctx)
{
    (void)ctx;
    return 0;
}

static int single_bcast(void *ctx, void *data, uint64_t bytes, uint32_t root)
{
    (void)ctx, (void)data, (void)bytes;
    return root == 0 ? 0 : -1;
}

static int single_copy(const void *in, void *out, uint64_t bytes, uint32_t root)
{
    if (root != 0)
        return -1;
    if (bytes && in != out)
        memmove(out, in, bytes);
    return 0;
}

static int single_gather(void *ctx, const void *in, uint64_t bytes, void *out, uint32_t root)
{
    (void)ctx;
    return single_copy(in, out, bytes, root);
}

static int single_gatherv(void *ctx, const void *in, uint64_t bytes, void *out,
                          const uint64_t *counts, uint32_t root)
{
    (void)ctx;
    return counts[0] == bytes ? single_copy(in, out, bytes, root) : -1;
}

static int single_scatter(void *ctx, const void *in, void *out, uint64_t bytes, uint32_t root)
{
    (void)ctx;
    return single_copy(in, out, bytes, root);
}

static int single_scatterv(void *ctx, const void *in, const uint64_t *counts, void *out,
                           uint64_t bytes, uint32_t root)
{
    (void)ctx;
    return counts[0] == bytes ? single_copy(in, out, bytes, root) : -1;
}

int sp_ipc_same_clock(void *ctx, int64_t *offset_ns)
{
    (void)ctx;
    *offset_ns = 0;
    return 0;
}

static const sp_ipc_ops single_ops = {
    .agree = single_agree,
    .barrier = single_barrier,
    .bcast = single_bcast,
    .gather = single_gather,
    .gatherv = single_gatherv,
    .scatter = single_scatter,
    .scatterv = single_scatterv,
    .clock_offset = sp_ipc_same_clock,
};

const sp_ipc sp_ipc_single = {.ops = &single_ops, .ctx = NULL, .rank = 0, .size = 1};

/* ---- variable-sized exchanges, on the primitives --------------------------------------- */

int sp_ipc_gather_bytes(const sp_ipc *ipc, const void *data, uint64_t size, void **all,
                        uint64_t *sizes)
{
    bool root = ipc->rank == 0;
    *all = NULL;
    if (ipc->ops->gather(ipc->ctx, &size, sizeof size, root ? sizes : NULL, 0) != 0)
        return -1;
    int status = 0;
    if (root) {
        uint64_t total = 0;
        for (uint32_t r = 0; r < ipc->size; r++)
            total += sizes[r];
        *all = malloc(total ? total : 1);
        /* Every process must still take part in the gatherv below. */
        status = *all ? 0 : -1;
    }
    if (ipc->ops->gatherv(ipc->ctx, data, size, *all, sizes, 0) != 0)
        status = -1;
    if (status != 0) {
        free(*all);
        *all = NULL;
    }
    return status;
}

int sp_ipc_scatter_bytes(const sp_ipc *ipc, void *const *parts, const uint64_t *sizes,
                         void **mine, uint64_t *size)
{
    bool root = ipc->rank == 0;
    unsigned char *packed = NULL;
    int status = 0;
    *mine = NULL;
    if (ipc->ops->scatter(ipc->ctx, root ? sizes : NULL, size, sizeof *size, 0) != 0)
        return -1;
    if (root) {
        uint64_t total = 0;
        for (uint32_t r = 0; r < ipc->size; r++)
            total += sizes[r];
        packed = malloc(total ? total : 1);
        for (uint64_t r = 0, offset = 0; packed && r < ipc->size; offset += sizes[r], r++)
            if (sizes[r]) /* an empty part may be NULL */
                memcpy(packed + offset, parts[r], sizes[r]);
        status = packed ? 0 : -1;
    }
    *mine = malloc(*size ? *size : 1);
    if (!*mine)
        status = -1;
    /* Every process takes part, whatever failed locally: the others wait for it. */
    if (ipc->ops->scatterv(ipc->ctx, packed, sizes, *mine ? *mine : NULL, *mine ? *size : 0, 0) !=
        0)
        status = -1;
    free(packed);
    if (status != 0) {
        free(*mine);
        *mine = NULL;
    }
    return status;
}

/* ---- clock offsets along a tree ----------------------------------------------------------
 * A parent's message to a child: 8 bytes per ping, then the result [i64 offset][i64 bound];
 * the child answers each ping with its clock. A failed exchange sends INT64_MIN as the
 * result, so that the whole subtree learns of it and nobody waits forever. */

static uint32_t lowest_bit(uint32_t rank, uint32_t size)
{
    uint32_t step = 1;
    while (step < size && !(rank & step))
        step <<= 1;
    return step;
}

static int offset_to_child(const sp_ipc *ipc, uint32_t child, uint32_t rounds,
                           int64_t (*now)(void *), void *now_ctx, int64_t mine, int64_t my_bound,
                           bool ok)
{
    int64_t best_rtt = INT64_MAX, best = 0;
    for (uint32_t k = 0; ok && k < rounds; k++) {
        int64_t ping = 0;
        int64_t t1 = now(now_ctx);
        if (ipc->ops->send(ipc->ctx, &ping, sizeof ping, child) != 0) {
            ok = false;
            break;
        }
        void *data = NULL;
        uint64_t bytes = 0;
        if (ipc->ops->recv(ipc->ctx, &data, &bytes, child) != 0 || bytes != sizeof(int64_t)) {
            free(data);
            ok = false;
            break;
        }
        int64_t t3 = now(now_ctx), t2;
        memcpy(&t2, data, sizeof t2);
        free(data);
        if (t3 - t1 < best_rtt) {
            best_rtt = t3 - t1;
            best = t1 + (t3 - t1) / 2 - t2; /* parent minus child */
        }
    }
    int64_t result[3] = {1, ok ? mine + best : INT64_MIN, ok ? my_bound + best_rtt / 2 : 0};
    return ipc->ops->send(ipc->ctx, result, sizeof result, child) == 0 && ok ? 0 : -1;
}

int sp_ipc_clock_offsets(const sp_ipc *ipc, bool tree, uint32_t rounds,
                         int64_t (*now)(void *now_ctx), void *now_ctx, int64_t *offset_ns,
                         int64_t *bound_ns)
{
    *offset_ns = 0;
    *bound_ns = 0;
    if (ipc->size < 2)
        return 0;
    if (!ipc->ops->send || !ipc->ops->recv || rounds == 0)
        return -1;
    uint32_t rank = ipc->rank, size = ipc->size;
    bool ok = true;
    if (rank != 0) {
        /* Answer the parent's pings (a first word 0) until its result (a first word 1). */
        uint32_t parent = tree ? rank - lowest_bit(rank, size) : 0;
        for (;;) {
            void *data = NULL;
            uint64_t bytes = 0;
            if (ipc->ops->recv(ipc->ctx, &data, &bytes, parent) != 0 ||
                (bytes != sizeof(int64_t) && bytes != 3 * sizeof(int64_t))) {
                free(data);
                ok = false;
                break;
            }
            if (bytes == sizeof(int64_t)) {
                int64_t t2 = now(now_ctx);
                free(data);
                if (ipc->ops->send(ipc->ctx, &t2, sizeof t2, parent) != 0) {
                    ok = false;
                    break;
                }
                continue;
            }
            int64_t result[3];
            memcpy(result, data, sizeof result);
            free(data);
            ok = result[1] != INT64_MIN;
            *offset_ns = ok ? result[1] : 0;
            *bound_ns = ok ? result[2] : 0;
            break;
        }
    }
    /* Then this rank's children, the largest subtree first (its own children start early). */
    int status = ok ? 0 : -1;
    if (tree) {
        uint32_t low = rank ? lowest_bit(rank, size) : size;
        uint32_t step = 1;
        while (step < low && step < size)
            step <<= 1;
        for (step >>= 1; step >= 1; step >>= 1) {
            if (step >= low || rank + step >= size)
                continue;
            if (offset_to_child(ipc, rank + step, rounds, now, now_ctx, *offset_ns, *bound_ns,
                                ok) != 0)
                status = -1;
        }
    } else if (rank == 0) {
        for (uint32_t child = 1; child < size; child++)
            if (offset_to_child(ipc, child, rounds, now, now_ctx, 0, 0, ok) != 0)
                status = -1;
    }
    return status;
}
