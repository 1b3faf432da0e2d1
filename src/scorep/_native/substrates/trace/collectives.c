/* OTF2's collective callbacks, built on the core's sp_ipc: the archive is written by the
 * whole group of processes together, whatever the group is made of (MPI ranks, ...). OTF2
 * asks in elements of an OTF2_Type; the group moves bytes. */
#include "substrates/trace/trace_internal.h"

#include <stdlib.h>

static uint64_t type_size(OTF2_Type type)
{
    switch (type) {
    case OTF2_TYPE_UINT8:
    case OTF2_TYPE_INT8: return 1;
    case OTF2_TYPE_UINT16:
    case OTF2_TYPE_INT16: return 2;
    case OTF2_TYPE_UINT32:
    case OTF2_TYPE_INT32:
    case OTF2_TYPE_FLOAT: return 4;
    case OTF2_TYPE_UINT64:
    case OTF2_TYPE_INT64:
    case OTF2_TYPE_DOUBLE: return 8;
    default: return 1;
    }
}

static OTF2_CallbackCode result(int status)
{
    return status == 0 ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_ERROR;
}

static OTF2_CallbackCode get_size(void *user, OTF2_CollectiveContext *ctx, uint32_t *size)
{
    (void)ctx;
    *size = ((const sp_ipc *)user)->size;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode get_rank(void *user, OTF2_CollectiveContext *ctx, uint32_t *rank)
{
    (void)ctx;
    *rank = ((const sp_ipc *)user)->rank;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode create_local_comm(void *user, OTF2_CollectiveContext **local,
                                           OTF2_CollectiveContext *global, uint32_t grank,
                                           uint32_t gsize, uint32_t lrank, uint32_t lsize,
                                           uint32_t file, uint32_t files)
{
    (void)user, (void)global, (void)grank, (void)gsize, (void)lrank, (void)lsize, (void)file,
        (void)files;
    /* Only SION archives use local communicators; POSIX ones never ask. */
    *local = NULL;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode free_local_comm(void *user, OTF2_CollectiveContext *local)
{
    (void)user, (void)local;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode barrier(void *user, OTF2_CollectiveContext *ctx)
{
    (void)ctx;
    const sp_ipc *ipc = user;
    return result(ipc->ops->barrier(ipc->ctx));
}

static OTF2_CallbackCode bcast(void *user, OTF2_CollectiveContext *ctx, void *data, uint32_t n,
                               OTF2_Type type, uint32_t root)
{
    (void)ctx;
    const sp_ipc *ipc = user;
    return result(ipc->ops->bcast(ipc->ctx, data, n * type_size(type), root));
}

static OTF2_CallbackCode gather(void *user, OTF2_CollectiveContext *ctx, const void *in,
                                void *out, uint32_t n, OTF2_Type type, uint32_t root)
{
    (void)ctx;
    const sp_ipc *ipc = user;
    return result(ipc->ops->gather(ipc->ctx, in, n * type_size(type), out, root));
}

/* Element counts per rank (read at the root only) as byte counts. */
static uint64_t *byte_counts(const sp_ipc *ipc, const uint32_t *counts, OTF2_Type type,
                             uint32_t root)
{
    uint64_t *bytes = calloc(ipc->size ? ipc->size : 1, sizeof *bytes);
    if (bytes && ipc->rank == root)
        for (uint32_t r = 0; r < ipc->size; r++)
            bytes[r] = counts[r] * type_size(type);
    return bytes;
}

static OTF2_CallbackCode gatherv(void *user, OTF2_CollectiveContext *ctx, const void *in,
                                 uint32_t in_n, void *out, const uint32_t *out_n, OTF2_Type type,
                                 uint32_t root)
{
    (void)ctx;
    const sp_ipc *ipc = user;
    uint64_t *counts = byte_counts(ipc, out_n, type, root);
    /* Every process takes part even when it could not make its counts: the others wait. */
    int status = ipc->ops->gatherv(ipc->ctx, in, in_n * type_size(type), out, counts, root);
    if (!counts)
        status = -1;
    free(counts);
    return result(status);
}

static OTF2_CallbackCode scatter(void *user, OTF2_CollectiveContext *ctx, const void *in,
                                 void *out, uint32_t n, OTF2_Type type, uint32_t root)
{
    (void)ctx;
    const sp_ipc *ipc = user;
    return result(ipc->ops->scatter(ipc->ctx, in, out, n * type_size(type), root));
}

static OTF2_CallbackCode scatterv(void *user, OTF2_CollectiveContext *ctx, const void *in,
                                  const uint32_t *in_n, void *out, uint32_t out_n, OTF2_Type type,
                                  uint32_t root)
{
    (void)ctx;
    const sp_ipc *ipc = user;
    uint64_t *counts = byte_counts(ipc, in_n, type, root);
    int status = ipc->ops->scatterv(ipc->ctx, in, counts, out, out_n * type_size(type), root);
    if (!counts)
        status = -1;
    free(counts);
    return result(status);
}

static void release(void *user, OTF2_CollectiveContext *global, OTF2_CollectiveContext *local)
{
    (void)user, (void)global, (void)local;
}

/* One entry per OTF2 collective, each on the sp_ipc_ops operation of the same name: the
 * same shape as the sp_ipc_ops tables (core/ipc.h) by design, not logic written twice. */
const OTF2_CollectiveCallbacks sp_trace_ipc_collectives = {
    .otf2_release = release,
    .otf2_get_size = get_size,
    .otf2_get_rank = get_rank,
    .otf2_create_local_comm = create_local_comm,
    .otf2_free_local_comm = free_local_comm,
    .otf2_barrier = barrier,
    .otf2_bcast = bcast,
    .otf2_gather = gather,
    .otf2_gatherv = gatherv,
    .otf2_scatter = scatter,
    .otf2_scatterv = scatterv,
};
