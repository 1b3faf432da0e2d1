/* The group operations the core needs at the end of the measurement (core/ipc.h), as
 * PMPI collectives on the adapter's own duplicate of MPI_COMM_WORLD. */
#include "adapters/mpi/mpi_adapter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int wait_for(MPI_Request *request, double timeout)
{
    struct timespec start, now, pause = {0, 1000000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        int done = 0;
        if (PMPI_Test(request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return -1;
        if (done)
            return 0;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) * 1e-9 > timeout)
            return -1;
        nanosleep(&pause, NULL);
    }
}

/* Two phases, so that no rank writes together with the others unless all of them will:
 * a barrier every rank reaches within the timeout, then a sum that only ranks past that
 * barrier contribute to (a rank that gave up never posts it). A rank that gave up leaves
 * its barrier request behind: harmless, the program ends right after. */
static int op_agree(void *ctx, double timeout)
{
    (void)ctx;
    MPI_Request request;
    if (PMPI_Ibarrier(spmpi_tool_comm, &request) != MPI_SUCCESS || wait_for(&request, timeout) != 0)
        return -1;
    int one = 1, sum = 0;
    if (PMPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, spmpi_tool_comm, &request) != MPI_SUCCESS ||
        wait_for(&request, timeout < 10 ? timeout : 10) != 0)
        return -1;
    return sum == spmpi_world_size ? 0 : -1;
}

static int ok(int status)
{
    return status == MPI_SUCCESS ? 0 : -1;
}

/* MPI counts are ints: larger transfers fail (the results are then written per rank). */
static bool fits(uint64_t bytes)
{
    return bytes <= INT32_MAX;
}

static int op_barrier(void *ctx)
{
    (void)ctx;
    return ok(PMPI_Barrier(spmpi_tool_comm));
}

static int op_bcast(void *ctx, void *data, uint64_t bytes, uint32_t root)
{
    (void)ctx;
    if (!fits(bytes))
        return -1;
    return ok(PMPI_Bcast(data, (int)bytes, MPI_BYTE, (int)root, spmpi_tool_comm));
}

static int op_gather(void *ctx, const void *in, uint64_t bytes, void *out, uint32_t root)
{
    (void)ctx;
    if (!fits(bytes))
        return -1;
    return ok(PMPI_Gather(in, (int)bytes, MPI_BYTE, out, (int)bytes, MPI_BYTE, (int)root,
                          spmpi_tool_comm));
}

static int op_scatter(void *ctx, const void *in, void *out, uint64_t bytes, uint32_t root)
{
    (void)ctx;
    if (!fits(bytes))
        return -1;
    return ok(PMPI_Scatter(in, (int)bytes, MPI_BYTE, out, (int)bytes, MPI_BYTE, (int)root,
                           spmpi_tool_comm));
}

/* Counts and displacements of a v-collective at the root (NULL elsewhere); false when they
 * do not fit into MPI's ints or out of memory (then the root takes part with zero counts:
 * the others' data is refused, which the tool's communicator reports as an error). */
static bool v_layout(const uint64_t *counts, bool is_root, int **out_counts, int **out_displs)
{
    *out_counts = *out_displs = NULL;
    if (!is_root)
        return true;
    int *c = calloc((size_t)spmpi_world_size, sizeof *c);
    int *d = calloc((size_t)spmpi_world_size, sizeof *d);
    *out_counts = c;
    *out_displs = d;
    if (!c || !d || !counts)
        return false;
    uint64_t total = 0;
    for (int r = 0; r < spmpi_world_size; r++)
        total += counts[r];
    if (!fits(total))
        return false;
    for (int r = 0, offset = 0; r < spmpi_world_size; offset += c[r], r++) {
        c[r] = (int)counts[r];
        d[r] = offset;
    }
    return true;
}

static int op_gatherv(void *ctx, const void *in, uint64_t bytes, void *out,
                      const uint64_t *counts, uint32_t root)
{
    (void)ctx;
    int *c, *d;
    bool is_root = spmpi_world_rank == (int)root;
    /* Every rank takes part even when its own layout failed: the others wait for it. */
    int status = v_layout(counts, is_root, &c, &d) && fits(bytes) ? 0 : -1;
    if (PMPI_Gatherv(in, fits(bytes) ? (int)bytes : 0, MPI_BYTE, out, c, d, MPI_BYTE, (int)root,
                     spmpi_tool_comm) != MPI_SUCCESS)
        status = -1;
    free(c);
    free(d);
    return status;
}

static int op_scatterv(void *ctx, const void *in, const uint64_t *counts, void *out,
                       uint64_t bytes, uint32_t root)
{
    (void)ctx;
    int *c, *d;
    bool is_root = spmpi_world_rank == (int)root;
    int status = v_layout(counts, is_root, &c, &d) && fits(bytes) ? 0 : -1;
    if (PMPI_Scatterv(in, c, d, MPI_BYTE, out, fits(bytes) ? (int)bytes : 0, MPI_BYTE,
                      (int)root, spmpi_tool_comm) != MPI_SUCCESS)
        status = -1;
    free(c);
    free(d);
    return status;
}

/* This machine's boot id (empty when unknown): ranks that share it with rank 0 read the
 * same CLOCK_MONOTONIC. */
void spmpi_boot_id(char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(out, (int)len, f))
            out[0] = '\0';
        fclose(f);
    }
}

static int64_t monotonic_now(void *ctx)
{
    (void)ctx;
    return (int64_t)sp_clock_monotonic_ns();
}

/* Each rank's CLOCK_MONOTONIC against rank 0's, measured along the unification's binomial
 * tree (core/ipc.c, sp_ipc_clock_offsets: each parent with its children, the best of a few
 * ping-pongs each, composed on the way down): log2(P) levels of exchanges working in
 * parallel instead of 8 ping-pongs with every rank in turn at rank 0, which took seconds at
 * 10^5 ranks. Composition adds at most half a round trip per hop (docs/SCALING.md).
 * Exactly 0 on rank 0's machine, where the clock is the same one and a measurement could
 * only add an error (uneven delays between oversubscribed ranks: a message would seem to
 * arrive before it was sent). */
static int op_clock_offset(void *ctx, int64_t *offset)
{
    (void)ctx;
    enum { ROUNDS = 8 };
    *offset = 0;
    char root_boot[64], mine[64];
    spmpi_boot_id(root_boot, sizeof root_boot);
    if (PMPI_Bcast(root_boot, (int)sizeof root_boot, MPI_CHAR, 0, spmpi_tool_comm) !=
        MPI_SUCCESS)
        return -1;
    spmpi_boot_id(mine, sizeof mine);
    bool same_clock = mine[0] && strcmp(mine, root_boot) == 0;
    const sp_ipc ipc = {.ops = &spmpi_ipc_ops,
                        .ctx = NULL,
                        .rank = (uint32_t)spmpi_world_rank,
                        .size = (uint32_t)spmpi_world_size};
    int64_t bound = 0;
    int status = sp_ipc_clock_offsets(&ipc, true, ROUNDS, monotonic_now, NULL, offset, &bound);
    if (same_clock || status != 0)
        *offset = 0;
    return status;
}

/* Point to point for the unification's tree: the size, then the bytes in pieces MPI's int
 * counts can hold. */
enum { P2P_TAG = 4712, P2P_PIECE = 1 << 30 };

static int op_send(void *ctx, const void *data, uint64_t bytes, uint32_t dest)
{
    (void)ctx;
    if (PMPI_Send(&bytes, 1, MPI_UINT64_T, (int)dest, P2P_TAG, spmpi_tool_comm) != MPI_SUCCESS)
        return -1;
    for (uint64_t done = 0; done < bytes; done += P2P_PIECE) {
        uint64_t piece = bytes - done < P2P_PIECE ? bytes - done : P2P_PIECE;
        if (PMPI_Send((const char *)data + done, (int)piece, MPI_BYTE, (int)dest, P2P_TAG,
                      spmpi_tool_comm) != MPI_SUCCESS)
            return -1;
    }
    return 0;
}

static int op_recv(void *ctx, void **data, uint64_t *bytes, uint32_t source)
{
    (void)ctx;
    *data = NULL;
    if (PMPI_Recv(bytes, 1, MPI_UINT64_T, (int)source, P2P_TAG, spmpi_tool_comm,
                  MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return -1;
    char *buffer = malloc(*bytes ? *bytes : 1);
    int status = buffer ? 0 : -1;
    /* The pieces are taken in any case: the sender goes on sending them. */
    for (uint64_t done = 0; done < *bytes; done += P2P_PIECE) {
        uint64_t piece = *bytes - done < P2P_PIECE ? *bytes - done : P2P_PIECE;
        static char sink[1];
        if (PMPI_Recv(buffer ? buffer + done : sink, buffer ? (int)piece : 0, MPI_BYTE,
                      (int)source, P2P_TAG, spmpi_tool_comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            status = -1;
    }
    if (status != 0) {
        free(buffer);
        return -1;
    }
    *data = buffer;
    return 0;
}

const sp_ipc_ops spmpi_ipc_ops = {
    .agree = op_agree,
    .barrier = op_barrier,
    .bcast = op_bcast,
    .gather = op_gather,
    .gatherv = op_gatherv,
    .scatter = op_scatter,
    .scatterv = op_scatterv,
    .clock_offset = op_clock_offset,
    .send = op_send,
    .recv = op_recv,
};
