"""A barrier and a send/receive pair between ranks 0 and 1; with the argument "off" the
second barrier runs while recording is off (its MPI events are not in the trace)."""
import sys

import numpy as np
from mpi4py import MPI

import scorep.user

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
comm.Barrier()
if rank == 0:
    comm.Send(np.arange(10.0), dest=1, tag=3)
elif rank == 1:
    buf = np.empty(10)
    comm.Recv(buf, source=0, tag=3)
if sys.argv[1:] == ["off"]:
    scorep.user.disable_recording()
    comm.Barrier()
    scorep.user.enable_recording()
else:
    comm.Barrier()
print("rank %d done" % rank)
