"""A child that is SIGKILLed while it works, one that ends with os._exit, one that raises."""
import multiprocessing
import os
import signal
import time


def doomed(ready):
    busy(50000)
    ready.set()
    time.sleep(60)


def quits():
    busy(1000)
    os._exit(5)


def raises():
    busy(1000)
    raise RuntimeError("the child fails")


def busy(n):
    return sum(i for i in range(n))


if __name__ == "__main__":
    ready = multiprocessing.Event()
    victim = multiprocessing.Process(target=doomed, args=(ready,))
    victim.start()
    ready.wait()
    os.kill(victim.pid, signal.SIGKILL)
    victim.join()
    q = multiprocessing.Process(target=quits)
    q.start()
    q.join()
    r = multiprocessing.Process(target=raises)
    r.start()
    r.join()
    print(victim.exitcode, q.exitcode, r.exitcode)
