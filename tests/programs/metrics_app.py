"""The metrics tests' program: a busy function, one that allocates 10 MB of bytes objects,
one that touches fresh memory, garbage collections and a thread. With the argument
`tracemalloc` it measures alloc() with tracemalloc instead (run without scorep) and prints
the bytes it kept; `times` prints each function's wall and thread CPU time."""

import gc
import sys
import threading
import time

KEPT = []


def busy(n=3_000_000):
    total = 0
    for i in range(n):
        total += i * i
    return total


def alloc():
    # 10,000 bytes objects of 1000 bytes: at least 10 MB from the Python allocators.
    KEPT.extend(bytes(1000) for _ in range(10_000))


def touch():
    block = bytearray(64 * 1024 * 1024)  # fresh pages: one fault per page touched
    for i in range(0, len(block), 4096):
        block[i] = 1
    return len(block)


class Cycle:
    def __init__(self):
        self.me = self


def collect():
    for _ in range(2000):
        Cycle()
    gc.collect(1)


def worker():
    busy(200_000)


def main():
    if "tracemalloc" in sys.argv:
        import tracemalloc
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        alloc()
        after = tracemalloc.get_traced_memory()[0]
        print("tracemalloc", after - before)
        return
    timed = "times" in sys.argv
    for f in (busy, alloc, touch, collect):
        wall, cpu = time.perf_counter(), time.thread_time()
        f()
        if timed:
            print(f.__name__, time.perf_counter() - wall, time.thread_time() - cpu)
    t = threading.Thread(target=worker, name="worker")
    t.start()
    t.join()
    print("done")


main()
