"""A pool whose workers start pools of their own (the outer workers are not daemons)."""
import concurrent.futures
import multiprocessing
import sys


def inner(x):
    return x + 1


def outer(x):
    context = multiprocessing.get_context(sys.argv[1])
    with context.Pool(2) as pool:
        return sum(pool.map(inner, range(x)))


if __name__ == "__main__":
    context = multiprocessing.get_context(sys.argv[1])
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as executor:
        print(list(executor.map(outer, [3, 4])))
