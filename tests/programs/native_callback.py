"""Python called back from C: outer() calls run_callbacks() of the library given (built
from native_callback.c), whose static apply_all() calls callback() through ctypes, which
computes in Python. Prints the sum the library returns."""
import ctypes
import sys
import time

lib = ctypes.CDLL(sys.argv[1])
CALLBACK = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_int)
lib.run_callbacks.restype = ctypes.c_double
lib.run_callbacks.argtypes = [CALLBACK, ctypes.c_int]


def callback(i):
    x = 0
    for k in range(3000):
        x += k * i
    return float(x % 7)


def outer(n):
    return lib.run_callbacks(CALLBACK(callback), n)


# Python first: a program that enters a long C call (here, the whole ctypes call with its
# callbacks) right at its start is sometimes not sampled at all, with or without --native and
# in either read mode (found with this program; not understood yet, docs/limitations.md).
start = time.perf_counter()
while time.perf_counter() - start < 0.2:
    pass
print(outer(int(sys.argv[2]) if len(sys.argv) > 2 else 2000))
