"""The critical path and the delay costs known by construction, for 2 or 4 ranks: each phase
(after a barrier that lines the ranks up) makes one rank late by DELAY seconds in `slow()`.

late_sender      rank 1 runs slow(), then sends; rank 0 waits in MPI_Recv
late_barrier     the last rank runs slow() before MPI_Barrier: the others wait there
late_allreduce   the same before MPI_Allreduce
late_receiver    rank 0 runs slow() before receiving an eager message: nobody waits"""
import sys
import time

import numpy as np
from mpi4py import MPI

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 0.2
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
last = size - 1


def slow():
    time.sleep(DELAY)


def late_sender():
    if rank == 1:
        slow()
        comm.Send(np.ones(10), dest=0, tag=1)
    elif rank == 0:
        comm.Recv(np.zeros(10), source=1, tag=1)


def late_barrier():
    if rank == last:
        slow()
    comm.Barrier()


def late_allreduce():
    if rank == last:
        slow()
    comm.Allreduce(np.ones(1), np.zeros(1))


def late_receiver():
    if rank == 0:
        slow()
        comm.Recv(np.zeros(10), source=1, tag=2)
    elif rank == 1:
        comm.Send(np.ones(10), dest=0, tag=2)


for phase in (late_sender, late_barrier, late_allreduce, late_receiver):
    comm.Barrier()
    phase()
comm.Barrier()
print("rank %d done" % rank, flush=True)
