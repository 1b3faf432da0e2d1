"""A multiprocessing pool as programs use one: Pool(4) started, 1 000 tiny tasks, the pool
ended by the with statement (terminate()). Then fib(22) timed once in each worker and in the
parent: the cost per call in a child process against the parent's.

    python pool_startup.py fork|spawn|forkserver

Prints POOL_SECONDS (pool start + tasks), END_SECONDS (the with statement's end: terminate
and, measured, the workers handing their results over), CHILD_FIB and PARENT_FIB (seconds
for 28 657 calls, the best of their runs).
"""
import multiprocessing
import sys
import time


def tiny(x):
    return x + 1


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def timed_fib(n):
    start = time.perf_counter()
    fib(n)
    return time.perf_counter() - start


if __name__ == "__main__":
    context = multiprocessing.get_context(sys.argv[1])
    start = time.perf_counter()
    with context.Pool(4) as pool:
        pool.map(tiny, range(1000))
        tasks_done = time.perf_counter()
        child_fib = min(pool.map(timed_fib, [22] * 8, chunksize=1))
        ending = time.perf_counter()
    ended = time.perf_counter()
    parent_fib = min(timed_fib(22) for _ in range(3))
    print("POOL_SECONDS %.6f" % (tasks_done - start))
    print("END_SECONDS %.6f" % (ended - ending))
    print("CHILD_FIB %.6f" % child_fib)
    print("PARENT_FIB %.6f" % parent_fib)
