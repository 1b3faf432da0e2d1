"""Three threads load and unload shared objects as fast as they can (ctypes.CDLL, then
_ctypes.dlclose): the loader holds its lock on its list of objects most of the time, which
--native's signal handlers must not wait for. Arguments: the libraries' directory (libl1.so
... built from native_dlopen.c by the test), how many, seconds. Prints how many loads."""
import _ctypes
import ctypes
import os
import sys
import threading
import time

directory, libraries, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
counts = []


def churn():
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        for i in range(1, libraries + 1):
            lib = ctypes.CDLL(os.path.join(directory, "libl%d.so" % i))
            assert lib.value() == i
            _ctypes.dlclose(lib._handle)
            n += 1
    counts.append(n)


threads = [threading.Thread(target=churn) for _ in range(2)]
for t in threads:
    t.start()
churn()
for t in threads:
    t.join()
print(len(counts), sum(counts) > 0)
