"""Rank 1 aborts the job while rank 0 waits for it."""
import time

from mpi4py import MPI


def work():
    return sum(range(1000))


comm = MPI.COMM_WORLD
for _ in range(5):
    work()
if comm.rank == 1:
    time.sleep(0.2)
    comm.Abort(3)
comm.recv(source=1)
