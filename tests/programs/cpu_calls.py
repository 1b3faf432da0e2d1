"""The metrics' own-cost tests' program: pure CPU work in many short calls, in the main thread
and in a pool of worker threads, and a trivial property read 30,000 times. Around each piece
of work it prints its thread's own view: `<thread> <function> <ru_utime us> <ru_stime us>
<thread_time ns>` (resource.getrusage(RUSAGE_THREAD) and time.thread_time_ns() deltas)."""

import resource
import sys
import threading
import time


class Point:
    def __init__(self, x):
        self._x = x

    @property
    def x(self):
        return self._x


def step(i):
    return (i * i) % 7


def work(n=300_000):
    total = 0
    for i in range(n):
        total += step(i)
    return total


def prop(n=30_000):
    p = Point(3)
    total = 0
    for _ in range(n):
        total += p.x
    return total


def timed(f, *args):
    cpu = time.thread_time_ns()
    before = resource.getrusage(resource.RUSAGE_THREAD)
    f(*args)
    after = resource.getrusage(resource.RUSAGE_THREAD)
    cpu = time.thread_time_ns() - cpu
    # One write per line, newline included: the pool's threads print at the same time, and
    # print() writes its text and its newline apart (a CI run got "w0 ... 36669613w1 ...").
    sys.stdout.write("%s %s %d %d %d\n" % (threading.current_thread().name, f.__name__,
                                           round((after.ru_utime - before.ru_utime) * 1e6),
                                           round((after.ru_stime - before.ru_stime) * 1e6), cpu))
    sys.stdout.flush()


def main():
    timed(work)
    timed(prop)
    if "pool" in sys.argv:
        workers = [threading.Thread(target=timed, args=(work, 150_000), name="w%d" % i)
                   for i in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()


main()
