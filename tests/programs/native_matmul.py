"""Multiplies matrices (numpy's dot: BLAS's dgemm does the work) and then counts in Python:
the --native samples should show *gemm* frames under multiply()."""
import sys

import numpy as np


def multiply(a, rounds):
    for _ in range(rounds):
        a.dot(a)


def count(n):
    total = 0
    for i in range(n):
        total += i
    return total


a = np.random.default_rng(1).random((300, 300))
multiply(a, int(sys.argv[1]) if len(sys.argv) > 1 else 40)
count(200000)
print("done")
