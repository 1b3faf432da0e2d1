"""50 000-deep recursion and a 20 000-deep mutual recursion, far beyond the profile's
depth limit, in a thread with a large C stack (3.9-3.11 take C stack for every Python call).
With an argument, cProfile records the same work in the same way and writes its stats
there: the numbers the profile's per-function totals must equal."""
import sys
import threading

sys.setrecursionlimit(200000)
threading.stack_size(1 << 29)


def f(n):
    return 0 if n == 0 else f(n - 1) + 1


def ping(n):
    return 0 if n == 0 else pong(n - 1) + 1


def pong(n):
    return 0 if n == 0 else ping(n - 1) + 1


def work():
    return f(50000), ping(20000), f(10)


def run():
    if len(sys.argv) > 1:
        import cProfile
        profiler = cProfile.Profile()
        results.append(profiler.runcall(work))
        profiler.dump_stats(sys.argv[1])
    else:
        results.append(work())


results = []
worker = threading.Thread(target=run)
worker.start()
worker.join()
print(results)
