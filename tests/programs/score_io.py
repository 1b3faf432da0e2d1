"""I/O of every kind scorep-score counts records for, a known number of times: creations
(os.open, Python's open), transfers, a flush, seeks, a duplicate and destructions."""
import os
import sys

path = sys.argv[1]
for _ in range(3):
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.write(fd, b"0123456789")
    os.fsync(fd)
    os.lseek(fd, 0, os.SEEK_SET)
    copy = os.dup(fd)
    os.close(fd)
    os.close(copy)
with open(path, "rb") as f:
    print(len(f.read()))
