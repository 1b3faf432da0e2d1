"""Each MPI rank writes a file of its own: 1000 bytes times (rank + 1)."""
from mpi4py import MPI


def save(path, size):
    with open(path, "wb") as f:
        f.write(b"x" * size)


rank = MPI.COMM_WORLD.Get_rank()
save("rank%d.bin" % rank, 1000 * (rank + 1))
MPI.COMM_WORLD.Barrier()
