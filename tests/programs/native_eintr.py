"""Calls that a signal ends early (signal(7): SA_RESTART does not restart them), each in a
thread of its own while the main thread waits in signal.pause() for an interval timer:
libc's sleep(1), select() with a 1 s timeout and nanosleep() of 1 s through ctypes, which
do not retry, and a thread that computes meanwhile. Each prints what the call returned, so a
measurement that interrupts any of them changes the output."""
import ctypes
import ctypes.util
import signal
import threading

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


class timeval(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_usec", ctypes.c_long)]


class timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


results = {}


def sleeper():
    results["sleep"] = libc.sleep(1)  # the seconds left unslept


def selector():
    tv = timeval(1, 0)
    r = libc.select(0, None, None, None, ctypes.byref(tv))
    results["select"] = (r, ctypes.get_errno(), tv.tv_sec, tv.tv_usec)


def nanosleeper():
    left = timespec(0, 0)
    r = libc.nanosleep(ctypes.byref(timespec(1, 0)), ctypes.byref(left))
    results["nanosleep"] = (r, ctypes.get_errno(), left.tv_sec, left.tv_nsec)


def compute():
    total = 0
    for i in range(2_000_000):
        total += i * i
    results["compute"] = total


alarms = []
signal.signal(signal.SIGALRM, lambda signo, frame: alarms.append(signo))
threads = [threading.Thread(target=f) for f in (sleeper, selector, nanosleeper, compute)]
for t in threads:
    t.start()
signal.setitimer(signal.ITIMER_REAL, 0.5)
signal.pause()  # returns when a handled signal arrives: the alarm, and only the alarm
print("pause returned after %d alarm(s)" % len(alarms))
for t in threads:
    t.join()
for key in ("sleep", "select", "nanosleep", "compute"):
    print(key, results[key])
