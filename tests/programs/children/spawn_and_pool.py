"""An MPI program whose rank 0 both uses a multiprocessing pool (child processes) and starts
2 processes with MPI_Comm_spawn (spawn_child.py): both kinds of parts in one experiment."""
import multiprocessing
import os
import sys

import numpy as np
from mpi4py import MPI


def square(x):
    return x * x


if __name__ == "__main__":
    with multiprocessing.get_context("fork").Pool(2) as pool:
        squares = sum(pool.map(square, range(10), chunksize=1))
    child = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                         "spawn_child.py")
    inter = MPI.COMM_SELF.Spawn(sys.executable, [child], maxprocs=2)
    for r in range(2):
        inter.Send(np.array([r + 1], dtype=np.int64), dest=r, tag=5)
    for r in range(2):
        got = np.zeros(1, dtype=np.int64)
        inter.Recv(got, source=r, tag=6)
        assert got[0] == 2 * (r + 1)
    inter.Disconnect()
    print("squares", squares)
