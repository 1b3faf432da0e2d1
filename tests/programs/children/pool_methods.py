"""A Pool with the start method given (fork, spawn, forkserver): every task's call of
square() runs in a worker; the with statement ends the pool with terminate()."""
import multiprocessing
import sys


def square(x):
    return x * x


if __name__ == "__main__":
    method, tasks = sys.argv[1], int(sys.argv[2])
    with multiprocessing.get_context(method).Pool(2) as pool:
        print(sum(pool.map(square, range(tasks), chunksize=1)))
