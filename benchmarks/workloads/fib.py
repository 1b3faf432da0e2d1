"""Call-heavy: recursive Fibonacci (fib(25) makes 242785 calls)."""
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


n = int(sys.argv[1]) if len(sys.argv) > 1 else 25
start, cpu_start = time.perf_counter(), time.process_time()
fib(n)
print("WORK_SECONDS", time.perf_counter() - start)
print("CPU_SECONDS", time.process_time() - cpu_start)
