"""An allocation-heavy numpy workload for benchmarks/native_memory.py: every step makes
fresh arrays of 1 000 and of 10 000 float64 (each a malloc and a free of numpy's), in a
function called once per step. Prints WORK_SECONDS, its own time of the loop; with the
argument `tracemalloc` the loop runs under tracemalloc."""

import sys
import time

import numpy as np


def step(small, large):
    a = small * 2.0 + 1.0
    b = large * 0.5
    return float(a[1]) + float(b[1])


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 100000
    small, large = np.ones(1000), np.ones(10_000)
    if "tracemalloc" in sys.argv:
        import tracemalloc
        tracemalloc.start()
    start = time.perf_counter()
    total = 0.0
    for _ in range(steps):
        total += step(small, large)
    print("WORK_SECONDS", time.perf_counter() - start)


main()
