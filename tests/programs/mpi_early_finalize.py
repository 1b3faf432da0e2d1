"""The program finalizes MPI itself, then goes on with Python work."""
from mpi4py import MPI


def before():
    return MPI.COMM_WORLD.allreduce(1)


def after():
    return sum(range(10))


n = before()
MPI.Finalize()
after()
print("finalized early; %d ranks" % n)
