"""A numeric loop with almost no calls: what a hook costs beyond the calls themselves."""
import sys
import time

n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000000
start, cpu_start = time.perf_counter(), time.process_time()
total = 0.0
for i in range(n):
    total += (i % 7) * 0.5 - (i % 3)
print("WORK_SECONDS", time.perf_counter() - start)
print("CPU_SECONDS", time.process_time() - cpu_start)
