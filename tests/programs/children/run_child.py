"""subprocess.run of a Python script, os.system of a Python script, a program that is no
Python (left alone), and a Python script given an environment of its own (left alone: the
program decides what that child sees)."""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
child = os.path.join(here, "child.py")
out = subprocess.run([sys.executable, child, "run"], capture_output=True, text=True)
print(out.stdout.strip(), out.returncode)
status = os.system("%s %s system" % (sys.executable, child))
print("system", os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode")
      else status >> 8)
print(subprocess.run(["echo", "not python"], capture_output=True, text=True).stdout.strip())
own = subprocess.run([sys.executable, child, "isolated"], capture_output=True, text=True,
                     env={"PATH": os.environ.get("PATH", "")})
print(own.stdout.strip(), own.returncode, sorted(own.stderr.split()))
