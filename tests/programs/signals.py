"""Runs calls until a signal arrives; says when it is ready."""
import sys
import time


def spin():
    return sum(range(50))


print("ready", flush=True)
deadline = time.time() + 30
while time.time() < deadline:
    spin()
    time.sleep(0.0005)  # bounds the trace's size however fast the measurement is
sys.exit(7)
