"""Python called back from C: outer() calls run_callbacks() of the library given (built
from native_callback.c), whose static apply_all() calls callback() through ctypes, which
computes in Python. Prints the sum the library returns. With a third argument, writes to
that file the wall-clock seconds from the program's first line to the end of outer(), and
those outer() took: the share of the program's time that its samples should show in the
callbacks."""
import time

START = time.perf_counter()

import ctypes  # noqa: E402
import sys  # noqa: E402

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


# The long C call comes right at the start, with nothing computed in Python before it.
begin = time.perf_counter()
total = outer(int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
end = time.perf_counter()
print(total)
if len(sys.argv) > 3:
    with open(sys.argv[3], "w") as times:
        times.write("%.6f %.6f\n" % (end - START, end - begin))
