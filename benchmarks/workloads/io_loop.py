"""N one-byte writes (pwrite at offset 0) to a file: from Python (os.pwrite) or from a C
library through ctypes (a loop of pwrite calls in C). Prints WORK_SECONDS, the time of the
loop alone.

    python io_loop.py N python|native DIRECTORY [LIBRARY]
"""
import ctypes
import os
import sys
import time

n, where, directory = int(sys.argv[1]), sys.argv[2], sys.argv[3]
path = os.path.join(directory, "io_loop.bin")
fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
if where == "native":
    loop = ctypes.CDLL(sys.argv[4]).pwrite_loop
    loop.argtypes = (ctypes.c_int, ctypes.c_long)
    start = time.perf_counter()
    loop(fd, n)
    seconds = time.perf_counter() - start
else:
    pwrite = os.pwrite
    data = b"x"
    start = time.perf_counter()
    for _ in range(n):
        pwrite(fd, data, 0)
    seconds = time.perf_counter() - start
os.close(fd)
os.unlink(path)
print("WORK_SECONDS %.9f" % seconds)
