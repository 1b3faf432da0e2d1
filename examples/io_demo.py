"""A small program that is about I/O: it writes checkpoints with numpy (tofile: the C
library's fwrite), a log with Python's file objects, and reads the last checkpoint back.

    python -m scorep --io=runtime:posix examples/io_demo.py [steps] [directory]
"""
import os
import sys

import numpy as np


def compute(state):
    return np.sqrt(state * state + 1.0)


def checkpoint(state, directory, step):
    path = os.path.join(directory, "checkpoint-%03d.bin" % step)
    state.tofile(path)
    return path


def log(directory, step, path):
    with open(os.path.join(directory, "run.log"), "a") as f:
        f.write("step %d: %s\n" % (step, os.path.basename(path)))


def restart(path, size):
    return np.fromfile(path, dtype=np.float64, count=size)


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    directory = sys.argv[2] if len(sys.argv) > 2 else "io-demo"
    os.makedirs(directory, exist_ok=True)
    state = np.arange(200_000, dtype=np.float64)
    for step in range(steps):
        state = compute(state)
        path = checkpoint(state, directory, step)
        log(directory, step, path)
    state = restart(path, state.size)
    print("restarted from %s: %d values" % (path, state.size))


main()
