"""Started by spawn_parent.py: answers its parent and adds up over its own world."""
import numpy as np
from mpi4py import MPI

parent = MPI.Comm.Get_parent()
rank = MPI.COMM_WORLD.Get_rank()
value = np.zeros(1, dtype=np.int64)
parent.Recv(value, source=0, tag=5)


def double(v):
    return 2 * v


parent.Send(double(value), dest=0, tag=6)
total = np.zeros(1, dtype=np.int64)
MPI.COMM_WORLD.Allreduce(value, total, op=MPI.SUM)
assert total[0] == 3
parent.Disconnect()
