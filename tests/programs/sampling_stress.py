"""The sampler under stress (tests/test_sampling_async.py for a few seconds,
benchmarks/sampling_stress.py for a minute, `make stress-asan` under AddressSanitizer):
threads started and joined in batches of six, generators that are sent values, garbage
collections of reference cycles, and fork() every ten batches (the child computes and
leaves with status 3).

    python sampling_stress.py SECONDS [EXIT]

Runs batches until SECONDS have passed (at least one). Prints what does not depend on how
many batches ran: each worker's result, whether every worker of every batch reported, and
the process's signal mask, ignored and caught signals as the kernel reports them (a sampler
must add none); then leaves with status EXIT (default 0).
"""
import gc
import os
import sys
import threading
import time


def status():
    with open("/proc/self/status") as f:
        return [line.split()[1] for line in f
                if line.startswith(("SigBlk", "SigIgn", "SigCgt"))]


def gen(n):
    for i in range(n):
        x = yield i * i
        if x:
            n += 1


def spin(n):
    return sum(i % 7 for i in range(n))


def worker(k):
    total = 0
    g = gen(2000 + k)
    v = next(g)
    while True:
        total += v
        try:
            v = g.send(None)
        except StopIteration:
            break
    return spin(3000) + total


def main(seconds):
    end = time.monotonic() + seconds
    results = []
    batches = 0
    while batches == 0 or time.monotonic() < end:
        threads = [threading.Thread(target=lambda k=k: results.append(worker(k)))
                   for k in range(6)]
        for t in threads:
            t.start()
        garbage = [[i] for i in range(2000)]
        for g in garbage:
            g.append(g)
        del garbage
        gc.collect()
        if batches % 10 == 0:
            pid = os.fork()
            if pid == 0:
                spin(20000)
                os._exit(3)
            _, st = os.waitpid(pid, 0)
            assert os.WIFEXITED(st) and os.WEXITSTATUS(st) == 3, st
        for t in threads:
            t.join()
        batches += 1
    print(sorted(set(results)), len(results) == 6 * batches)
    print(status())


if __name__ == "__main__":
    main(float(sys.argv[1]))
    sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
