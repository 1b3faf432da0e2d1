"""Recursion far deeper than the C stack would allow if every Python call took C stack:
in the main thread, in a thread, through generators, and up to RecursionError."""
import sys
import threading

sys.setrecursionlimit(100000)


def down(n):
    return 0 if n == 0 else down(n - 1) + 1


def nested(n):
    if n:
        yield from nested(n - 1)
    yield n


def endless(n):
    return endless(n + 1)


print(down(int(sys.argv[1])))
try:
    endless(0)
except RecursionError:
    print("RecursionError")
results = []
worker = threading.Thread(target=lambda: results.append(down(30000)))
worker.start()
worker.join()
print(results, sum(1 for _ in nested(200)))
