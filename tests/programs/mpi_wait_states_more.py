"""More wait states known by construction, for 2 or 4 ranks (after
programs/mpi_wait_states.py): each phase, after a barrier that lines the ranks up, makes
ranks wait DELAY seconds in one MPI call, or nobody.

isend_late_receiver   rank 1 sleeps before receiving an MPI_Issend: rank 0 waits in the
                      MPI_Wait that completes it (Late Receiver)
waitall_late_receiver rank 0 completes two MPI_Issend in one MPI_Waitall; rank 1 receives
                      the first after DELAY, the second after 2 DELAY: one instance, 2 DELAY
isend_balanced        the receive is posted before the send: nobody waits
late_post             target 0 sleeps before MPI_Win_post; the other ranks, its origins,
                      wait in MPI_Win_start (Open MPI's blocks) or MPI_Win_complete
early_wait            target 0 posts before the barrier and waits in MPI_Win_wait; the last
                      rank sleeps before its MPI_Win_complete (Early Wait on rank 0)"""
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


def isend_late_receiver():
    if rank == 0:
        comm.Issend(np.ones(10), dest=1, tag=11).Wait()
    elif rank == 1:
        time.sleep(DELAY)
        comm.Recv(np.zeros(10), source=0, tag=11)


def waitall_late_receiver():
    if rank == 0:
        MPI.Request.Waitall([comm.Issend(np.ones(10), dest=1, tag=12),
                             comm.Issend(np.ones(10), dest=1, tag=13)])
    elif rank == 1:
        time.sleep(DELAY)
        comm.Recv(np.zeros(10), source=0, tag=12)
        time.sleep(DELAY)
        comm.Recv(np.zeros(10), source=0, tag=13)


def isend_balanced():
    req = comm.Irecv(np.zeros(10), source=0, tag=14) if rank == 1 else None
    comm.Barrier()
    if rank == 0:
        comm.Issend(np.ones(10), dest=1, tag=14).Wait()
    elif rank == 1:
        req.Wait()


def late_post():
    win = MPI.Win.Create(np.zeros(4), comm=comm)
    group = comm.Get_group()
    if rank == 0:
        time.sleep(DELAY)
        origins = group.Excl([0])
        win.Post(origins)
        win.Wait()
        origins.Free()
    else:
        target = group.Incl([0])
        win.Start(target)
        win.Put(np.full(4, float(rank)), 0)
        win.Complete()
        target.Free()
    group.Free()
    win.Free()


def early_wait():
    win = MPI.Win.Create(np.zeros(4), comm=comm)
    group = comm.Get_group()
    if rank == 0:
        origins = group.Excl([0])
        win.Post(origins)  # before the barrier: no origin starts before it
        comm.Barrier()
        win.Wait()
        origins.Free()
    else:
        target = group.Incl([0])
        comm.Barrier()
        win.Start(target)
        win.Put(np.full(4, float(rank)), 0)
        if rank == last:
            time.sleep(DELAY)
        win.Complete()
        target.Free()
    group.Free()
    win.Free()


for phase in (isend_late_receiver, waitall_late_receiver, isend_balanced, late_post,
              early_wait):
    sync()
    phase()
print("rank %d done" % rank)
