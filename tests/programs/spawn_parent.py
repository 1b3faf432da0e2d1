"""A program's own MPI_Comm_spawn: 2 children of spawn_child.py; the parent sends each child
rank r the number r+1 (tag 5, one int64) and gets back twice that (tag 6)."""
import os
import sys

import numpy as np
from mpi4py import MPI

child = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spawn_child.py")
inter = MPI.COMM_SELF.Spawn(sys.executable, [child], maxprocs=2)
for r in range(2):
    inter.Send(np.array([r + 1], dtype=np.int64), dest=r, tag=5)
for r in range(2):
    got = np.zeros(1, dtype=np.int64)
    inter.Recv(got, source=r, tag=6)
    assert got[0] == 2 * (r + 1)
inter.Disconnect()
print("parent done")
