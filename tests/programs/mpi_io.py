"""MPI-IO: every rank writes 100 int32 at its own offset (collectively), reads them back
independently and non-blocking, writes 10 more in a split collective, seeks, and the file is
closed and deleted."""
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
path = sys.argv[1]
f = MPI.File.Open(comm, path, MPI.MODE_CREATE | MPI.MODE_RDWR)
data = np.full(100, rank, dtype=np.int32)
f.Write_at_all(rank * data.nbytes, data)
back = np.empty(100, dtype=np.int32)
f.Read_at(rank * data.nbytes, back)
assert (back == rank).all()
more = np.empty(50, dtype=np.int32)
f.Iread_at(rank * data.nbytes, more).Wait()  # 200 bytes, non-blocking
assert (more == rank).all()
f.Seek(rank * data.nbytes + 40)
tail = np.full(10, 7, dtype=np.int32)
f.Write_all_begin(tail)  # a split collective: 40 bytes at the position
f.Write_all_end(tail)
f.Close()
comm.Barrier()
if rank == 0:
    MPI.File.Delete(path)
print("rank %d: io done" % rank)
