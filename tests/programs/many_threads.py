"""Twelve worker threads besides the main thread, each calling work() four times: a
timeline with more lanes than fit, which starts with its lanes folded."""
import threading


def inner(n):
    return sum(range(n))


def work(i):
    for _ in range(4):
        inner(20000 + 1000 * i)


threads = [threading.Thread(target=work, args=(i,), name="worker-%d" % i) for i in range(12)]
for t in threads:
    t.start()
for t in threads:
    t.join()
