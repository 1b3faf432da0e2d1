"""MPI ranks that each use a multiprocessing pool: each rank's workers are processes of
the experiment, created by that rank."""
import multiprocessing

from mpi4py import MPI


def scaled(x):
    return x * (MPI.COMM_WORLD.Get_rank() + 1)


if __name__ == "__main__":
    comm = MPI.COMM_WORLD
    with multiprocessing.get_context("fork").Pool(2) as pool:
        local = sum(pool.map(scaled, range(10), chunksize=1))
    total = comm.allreduce(local)
    if comm.Get_rank() == 0:
        print(total)
