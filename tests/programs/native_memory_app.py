"""The native memory tests' program: a C library (argv[1], compiled from native_alloc.c)
allocating through ctypes, on the main thread and on a thread, and, where numpy is
installed, numpy arrays whose data live outside the Python allocators. With `tracemalloc`
it measures make_arrays() with tracemalloc instead (run without scorep): the bytes numpy
reported in its tracemalloc domain, and tracemalloc's peak rise."""

import ctypes
import sys
import threading

MB = 1000 * 1000
LIB = ctypes.CDLL(sys.argv[1])
LIB.grab.restype = ctypes.c_void_p
LIB.grab.argtypes = [ctypes.c_size_t]
LIB.give.argtypes = [ctypes.c_void_p]
LIB.churn.argtypes = [ctypes.c_size_t]
KEPT = []
np = None  # numpy, imported by main() when asked for (its import is nobody's allocation)


def churn():
    assert LIB.churn(10 * MB) == 0


def keep():
    KEPT.append(LIB.grab(12 * MB))


def release():
    LIB.give(KEPT.pop())


def worker():
    p = LIB.grab(8 * MB)
    LIB.give(p)


def make_arrays():
    a = np.ones(10_000_000)  # 80 MB of float64
    b = a * 2.0              # 80 MB more
    return a, b


def drop_arrays(arrays):
    arrays.clear()


def main():
    global np
    if "numpy" in sys.argv or "tracemalloc" in sys.argv:
        import numpy as np
    if "tracemalloc" in sys.argv:
        import tracemalloc
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        arrays = make_arrays()
        peak = tracemalloc.get_traced_memory()[1] - before
        numpy_domain = tracemalloc.DomainFilter(True, 389047)
        traces = tracemalloc.take_snapshot().filter_traces([numpy_domain])
        print("numpy", sum(stat.size for stat in traces.statistics("filename")), peak)
        del arrays
        return
    if "numpy" in sys.argv:
        # First: the process's peak of live native bytes is the arrays' (native_peak).
        arrays = list(make_arrays())
        drop_arrays(arrays)
    churn()
    keep()
    release()
    thread = threading.Thread(target=worker, name="worker")
    thread.start()
    thread.join()
    print("done")


main()
