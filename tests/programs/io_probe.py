"""Which object a libc I/O function found by dlsym lives in, while measured and after
force_finalize(): libc's own without I/O recording, the measurement's wrapper with it."""
import ctypes
import os

import scorep.user


def owner(address):
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            low, high = (int(x, 16) for x in fields[0].split("-"))
            if low <= address < high and len(fields) > 5:
                return os.path.basename(fields[5])
    return "?"


def where():
    return owner(ctypes.cast(ctypes.CDLL(None).write, ctypes.c_void_p).value)


print("during", where(), flush=True)
scorep.user.force_finalize()
print("after", where(), flush=True)
