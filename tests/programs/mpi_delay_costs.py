"""Delay costs known by construction, for 2 or 4 ranks: each phase (after a barrier that
lines the ranks up) makes a rank late by DELAY seconds in `slow()`.

chain_barrier    rank 0 runs slow(), then sends to rank 1; rank 1 waits for it in MPI_Recv,
                 runs tail() (DELAY / 4), then enters MPI_Barrier last: the others wait for
                 rank 1, and most of its lateness is its waiting for rank 0 (long-term)
chain_bcast      the same with rank 1 the root of an MPI_Bcast instead of the barrier
chain_ssend      rank 1 waits in MPI_Ssend for rank 0, which runs slow() before its receive
                 (Late Receiver), then the same tail() and MPI_Barrier
late_root        the last rank runs slow() before an MPI_Bcast it is the root of
late_reducer     every rank but the root 0 runs slow() (rank r: DELAY * (1 + (r - 1) / 2))
                 before MPI_Reduce: the root waits for rank 1, the first to come"""
import sys
import time

import numpy as np
from mpi4py import MPI

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 0.2
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
last = size - 1


def slow(factor=1.0):
    time.sleep(DELAY * factor)


def tail():
    time.sleep(DELAY / 4)


def chain(then):
    if rank == 0:
        slow()
        comm.Send(np.ones(10), dest=1, tag=1)
    elif rank == 1:
        comm.Recv(np.zeros(10), source=0, tag=1)
        tail()
    then()


def chain_barrier():
    chain(comm.Barrier)


def chain_bcast():
    chain(lambda: comm.Bcast(np.ones(4), root=1))


def chain_ssend():
    if rank == 0:
        slow()
        comm.Recv(np.zeros(10), source=1, tag=3)
    elif rank == 1:
        comm.Ssend(np.ones(10), dest=0, tag=3)
        tail()
    comm.Barrier()


def late_root():
    if rank == last:
        slow()
    comm.Bcast(np.ones(4), root=last)


def late_reducer():
    if rank != 0:
        slow(1 + (rank - 1) / 2)
    comm.Reduce(np.ones(1), np.zeros(1) if rank == 0 else None, root=0)


for phase in (chain_barrier, chain_bcast, chain_ssend, late_root, late_reducer):
    comm.Barrier()
    phase()
comm.Barrier()
print("rank %d done" % rank, flush=True)
