"""The lowest free descriptor number, before and after a stretch of running Python code (a
few hundred samples with --native): a program that closes a descriptor and opens a file
gets that number back, measured or not."""
import os
import time


def lowest_free():
    fd = os.open(os.devnull, os.O_RDONLY)
    os.close(fd)
    return fd


before = lowest_free()
end = time.monotonic() + 0.5
n = 0
while time.monotonic() < end:
    n += 1
print("lowest free descriptor", before, lowest_free())
