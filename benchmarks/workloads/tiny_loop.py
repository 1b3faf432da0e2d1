"""A loop calling a tiny function (1,000,000 calls by default)."""
import sys
import time


def tiny(x):
    return x


n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
start, cpu_start = time.perf_counter(), time.process_time()
for i in range(n):
    tiny(i)
print("WORK_SECONDS", time.perf_counter() - start)
print("CPU_SECONDS", time.process_time() - cpu_start)
