"""An object loaded, patched (I/O recorded), unloaded, and another one loaded where it was,
while measured: Open MPI unloads the components it does not select at MPI_Init. Each writes
to OUT through its own GOT; the second also after the measurement's end.

    got_reload.py FIRST SECOND DIRECTORY

SECOND is a path, or a bare name the loader finds on LD_LIBRARY_PATH (the objects such a
dlopen loads are patched at the next dlsym, not right after it)."""
import _ctypes
import ctypes
import os
import sys

from scorep.measure import config as _config, session as _measurement


def owner(address):
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            low, high = (int(x, 16) for x in fields[0].split("-"))
            if low <= address < high and len(fields) > 5:
                return os.path.basename(fields[5])
    return "?"


def load(name):
    lib = ctypes.CDLL(name)
    lib.base.restype = ctypes.c_size_t
    lib.write_address.restype = ctypes.c_void_p
    return lib


first, second, directory = sys.argv[1:4]
config = _config.from_environ(overrides={
    "SCOREP_EXPERIMENT_DIRECTORY": os.path.join(directory, "exp"),
    "SCOREP_ENABLE_TRACING": "true", "SCOREP_IO_POSIX": "true"})
measurement = _measurement.Measurement(config, program_name="got_reload.py").start()
fd = os.open(os.path.join(directory, "out.bin"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
a = load(first)
base = a.base()
print("first during", owner(a.write_address()))
a.work(fd, 3)
_ctypes.dlclose(a._handle)
b = load(second)
print("same base", b.base() == base)
print("second during", owner(b.write_address()))
b.work(fd, 5)
measurement.finalize()
print("second after", owner(b.write_address()))
print("second works", b.work(fd, 7), flush=True)
os.close(fd)
