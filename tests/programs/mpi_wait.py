"""Rank 0 says when MPI is initialized (the experiment directory is prepared then) and the
ranks wait until the file named by the first argument exists (at most 60 s)."""
import os
import sys
import time

from mpi4py import MPI

comm = MPI.COMM_WORLD
if comm.Get_rank() == 0:
    print("ready", flush=True)
deadline = time.time() + 60
while not os.path.exists(sys.argv[1]) and time.time() < deadline:
    time.sleep(0.05)
comm.Barrier()
# One write per line (print writes the text and the newline apart when unbuffered),
# so mpirun cannot put another rank's line in between.
sys.stdout.write("rank %d done\n" % comm.Get_rank())
sys.stdout.flush()
