"""An MPI program that loses time waiting: rank 3's solve() takes longer than the others',
which wait for it in residual()'s allreduce (the README's wait-state example).

    SCOREP_ENABLE_TRACING=true mpirun -np 4 python -m scorep --mpp=mpi examples/mpi_solve.py
"""
import time

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()


def solve():
    time.sleep(0.05 if rank == 3 else 0.02)  # rank 3 has more of the grid


def residual():
    total = np.zeros(1)
    comm.Allreduce(np.ones(1), total)
    return total[0]


def step():
    solve()
    return residual()


for _ in range(10):
    step()
if rank == 0:
    print("10 steps on %d ranks" % comm.Get_size())
