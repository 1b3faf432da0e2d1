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

static int single_clock_offset(void *ctx, int64_t *offset_ns)
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
    .clock_offset = single_clock_offset,
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
