"""Two threads per rank exchange messages with the other rank (2 ranks), each with its own
tag, while the main thread waits; MPI_THREAD_MULTIPLE as mpi4py requests it."""
import threading

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
other = 1 - rank


def talk(tag):
    buf = np.zeros(8)
    for _ in range(5):
        if rank == 0:
            comm.Send(np.ones(8), dest=other, tag=tag)
            comm.Recv(buf, source=other, tag=tag)
        else:
            comm.Recv(buf, source=other, tag=tag)
            comm.Send(buf, dest=other, tag=tag)


threads = [threading.Thread(target=talk, args=(tag,), name="talker-%d" % tag) for tag in (1, 2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("threads of rank %d done; thread level %d" % (rank, MPI.Query_thread()))
