"""mpi4py.futures as its documentation shows it: 20 tasks of square().

Run plainly (dynamic: MPIPoolExecutor spawns 2 workers), under `-m mpi4py.futures`
(static: the other ranks are the workers) or with the argument "comm" (MPICommExecutor:
rank 0 is the master, the other ranks of MPI_COMM_WORLD the workers)."""
import sys

from mpi4py import MPI
from mpi4py.futures import MPICommExecutor, MPIPoolExecutor


def square(x):
    return x * x


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "comm":
        with MPICommExecutor(MPI.COMM_WORLD, root=0) as executor:
            if executor is not None:
                print("sum of squares", sum(executor.map(square, range(20))))
        return
    with MPIPoolExecutor(max_workers=2) as executor:
        print("sum of squares", sum(executor.map(square, range(20))))


if __name__ == "__main__":
    main()
