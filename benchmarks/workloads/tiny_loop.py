"""A loop calling a tiny function (1,000,000 calls by default)."""
import sys
import time


def tiny(x):
    return x


n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
start = time.perf_counter()
for i in range(n):
    tiny(i)
print("WORK_SECONDS", time.perf_counter() - start)
