"""Every kind of I/O the measurement records, with known sizes: Python's file objects and
os functions, a C library through ctypes (argv[1]), a threaded reader, sqlite3, numpy
(when the interpreter has it) and operations that fail. Prints what it did; the tests
compare it with a plain run and with what the measurement recorded."""
import ctypes
import os
import sqlite3
import sys
import threading


def python_write(path, size):
    with open(path, "wb") as f:
        f.write(b"w" * size)


def python_read(path):
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(0)
        return len(f.read())


def os_calls(path):
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.write(fd, b"0123456789")
    os.fsync(fd)
    copy = os.dup(fd)
    os.close(fd)
    os.close(copy)
    return os.path.getsize(path)


def native(lib, directory):
    a = lib.native_stdio(os.path.join(directory, "stdio.bin").encode(), 3)
    b = lib.native_posix(os.path.join(directory, "posix.bin").encode(), 5000)
    return a, b


def threaded_read(path, out):
    with open(path, "rb") as f:
        out.append(len(f.read()))


def database(path):
    con = sqlite3.connect(path)
    con.execute("create table t (x)")
    con.executemany("insert into t values (?)", [(i,) for i in range(50)])
    con.commit()
    count = con.execute("select count(*) from t").fetchone()[0]
    con.close()
    return count


def numpy_io(path):
    try:
        import numpy
    except ImportError:
        return None
    numpy.arange(500, dtype=numpy.float64).tofile(path)
    return int(numpy.fromfile(path, dtype=numpy.float64).sum())


def failures(path):
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    os.close(fd)
    errors = []
    try:
        os.close(fd)                      # closed twice
    except OSError as error:
        errors.append(error.errno)
    fd = os.open(path, os.O_RDONLY)
    try:
        os.write(fd, b"no")               # written on a read-only descriptor
    except OSError as error:
        errors.append(error.errno)
    os.close(fd)
    try:
        os.read(fd, 10)                   # read on a closed descriptor
    except OSError as error:
        errors.append(error.errno)
    return errors


def main():
    directory = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else ".")
    big = os.path.join(directory, "big.bin")
    python_write(big, 100000)
    print("python read", python_read(big))
    print("os calls", os_calls(os.path.join(directory, "os.bin")))
    lib = ctypes.CDLL(os.path.abspath(sys.argv[1]))
    print("native", *native(lib, directory))
    out = []
    threads = [threading.Thread(target=threaded_read, args=(big, out), name="reader-%d" % i)
               for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("threads", out)
    print("database", database(os.path.join(directory, "db.sqlite")))
    print("numpy", numpy_io(os.path.join(directory, "numpy.bin")))
    print("failures", failures(os.path.join(directory, "failing.txt")))
    libc = ctypes.CDLL(None)
    libc.write(1, b"via ctypes\n", 11)


main()
