"""Runs under mpirun but never uses MPI."""


def work():
    return 42


print(work())
