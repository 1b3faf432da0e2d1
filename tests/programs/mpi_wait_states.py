"""Wait states known by construction, for 2 or 4 ranks: each phase (a function of its own,
after a barrier that lines the ranks up) makes ranks wait DELAY seconds in one MPI call.

late_sender      rank 1 sleeps, then sends; rank 0 waits in MPI_Recv
pickle_recv      the same with mpi4py's pickle-based send/recv (MPI_Mprobe + MPI_Mrecv)
waitall          rank 0 waits in MPI_Waitall for two messages, the second sent DELAY late
late_barrier     the last rank sleeps before MPI_Barrier: the others wait there
late_allreduce   the same in MPI_Allreduce
late_bcast       root 0 sleeps before MPI_Bcast: the others wait
early_reduce     the others sleep before MPI_Reduce: root 0 waits
late_receiver    rank 1 sleeps before receiving: no Late Sender anywhere (and an eager
                 MPI_Send of 80 bytes does not wait for it: no Late Receiver either)
ssend_late_receiver  rank 1 sleeps before receiving a synchronous send: rank 0 waits in
                 MPI_Ssend (Late Receiver)
late_fence       the last rank sleeps before MPI_Win_fence: the others wait there"""
import sys
import time

import numpy as np
from mpi4py import MPI

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 0.2
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
last = size - 1


def sync():
    comm.Barrier()


def late_sender():
    buf = np.zeros(10)
    if rank == 1:
        time.sleep(DELAY)
        comm.Send(np.ones(10), dest=0, tag=1)
    elif rank == 0:
        comm.Recv(buf, source=1, tag=1)


def pickle_recv():
    if rank == 1:
        time.sleep(DELAY)
        comm.send({"hello": 1}, dest=0, tag=2)
    elif rank == 0:
        comm.recv(source=1, tag=2)


def waitall():
    if rank == 1:
        comm.Send(np.ones(10), dest=0, tag=3)
        time.sleep(DELAY)
        comm.Send(np.ones(10), dest=0, tag=4)
    elif rank == 0:
        a, b = np.zeros(10), np.zeros(10)
        MPI.Request.Waitall([comm.Irecv(a, source=1, tag=3), comm.Irecv(b, source=1, tag=4)])


def late_barrier():
    if rank == last:
        time.sleep(DELAY)
    comm.Barrier()


def late_allreduce():
    if rank == last:
        time.sleep(DELAY)
    out = np.zeros(1)
    comm.Allreduce(np.ones(1), out)


def late_bcast():
    if rank == 0:
        time.sleep(DELAY)
    comm.Bcast(np.ones(4), root=0)


def early_reduce():
    if rank != 0:
        time.sleep(DELAY)
    comm.Reduce(np.ones(1), np.zeros(1) if rank == 0 else None, root=0)


def late_receiver():
    buf = np.zeros(10)
    if rank == 0:
        comm.Send(np.ones(10), dest=1, tag=5)
    elif rank == 1:
        time.sleep(DELAY)
        comm.Recv(buf, source=0, tag=5)


def ssend_late_receiver():
    buf = np.zeros(10)
    if rank == 0:
        comm.Ssend(np.ones(10), dest=1, tag=6)
    elif rank == 1:
        time.sleep(DELAY)
        comm.Recv(buf, source=0, tag=6)


def late_fence():
    win = MPI.Win.Create(np.zeros(4), comm=comm)
    if rank == last:
        time.sleep(DELAY)
    win.Fence()
    win.Free()


for phase in (late_sender, pickle_recv, waitall, late_barrier, late_allreduce, late_bcast,
              early_reduce, late_receiver, ssend_late_receiver, late_fence):
    sync()
    phase()
print("rank %d done" % rank)
