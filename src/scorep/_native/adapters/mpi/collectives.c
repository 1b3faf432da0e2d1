/* Collective operations, blocking and non-blocking, with the bytes each process sends and
 * receives counted as Score-P counts them (its scorep_mpi_coll_bytes_* functions, also for
 * inter-communicators and MPI_IN_PLACE), so that profiles compare with Score-P's: e.g. an
 * Allreduce of n bytes on p processes counts p*n sent and p*n received on each.
 *
 * A blocking collective is recorded as MpiCollectiveBegin/End inside its region; a
 * non-blocking one as NonBlockingCollectiveRequest at its call and
 * NonBlockingCollectiveComplete in the Wait or Test that completes it (requests.c). */
#include "adapters/mpi/mpi_adapter.h"

typedef struct {
    uint64_t sent, received;
} bytes;

static int size_of(MPI_Comm comm)
{
    int size = 1;
    PMPI_Comm_size(comm, &size);
    return size;
}

static int remote_size_of(MPI_Comm comm)
{
    int size = 0;
    PMPI_Comm_remote_size(comm, &size);
    return size;
}

static int rank_of(MPI_Comm comm)
{
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    return rank;
}

static uint64_t type_size(MPI_Datatype type)
{
    return spmpi_type_bytes(type, 1);
}

static uint64_t count_of(int count)
{
    return count < 0 ? 0 : (uint64_t)count;
}

/* Processes on the other side: the communicator's size, or the remote group's. */
static uint64_t partners(MPI_Comm comm)
{
    return (uint64_t)(spmpi_is_intercomm(comm) ? remote_size_of(comm) : size_of(comm));
}

static bytes all_to_one(int sendcount, MPI_Datatype sendtype, int recvcount,
                        MPI_Datatype recvtype, int root, bool inplace, MPI_Comm comm)
{
    if (!spmpi_is_intercomm(comm)) {
        if (rank_of(comm) == root) {
            /* equal type signatures: recvcount * recvsize = sendcount * sendsize */
            uint64_t block = count_of(recvcount) * type_size(recvtype);
            uint64_t n = (uint64_t)size_of(comm);
            return inplace ? (bytes){0, (n - 1) * block} : (bytes){block, n * block};
        }
        return (bytes){count_of(sendcount) * type_size(sendtype), 0};
    }
    if (root == MPI_ROOT)
        return (bytes){0, partners(comm) * count_of(recvcount) * type_size(recvtype)};
    if (root != MPI_PROC_NULL)
        return (bytes){count_of(sendcount) * type_size(sendtype), 0};
    return (bytes){0, 0};
}

static bytes swapped(bytes b)
{
    return (bytes){b.received, b.sent};
}

static bytes one_to_all(int sendcount, MPI_Datatype sendtype, int recvcount,
                        MPI_Datatype recvtype, int root, bool inplace, MPI_Comm comm)
{
    return swapped(all_to_one(recvcount, recvtype, sendcount, sendtype, root, inplace, comm));
}

static bytes gatherv(int sendcount, MPI_Datatype sendtype, const int *recvcounts,
                     MPI_Datatype recvtype, int root, bool inplace, MPI_Comm comm)
{
    if (!spmpi_is_intercomm(comm)) {
        int me = rank_of(comm);
        if (me == root) {
            uint64_t size = type_size(recvtype), received = 0;
            for (int r = 0, n = size_of(comm); recvcounts && r < n; r++)
                received += count_of(recvcounts[r]) * size;
            uint64_t mine = recvcounts ? count_of(recvcounts[me]) * size : 0;
            return inplace ? (bytes){0, received - mine} : (bytes){mine, received};
        }
        return (bytes){count_of(sendcount) * type_size(sendtype), 0};
    }
    if (root == MPI_ROOT) {
        uint64_t size = type_size(recvtype), received = 0;
        for (int r = 0, n = remote_size_of(comm); recvcounts && r < n; r++)
            received += count_of(recvcounts[r]) * size;
        return (bytes){0, received};
    }
    if (root != MPI_PROC_NULL)
        return (bytes){count_of(sendcount) * type_size(sendtype), 0};
    return (bytes){0, 0};
}

static bytes alltoall(int sendcount, MPI_Datatype sendtype, int recvcount,
                      MPI_Datatype recvtype, bool inplace, MPI_Comm comm)
{
    uint64_t n = partners(comm);
    uint64_t received = count_of(recvcount) * type_size(recvtype);
    if (inplace)
        return (bytes){(n - 1) * received, (n - 1) * received};
    return (bytes){n * count_of(sendcount) * type_size(sendtype), n * received};
}

static bytes alltoallv(const int *sendcounts, MPI_Datatype sendtype, const int *recvcounts,
                       MPI_Datatype recvtype, bool inplace, MPI_Comm comm)
{
    int n = (int)partners(comm);
    uint64_t rsize = type_size(recvtype), ssize = inplace ? 0 : type_size(sendtype);
    bytes b = {0, 0};
    for (int r = 0; r < n; r++) {
        b.received += recvcounts ? count_of(recvcounts[r]) * rsize : 0;
        b.sent += !inplace && sendcounts ? count_of(sendcounts[r]) * ssize : 0;
    }
    if (inplace) {
        /* the same amount goes both ways between any two processes */
        b.received -= recvcounts ? count_of(recvcounts[rank_of(comm)]) * rsize : 0;
        b.sent = b.received;
    }
    return b;
}

static bytes alltoallw(const int *sendcounts, const MPI_Datatype *sendtypes,
                       const int *recvcounts, const MPI_Datatype *recvtypes, bool inplace,
                       MPI_Comm comm)
{
    int n = (int)partners(comm);
    bytes b = {0, 0};
    for (int r = 0; r < n; r++) {
        b.received += recvcounts && recvtypes ? count_of(recvcounts[r]) * type_size(recvtypes[r]) : 0;
        if (!inplace)
            b.sent += sendcounts && sendtypes ? count_of(sendcounts[r]) * type_size(sendtypes[r]) : 0;
    }
    if (inplace) {
        int me = rank_of(comm);
        b.received -= recvcounts && recvtypes ? count_of(recvcounts[me]) * type_size(recvtypes[me]) : 0;
        b.sent = b.received;
    }
    return b;
}

static bytes allgatherv(int sendcount, MPI_Datatype sendtype, const int *recvcounts,
                        MPI_Datatype recvtype, bool inplace, MPI_Comm comm)
{
    int n = (int)partners(comm);
    uint64_t rsize = type_size(recvtype), received = 0;
    for (int r = 0; recvcounts && r < n; r++)
        received += count_of(recvcounts[r]) * rsize;
    if (inplace) {
        uint64_t mine = recvcounts ? count_of(recvcounts[rank_of(comm)]) * rsize : 0;
        return (bytes){(uint64_t)(n - 1) * mine, received - mine};
    }
    return (bytes){(uint64_t)n * count_of(sendcount) * type_size(sendtype), received};
}

static bytes reduce_scatter_block(int recvcount, MPI_Datatype type, bool inplace, MPI_Comm comm)
{
    uint64_t n = (uint64_t)size_of(comm);
    uint64_t sent = (inplace ? n - 1 : n) * count_of(recvcount) * type_size(type);
    return (bytes){sent, sent};
}

static bytes reduce_scatter(const int *recvcounts, MPI_Datatype type, bool inplace,
                            MPI_Comm comm)
{
    int n = size_of(comm), me = rank_of(comm);
    uint64_t size = type_size(type), total = 0;
    for (int r = 0; recvcounts && r < n; r++)
        total += count_of(recvcounts[r]);
    uint64_t mine = recvcounts ? count_of(recvcounts[me]) : 0;
    if (spmpi_is_intercomm(comm))
        return (bytes){total * size, (uint64_t)remote_size_of(comm) * mine * size};
    if (inplace)
        return (bytes){(total - mine) * size, (uint64_t)(n - 1) * mine * size};
    return (bytes){total * size, (uint64_t)n * mine * size};
}

static bytes scan(int count, MPI_Datatype type, bool inplace, MPI_Comm comm)
{
    uint64_t me = (uint64_t)rank_of(comm), n = (uint64_t)size_of(comm);
    uint64_t block = count_of(count) * type_size(type);
    if (inplace)
        return (bytes){(n - me - 1) * block, me * block};
    return (bytes){(n - me) * block, (me + 1) * block};
}

/* ---- blocking ---------------------------------------------------------------------------- */

static void collective_enter(int fn)
{
    spmpi_enter(fn);
    sp_location *loc = spmpi_after(fn);
    if (loc) {
        sp_mpi_collective_begin(loc, sp_clock_now());
        sp_event_section_end(loc);
    }
}

static int collective_leave(int fn, int status, sp_collective_op op, MPI_Comm comm, int root,
                            bytes b)
{
    sp_location *loc = spmpi_after(fn);
    if (loc) {
        if (status == MPI_SUCCESS)
            sp_mpi_collective_end(loc, sp_clock_now(), op, spmpi_comm_id(comm),
                                  root < 0 ? SP_NO_ROOT : (uint32_t)root, b.sent, b.received);
        spmpi_leave(loc, fn);
    }
    return status;
}

/* Bytes are counted before the call: the arguments are read as the call got them. */
#define COLLECTIVE(FN, OP, CALL, COMM, ROOT, BYTES)                                             \
    do {                                                                                        \
        collective_enter(FN);                                                                   \
        bytes b_ = spmpi_on(G_COLL) ? (BYTES) : (bytes){0, 0};                                  \
        int s_ = (CALL);                                                                        \
        return collective_leave(FN, s_, OP, COMM, ROOT, b_);                                    \
    } while (0)

/* Same-shape MPI wrappers, a family: one per MPI function, each the same steps (enter,
 * the PMPI_ call, its records, leave) with its own arguments. The duplicates tool pairs
 * them; they are not one logic written twice. */
EXPORT int MPI_Barrier(MPI_Comm comm)
{
    COLLECTIVE(FN_BARRIER, SP_COLL_BARRIER, PMPI_Barrier(comm), comm, -1, ((bytes){0, 0}));
}

EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    COLLECTIVE(FN_BCAST, SP_COLL_BCAST, PMPI_Bcast(buf, count, type, root, comm), comm, root,
               one_to_all(count, type, count, type, root, false, comm));
}

EXPORT int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                      int root, MPI_Comm comm)
{
    COLLECTIVE(FN_REDUCE, SP_COLL_REDUCE, PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm),
               comm, root, all_to_one(count, type, count, type, root, sbuf == MPI_IN_PLACE, comm));
}

EXPORT int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm)
{
    COLLECTIVE(FN_ALLREDUCE, SP_COLL_ALLREDUCE, PMPI_Allreduce(sbuf, rbuf, count, type, op, comm),
               comm, -1, alltoall(count, type, count, type, sbuf == MPI_IN_PLACE, comm));
}

EXPORT int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                      MPI_Datatype rtype, int root, MPI_Comm comm)
{
    COLLECTIVE(FN_GATHER, SP_COLL_GATHER,
               PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm), comm, root,
               all_to_one(scount, stype, rcount, rtype, root, sbuf == MPI_IN_PLACE, comm));
}

EXPORT int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                       MPI_Comm comm)
{
    COLLECTIVE(FN_GATHERV, SP_COLL_GATHERV,
               PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm), comm,
               root, gatherv(scount, stype, rcounts, rtype, root, sbuf == MPI_IN_PLACE, comm));
}

EXPORT int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                       MPI_Datatype rtype, int root, MPI_Comm comm)
{
    COLLECTIVE(FN_SCATTER, SP_COLL_SCATTER,
               PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm), comm, root,
               one_to_all(scount, stype, rcount, rtype, root, rbuf == MPI_IN_PLACE, comm));
}

EXPORT int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[],
                        MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                        MPI_Comm comm)
{
    COLLECTIVE(FN_SCATTERV, SP_COLL_SCATTERV,
               PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm), comm,
               root,
               swapped(gatherv(rcount, rtype, scounts, stype, root, rbuf == MPI_IN_PLACE, comm)));
}

EXPORT int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                         MPI_Datatype rtype, MPI_Comm comm)
{
    COLLECTIVE(FN_ALLGATHER, SP_COLL_ALLGATHER,
               PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm), comm, -1,
               alltoall(scount, stype, rcount, rtype, sbuf == MPI_IN_PLACE, comm));
}

EXPORT int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                          const int rcounts[], const int displs[], MPI_Datatype rtype,
                          MPI_Comm comm)
{
    COLLECTIVE(FN_ALLGATHERV, SP_COLL_ALLGATHERV,
               PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm), comm, -1,
               allgatherv(scount, stype, rcounts, rtype, sbuf == MPI_IN_PLACE, comm));
}

EXPORT int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                        MPI_Datatype rtype, MPI_Comm comm)
{
    COLLECTIVE(FN_ALLTOALL, SP_COLL_ALLTOALL,
               PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm), comm, -1,
               alltoall(scount, stype, rcount, rtype, sbuf == MPI_IN_PLACE, comm));
}

EXPORT int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                         MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[],
                         MPI_Datatype rtype, MPI_Comm comm)
{
    COLLECTIVE(FN_ALLTOALLV, SP_COLL_ALLTOALLV,
               PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm),
               comm, -1, alltoallv(scounts, stype, rcounts, rtype, sbuf == MPI_IN_PLACE, comm));
}

EXPORT int MPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                         const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                         const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)
{
    COLLECTIVE(FN_ALLTOALLW, SP_COLL_ALLTOALLW,
               PMPI_Alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes,
                              comm),
               comm, -1,
               alltoallw(scounts, stypes, rcounts, rtypes, sbuf == MPI_IN_PLACE, comm));
}

EXPORT int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm)
{
    COLLECTIVE(FN_REDUCE_SCATTER, SP_COLL_REDUCE_SCATTER,
               PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm), comm, -1,
               reduce_scatter(rcounts, type, sbuf == MPI_IN_PLACE, comm));
}

EXPORT int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type,
                                    MPI_Op op, MPI_Comm comm)
{
    COLLECTIVE(FN_REDUCE_SCATTER_BLOCK, SP_COLL_REDUCE_SCATTER_BLOCK,
               PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm), comm, -1,
               reduce_scatter_block(rcount, type, sbuf == MPI_IN_PLACE, comm));
}

EXPORT int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm)
{
    COLLECTIVE(FN_SCAN, SP_COLL_SCAN, PMPI_Scan(sbuf, rbuf, count, type, op, comm), comm, -1,
               scan(count, type, sbuf == MPI_IN_PLACE, comm));
}

EXPORT int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm)
{
    /* never sends to itself: counted like an in-place inclusive scan, as Score-P */
    COLLECTIVE(FN_EXSCAN, SP_COLL_EXSCAN, PMPI_Exscan(sbuf, rbuf, count, type, op, comm), comm,
               -1, scan(count, type, true, comm));
}

EXPORT int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype type,
                            MPI_Op op)
{
    SPMPI_REGION_CALL(FN_REDUCE_LOCAL, PMPI_Reduce_local(inbuf, inoutbuf, count, type, op));
}

/* ---- non-blocking ------------------------------------------------------------------------ */

#define ICOLLECTIVE(FN, OP, CALL, COMM, ROOT, BYTES, REQUEST)                                   \
    do {                                                                                        \
        uint64_t start_ = spmpi_enter(FN);                                                      \
        bytes b_ = spmpi_on(G_COLL) ? (BYTES) : (bytes){0, 0};                                  \
        int s_ = (CALL);                                                                        \
        sp_location *loc_ = spmpi_after(FN);                                                    \
        if (loc_) {                                                                             \
            if (s_ == MPI_SUCCESS)                                                              \
                spmpi_icoll_started(loc_, start_, *(REQUEST), OP, COMM, ROOT, b_.sent,          \
                                    b_.received);                                               \
            spmpi_leave(loc_, FN);                                                              \
        }                                                                                       \
        return s_;                                                                              \
    } while (0)

EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    ICOLLECTIVE(FN_IBARRIER, SP_COLL_BARRIER, PMPI_Ibarrier(comm, request), comm, -1,
                ((bytes){0, 0}), request);
}

EXPORT int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                      MPI_Request *request)
{
    ICOLLECTIVE(FN_IBCAST, SP_COLL_BCAST, PMPI_Ibcast(buf, count, type, root, comm, request), comm,
                root, one_to_all(count, type, count, type, root, false, comm), request);
}

EXPORT int MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                       int root, MPI_Comm comm, MPI_Request *request)
{
    ICOLLECTIVE(FN_IREDUCE, SP_COLL_REDUCE,
                PMPI_Ireduce(sbuf, rbuf, count, type, op, root, comm, request), comm, root,
                all_to_one(count, type, count, type, root, sbuf == MPI_IN_PLACE, comm), request);
}

EXPORT int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                          MPI_Comm comm, MPI_Request *request)
{
    ICOLLECTIVE(FN_IALLREDUCE, SP_COLL_ALLREDUCE,
                PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, request), comm, -1,
                alltoall(count, type, count, type, sbuf == MPI_IN_PLACE, comm), request);
}

EXPORT int MPI_Igather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                       MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *request)
{
    ICOLLECTIVE(FN_IGATHER, SP_COLL_GATHER,
                PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, request), comm,
                root, all_to_one(scount, stype, rcount, rtype, root, sbuf == MPI_IN_PLACE, comm),
                request);
}

EXPORT int MPI_Igatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                        const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                        MPI_Comm comm, MPI_Request *request)
{
    ICOLLECTIVE(FN_IGATHERV, SP_COLL_GATHERV,
                PMPI_Igatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm,
                              request),
                comm, root, gatherv(scount, stype, rcounts, rtype, root, sbuf == MPI_IN_PLACE, comm),
                request);
}

EXPORT int MPI_Iscatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                        MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *request)
{
    ICOLLECTIVE(FN_ISCATTER, SP_COLL_SCATTER,
                PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, request), comm,
                root, one_to_all(scount, stype, rcount, rtype, root, rbuf == MPI_IN_PLACE, comm),
                request);
}

EXPORT int MPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[],
                         MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                         MPI_Comm comm, MPI_Request *request)
{
    ICOLLECTIVE(FN_ISCATTERV, SP_COLL_SCATTERV,
                PMPI_Iscatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm,
                               request),
                comm, root,
                swapped(gatherv(rcount, rtype, scounts, stype, root, rbuf == MPI_IN_PLACE, comm)),
                request);
}

EXPORT int MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                          int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request)
{
    ICOLLECTIVE(FN_IALLGATHER, SP_COLL_ALLGATHER,
                PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, request), comm, -1,
                alltoall(scount, stype, rcount, rtype, sbuf == MPI_IN_PLACE, comm), request);
}

EXPORT int MPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                           const int rcounts[], const int displs[], MPI_Datatype rtype,
                           MPI_Comm comm, MPI_Request *request)
{
    ICOLLECTIVE(FN_IALLGATHERV, SP_COLL_ALLGATHERV,
                PMPI_Iallgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, request),
                comm, -1, allgatherv(scount, stype, rcounts, rtype, sbuf == MPI_IN_PLACE, comm),
                request);
}

EXPORT int MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                         MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request)
{
    ICOLLECTIVE(FN_IALLTOALL, SP_COLL_ALLTOALL,
                PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, request), comm, -1,
                alltoall(scount, stype, rcount, rtype, sbuf == MPI_IN_PLACE, comm), request);
}

EXPORT int MPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                          MPI_Datatype stype, void *rbuf, const int rcounts[],
                          const int rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                          MPI_Request *request)
{
    ICOLLECTIVE(FN_IALLTOALLV, SP_COLL_ALLTOALLV,
                PMPI_Ialltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm,
                                request),
                comm, -1, alltoallv(scounts, stype, rcounts, rtype, sbuf == MPI_IN_PLACE, comm),
                request);
}

EXPORT int MPI_Ialltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                          const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                          const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                          MPI_Request *request)
{
    ICOLLECTIVE(FN_IALLTOALLW, SP_COLL_ALLTOALLW,
                PMPI_Ialltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes,
                                comm, request),
                comm, -1,
                alltoallw(scounts, stypes, rcounts, rtypes, sbuf == MPI_IN_PLACE, comm), request);
}

EXPORT int MPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[],
                               MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    ICOLLECTIVE(FN_IREDUCE_SCATTER, SP_COLL_REDUCE_SCATTER,
                PMPI_Ireduce_scatter(sbuf, rbuf, rcounts, type, op, comm, request), comm, -1,
                reduce_scatter(rcounts, type, sbuf == MPI_IN_PLACE, comm), request);
}

EXPORT int MPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type,
                                     MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    ICOLLECTIVE(FN_IREDUCE_SCATTER_BLOCK, SP_COLL_REDUCE_SCATTER_BLOCK,
                PMPI_Ireduce_scatter_block(sbuf, rbuf, rcount, type, op, comm, request), comm, -1,
                reduce_scatter_block(rcount, type, sbuf == MPI_IN_PLACE, comm), request);
}

EXPORT int MPI_Iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                     MPI_Comm comm, MPI_Request *request)
{
    ICOLLECTIVE(FN_ISCAN, SP_COLL_SCAN, PMPI_Iscan(sbuf, rbuf, count, type, op, comm, request),
                comm, -1, scan(count, type, sbuf == MPI_IN_PLACE, comm), request);
}

EXPORT int MPI_Iexscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm, MPI_Request *request)
{
    ICOLLECTIVE(FN_IEXSCAN, SP_COLL_EXSCAN,
                PMPI_Iexscan(sbuf, rbuf, count, type, op, comm, request), comm, -1,
                scan(count, type, true, comm), request);
}
