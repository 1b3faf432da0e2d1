/* Collective operations, with the bytes each rank sends and receives. */
#include "adapters/mpi/mpi_adapter.h"

static int comm_size_of(MPI_Comm comm)
{
    int size = 1;
    PMPI_Comm_size(comm, &size);
    return size;
}

static int comm_rank_of(MPI_Comm comm)
{
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    return rank;
}

static void collective_enter(int fn)
{
    spmpi_enter(fn);
    sp_location *loc = sp_event_section_begin();
    if (loc) {
        sp_mpi_collective_begin(loc, sp_clock_now());
        sp_event_section_end(loc);
    }
}

static int collective_leave(int fn, int status, sp_collective_op op, MPI_Comm comm, int root,
                            uint64_t sent, uint64_t received)
{
    sp_location *loc = spmpi_after();
    if (loc) {
        if (status == MPI_SUCCESS)
            sp_mpi_collective_end(loc, sp_clock_now(), op, spmpi_comm_id(comm),
                                  root < 0 ? SP_NO_ROOT : (uint32_t)root, sent,
                                  received);
        spmpi_leave(loc, fn);
    }
    return status;
}

static uint64_t sum_counts(MPI_Datatype type, const int *counts, int n)
{
    uint64_t total = 0;
    for (int i = 0; counts && i < n; i++)
        total += spmpi_type_bytes(type, counts[i]);
    return total;
}

EXPORT int MPI_Barrier(MPI_Comm comm)
{
    collective_enter(FN_BARRIER);
    int s = PMPI_Barrier(comm);
    return collective_leave(FN_BARRIER, s, SP_COLL_BARRIER, comm, -1, 0, 0);
}

EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    collective_enter(FN_BCAST);
    int s = PMPI_Bcast(buf, count, type, root, comm);
    uint64_t bytes = spmpi_type_bytes(type, count);
    bool is_root = comm_rank_of(comm) == root;
    return collective_leave(FN_BCAST, s, SP_COLL_BCAST, comm, root,
                            is_root ? bytes * (uint64_t)(comm_size_of(comm) - 1) : 0,
                            is_root ? 0 : bytes);
}

EXPORT int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                      int root, MPI_Comm comm)
{
    collective_enter(FN_REDUCE);
    int s = PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
    uint64_t bytes = spmpi_type_bytes(type, count);
    bool is_root = comm_rank_of(comm) == root;
    return collective_leave(FN_REDUCE, s, SP_COLL_REDUCE, comm, root,
                            is_root ? 0 : bytes,
                            is_root ? bytes * (uint64_t)(comm_size_of(comm) - 1) : 0);
}

EXPORT int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm)
{
    collective_enter(FN_ALLREDUCE);
    int s = PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
    uint64_t bytes = spmpi_type_bytes(type, count);
    return collective_leave(FN_ALLREDUCE, s, SP_COLL_ALLREDUCE, comm, -1, bytes, bytes);
}

EXPORT int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                      MPI_Datatype rtype, int root, MPI_Comm comm)
{
    collective_enter(FN_GATHER);
    int s = PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    bool is_root = comm_rank_of(comm) == root;
    uint64_t sent = sbuf == MPI_IN_PLACE ? spmpi_type_bytes(rtype, rcount) : spmpi_type_bytes(stype, scount);
    return collective_leave(FN_GATHER, s, SP_COLL_GATHER, comm, root, sent,
                            is_root ? spmpi_type_bytes(rtype, rcount) * (uint64_t)comm_size_of(comm) : 0);
}

EXPORT int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                       MPI_Comm comm)
{
    collective_enter(FN_GATHERV);
    int s = PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
    bool is_root = comm_rank_of(comm) == root;
    uint64_t sent = sbuf == MPI_IN_PLACE ? 0 : spmpi_type_bytes(stype, scount);
    return collective_leave(FN_GATHERV, s, SP_COLL_GATHERV, comm, root, sent,
                            is_root ? sum_counts(rtype, rcounts, comm_size_of(comm)) : 0);
}

EXPORT int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                       MPI_Datatype rtype, int root, MPI_Comm comm)
{
    collective_enter(FN_SCATTER);
    int s = PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    bool is_root = comm_rank_of(comm) == root;
    return collective_leave(FN_SCATTER, s, SP_COLL_SCATTER, comm, root,
                            is_root ? spmpi_type_bytes(stype, scount) * (uint64_t)comm_size_of(comm) : 0,
                            rbuf == MPI_IN_PLACE ? 0 : spmpi_type_bytes(rtype, rcount));
}

EXPORT int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[],
                        MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                        MPI_Comm comm)
{
    collective_enter(FN_SCATTERV);
    int s = PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
    bool is_root = comm_rank_of(comm) == root;
    return collective_leave(FN_SCATTERV, s, SP_COLL_SCATTERV, comm, root,
                            is_root ? sum_counts(stype, scounts, comm_size_of(comm)) : 0,
                            rbuf == MPI_IN_PLACE ? 0 : spmpi_type_bytes(rtype, rcount));
}

EXPORT int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                         MPI_Datatype rtype, MPI_Comm comm)
{
    collective_enter(FN_ALLGATHER);
    int s = PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    uint64_t sent = sbuf == MPI_IN_PLACE ? spmpi_type_bytes(rtype, rcount) : spmpi_type_bytes(stype, scount);
    return collective_leave(FN_ALLGATHER, s, SP_COLL_ALLGATHER, comm, -1, sent,
                            spmpi_type_bytes(rtype, rcount) * (uint64_t)comm_size_of(comm));
}

EXPORT int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                          const int rcounts[], const int displs[], MPI_Datatype rtype,
                          MPI_Comm comm)
{
    collective_enter(FN_ALLGATHERV);
    int s = PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
    uint64_t sent = sbuf == MPI_IN_PLACE ? 0 : spmpi_type_bytes(stype, scount);
    return collective_leave(FN_ALLGATHERV, s, SP_COLL_ALLGATHERV, comm, -1, sent,
                            sum_counts(rtype, rcounts, comm_size_of(comm)));
}

EXPORT int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                        MPI_Datatype rtype, MPI_Comm comm)
{
    collective_enter(FN_ALLTOALL);
    int s = PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    uint64_t n = (uint64_t)comm_size_of(comm);
    uint64_t sent = sbuf == MPI_IN_PLACE ? spmpi_type_bytes(rtype, rcount) : spmpi_type_bytes(stype, scount);
    return collective_leave(FN_ALLTOALL, s, SP_COLL_ALLTOALL, comm, -1, sent * n,
                            spmpi_type_bytes(rtype, rcount) * n);
}

EXPORT int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                         MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[],
                         MPI_Datatype rtype, MPI_Comm comm)
{
    collective_enter(FN_ALLTOALLV);
    int s = PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
    int n = comm_size_of(comm);
    return collective_leave(FN_ALLTOALLV, s, SP_COLL_ALLTOALLV, comm, -1,
                            sbuf == MPI_IN_PLACE ? sum_counts(rtype, rcounts, n)
                                                 : sum_counts(stype, scounts, n),
                            sum_counts(rtype, rcounts, n));
}

EXPORT int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm)
{
    collective_enter(FN_REDUCE_SCATTER);
    int s = PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm);
    return collective_leave(FN_REDUCE_SCATTER, s, SP_COLL_REDUCE_SCATTER, comm, -1,
                            sum_counts(type, rcounts, comm_size_of(comm)),
                            spmpi_type_bytes(type, rcounts[comm_rank_of(comm)]));
}

EXPORT int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type,
                                    MPI_Op op, MPI_Comm comm)
{
    collective_enter(FN_REDUCE_SCATTER_BLOCK);
    int s = PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm);
    uint64_t bytes = spmpi_type_bytes(type, rcount);
    return collective_leave(FN_REDUCE_SCATTER_BLOCK, s, SP_COLL_REDUCE_SCATTER_BLOCK,
                            comm, -1, bytes * (uint64_t)comm_size_of(comm), bytes);
}

EXPORT int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm)
{
    collective_enter(FN_SCAN);
    int s = PMPI_Scan(sbuf, rbuf, count, type, op, comm);
    uint64_t bytes = spmpi_type_bytes(type, count);
    return collective_leave(FN_SCAN, s, SP_COLL_SCAN, comm, -1, bytes, bytes);
}

EXPORT int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm)
{
    collective_enter(FN_EXSCAN);
    int s = PMPI_Exscan(sbuf, rbuf, count, type, op, comm);
    uint64_t bytes = spmpi_type_bytes(type, count);
    return collective_leave(FN_EXSCAN, s, SP_COLL_EXSCAN, comm, -1, bytes, bytes);
}

