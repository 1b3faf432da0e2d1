"""A spawned child that ends while multiprocessing prepares it (its main module runs as
__mp_main__ before the process object is unpickled), as a pool worker terminated during its
start does: it is named already."""
import multiprocessing
import os


def never_runs():
    pass


if __name__ == "__mp_main__":
    os._exit(0)

if __name__ == "__main__":
    process = multiprocessing.get_context("spawn").Process(target=never_runs)
    process.start()
    process.join()
    print(process.exitcode)
