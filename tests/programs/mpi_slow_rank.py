"""Rank 0 ends 4 s after the others: with a short SCOREP_MPI_FINALIZE_TIMEOUT the ranks
cannot write together and each writes its own part."""
import time

from mpi4py import MPI

comm = MPI.COMM_WORLD
comm.Barrier()
if comm.Get_rank() == 0:
    time.sleep(4)
print("rank %d done" % comm.Get_rank(), flush=True)
