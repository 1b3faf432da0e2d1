"""Rank r works 0.1 * (r + 1) s, then all meet in a barrier: the last rank works the most,
rank 0 waits the longest."""
import time

from mpi4py import MPI


def work(seconds):
    time.sleep(seconds)


comm = MPI.COMM_WORLD
work(0.1 * (comm.Get_rank() + 1))
comm.Barrier()
