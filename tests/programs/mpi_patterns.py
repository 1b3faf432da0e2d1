"""MPI communication patterns with known counts, for 2 or 4 ranks.

ping-pong (3 round trips of 100 doubles between ranks 0 and 1), a non-blocking ring
exchange (Isend/Irecv of 10 int32, completed by Waitall, then once more by a Test loop),
collectives on MPI_COMM_WORLD (Bcast, Reduce, Allreduce, Gather, Alltoall, Barrier),
and an Allreduce on a Split communicator (even / odd ranks)."""
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()


def ping_pong():
    buf = np.zeros(100)
    for _ in range(3):
        if rank == 0:
            comm.Send(np.arange(100.0), dest=1, tag=7)
            comm.Recv(buf, source=1, tag=8)
        elif rank == 1:
            comm.Recv(buf, source=0, tag=7)
            comm.Send(buf, dest=0, tag=8)


def ring(use_test):
    right, left = (rank + 1) % size, (rank - 1) % size
    out = np.full(10, rank, dtype=np.int32)
    got = np.empty(10, dtype=np.int32)
    requests = [comm.Irecv(got, source=left, tag=11), comm.Isend(out, dest=right, tag=11)]
    if use_test:
        while not MPI.Request.Testall(requests):
            pass
    else:
        MPI.Request.Waitall(requests)
    assert got[0] == left


def collectives():
    data = np.arange(4, dtype=np.float64)
    comm.Bcast(data, root=0)
    total = np.zeros(4)
    comm.Reduce(data, total, op=MPI.SUM, root=0)
    comm.Allreduce(data, total, op=MPI.SUM)
    gathered = np.zeros(4 * size) if rank == 0 else None
    comm.Gather(data, gathered, root=0)
    send = np.arange(size, dtype=np.int64)
    recv = np.empty(size, dtype=np.int64)
    comm.Alltoall(send, recv)
    comm.Barrier()


def sub_communicator():
    half = comm.Split(color=rank % 2, key=rank)
    value = np.array([float(rank)])
    result = np.zeros(1)
    half.Allreduce(value, result, op=MPI.SUM)
    half.Free()
    return result[0]


ping_pong()
ring(use_test=False)
ring(use_test=True)
collectives()
half_sum = sub_communicator()
print("rank %d of %d: half sum %g" % (rank, size, half_sum))
if len(sys.argv) > 1 and sys.argv[1] == "fail" and rank == size - 1:
    raise RuntimeError("rank %d fails at the end" % rank)
