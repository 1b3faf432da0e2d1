"""concurrent.futures.ProcessPoolExecutor: tasks in worker processes, one that raises."""
import concurrent.futures
import multiprocessing
import sys


def cube(x):
    return x ** 3


def fail(x):
    raise ValueError("task %d failed" % x)


if __name__ == "__main__":
    method, tasks = sys.argv[1], int(sys.argv[2])
    context = multiprocessing.get_context(method)
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as executor:
        print(sum(executor.map(cube, range(tasks))))
        try:
            executor.submit(fail, 7).result()
        except ValueError as error:
            print("raised:", error)
