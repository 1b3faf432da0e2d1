"""Functions with known line counts for the line-level profiles (tests/test_lines.py)."""
import functools
import sys
import threading
import time

import scorep.user


def pause():
    time.sleep(0.05)


def logged(func):
    @functools.wraps(func)
    def wrapper(*args):
        return func(*args)
    return wrapper


@scorep.user.lines
@logged
def decorated(n):
    total = 0
    for i in range(n):
        total += i
    pause()
    return total


def loop(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def outer(n):
    def inner(k):
        return k + 1
    return sum(inner(i) for i in range(n))


def numbers(n):
    for i in range(n):
        yield i


def consume():
    total = 0
    for value in numbers(3):
        time.sleep(0.03)
        total += value
    return total


def in_thread():
    loop(50)


if __name__ == "__main__":
    print(decorated(100), loop(1000), outer(7), consume())
    worker = threading.Thread(target=in_thread, name="worker")
    worker.start()
    worker.join()
    sys.exit(0)
