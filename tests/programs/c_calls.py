"""C functions called from Python (tests/test_c_calls.py): builtins, methods of C types, a C
function that raises, C functions that call back into Python (sorted(key=...), map), and a
class call, N times each."""
import sys
import threading
import time
import zlib


def key(x):
    return abs(x) - 1  # a C call inside the Python callback inside sorted


def bad_data():
    try:
        zlib.decompress(b"not zlib data")
    except zlib.error:
        return 1
    return 0


class Box:
    def __init__(self, items):
        self.items = items


def work(n):
    data = list(range(-50, 50))
    total = 0
    for _ in range(n):
        total += len(sorted(data, key=key))
        data.sort()
        total += sum(map(key, data[:5]))
        time.sleep(0)
        total += len(zlib.compress(b"x" * 100))
        lock = threading.Lock()
        lock.acquire()
        lock.release()
        total += bad_data()
        Box(data)
    return total


if __name__ == "__main__":
    print(work(int(sys.argv[1]) if len(sys.argv) > 1 else 10))
