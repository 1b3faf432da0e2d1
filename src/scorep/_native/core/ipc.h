/* How the processes of one experiment agree at the end of a measurement: whether all of
 * them got there, who writes what, their definitions and clocks. One small interface,
 * implemented by each way processes can be grouped:
 *   - a single process (sp_ipc_single, here): every operation is a copy;
 *   - MPI ranks (adapters/mpi/ipc.c): PMPI collectives on a communicator of the tool;
 *   - the child processes of one program (adapters/process/ipc.c: through files in the
 *     experiment directory);
 *   - threads of one process as ranks (core/ipc_threads.c: the offline wait-state replay).
 * Each fills one table of sp_ipc_ops: the tables are a family, the same shape by design.
 * The core's unification and the trace substrate's collective OTF2 writing are built on it;
 * neither knows which implementation runs.
 *
 * Every operation is called by all processes of the group in the same order; `root`
 * is a rank. All return 0, or -1 when the operation failed on this process. */
#ifndef SCOREP_CORE_IPC_H
#define SCOREP_CORE_IPC_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"

typedef struct sp_ipc_ops {
    /* 0 when every process reached this point within `timeout` seconds (and knows that
     * all others did): only then do they write one experiment together. */
    int (*agree)(void *ctx, double timeout);
    int (*barrier)(void *ctx);
    /* root's `bytes` bytes at `data` to everyone. */
    int (*bcast)(void *ctx, void *data, uint64_t bytes, uint32_t root);
    /* Every process's `bytes` bytes, concatenated in rank order into root's `out`. */
    int (*gather)(void *ctx, const void *in, uint64_t bytes, void *out, uint32_t root);
    /* The same with a size per process; `counts` (bytes, per rank) is read at the root only. */
    int (*gatherv)(void *ctx, const void *in, uint64_t bytes, void *out, const uint64_t *counts,
                   uint32_t root);
    /* root's `in` holds `bytes` bytes for each rank, in rank order. */
    int (*scatter)(void *ctx, const void *in, void *out, uint64_t bytes, uint32_t root);
    /* The same with a size per process; `counts` is read at the root only. */
    int (*scatterv)(void *ctx, const void *in, const uint64_t *counts, void *out, uint64_t bytes,
                    uint32_t root);
    /* Rank 0's CLOCK_MONOTONIC minus this process's, in ns (0 on rank 0). */
    int (*clock_offset)(void *ctx, int64_t *offset_ns);
    /* Point to point, optional (NULL: the group has only the collectives above): `bytes`
     * bytes to one process, and the next message from `source` (*data malloc'ed). With them
     * the unification merges along a tree instead of at the root alone (core/unify.c). */
    int (*send)(void *ctx, const void *data, uint64_t bytes, uint32_t dest);
    int (*recv)(void *ctx, void **data, uint64_t *bytes, uint32_t source);
} sp_ipc_ops;

/* The clock_offset of a group whose processes read one clock (one process, its threads, the
 * children of one program on its machine): 0. */
int sp_ipc_same_clock(void *ctx, int64_t *offset_ns);

typedef struct sp_ipc {
    const sp_ipc_ops *ops;
    void *ctx;
    uint32_t rank, size;
} sp_ipc;

/* The group of one: this process alone. */
extern const sp_ipc sp_ipc_single;

/* Rank 0 receives every process's bytes, concatenated in rank order (*all, malloc'ed;
 * sizes[r] per rank, `sizes` has room for ipc->size entries); elsewhere *all is NULL. */
SP_MUST_CHECK int sp_ipc_gather_bytes(const sp_ipc *ipc, const void *data, uint64_t size,
                                      void **all, uint64_t *sizes);

/* Rank 0 sends parts[r] (sizes[r] bytes) to rank r; every process gets its own part
 * (*mine, malloc'ed, *size bytes). `parts` and `sizes` are read at rank 0 only. */
SP_MUST_CHECK int sp_ipc_scatter_bytes(const sp_ipc *ipc, void *const *parts,
                                       const uint64_t *sizes, void **mine, uint64_t *size);

/* Rank 0's clock minus this process's, in ns (*offset_ns; 0 on rank 0), measured with
 * point-to-point messages (the group must have send and recv): each parent exchanges
 * `rounds` ping-pongs with each child, the one with the shortest round trip counts
 * (Cristian's method: the child's clock read at the middle of it), and sends the child its
 * offset composed with its own: the child's offset to rank 0 is its parent's plus its own to
 * the parent. `tree`: along the binomial tree of the unification (log2(P) levels, parents
 * working in parallel); else rank 0 with every rank in turn (the direct method). `now` reads
 * this process's clock (ns). *bound_ns: the error bound the measurement proves, half the
 * shortest round trip summed over the hops from rank 0 (clocks that do not drift during
 * the exchange are within it). Returns 0, or -1 when a message failed. */
SP_MUST_CHECK int sp_ipc_clock_offsets(const sp_ipc *ipc, bool tree, uint32_t rounds,
                                       int64_t (*now)(void *now_ctx), void *now_ctx,
                                       int64_t *offset_ns, int64_t *bound_ns);

#endif
