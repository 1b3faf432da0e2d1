"""The whole process stopped (SIGSTOP) for a while, the sampler thread with it, as when a
machine much busier than its cores does not run the process for long: a gap in the samples
that is longer than the cap on a sample's weight (docs/sampling.md), counted in MANIFEST.md.

    python sampler_stopped.py SECONDS FILE

A shell waits until this process is stopped, sleeps SECONDS and continues it: the process
is stopped at least that long. Around the stop the program spins in `before` and `after`;
FILE gets the program's own clock: the stop, and `main` from its start to its end.
"""
import json
import os
import signal
import subprocess
import sys
import time

CONTINUE = ('while [ "$(cut -d" " -f3 /proc/%d/stat)" != T ]; do sleep 0.01; done; '
            'sleep %s; kill -CONT %d')


def spin(seconds):
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1
    return n


def before():
    return spin(0.3)


def after():
    return spin(0.3)


def main():
    start = time.monotonic()
    seconds, out = sys.argv[1], sys.argv[2]
    before()
    pid = os.getpid()
    shell = subprocess.Popen(["/bin/sh", "-c", CONTINUE % (pid, seconds, pid)])
    stop = time.monotonic()
    os.kill(pid, signal.SIGSTOP)
    stopped = time.monotonic() - stop
    shell.wait()
    after()
    with open(out, "w") as f:
        json.dump({"stopped": stopped, "main": time.monotonic() - start}, f)


if __name__ == "__main__":
    main()
