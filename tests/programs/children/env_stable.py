"""Children started while the user API switches recording off and on again, by subprocess
(with this environment, and with one the program made from os.environ), os.posix_spawn and
os.system: each inherits the state of the moment it starts, and the program's
os.environ (and the C library's environment) stay as they were when the program began."""
import ctypes
import os
import subprocess
import sys

import scorep.user

before = dict(os.environ)
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
c_before = libc.getenv(b"_SCOREP_PYTHON_CHILD")
child = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child.py")
os.putenv("SET_BY_PUTENV", "kept")  # the C environment only: children get it all the same
subprocess.run([sys.executable, child, "recorded"])
scorep.user.disable_recording()
subprocess.run([sys.executable, child, "off"])
subprocess.run([sys.executable, child, "off-dict"], env=dict(os.environ, SET_BY_PUTENV="dict"))
os.waitpid(os.posix_spawn(sys.executable, [sys.executable, child, "off-spawn"], os.environ), 0)
os.system("%s %s off-system" % (sys.executable, child))
scorep.user.enable_recording()
os.system("%s %s recorded-system" % (sys.executable, child))
print("environ unchanged", dict(os.environ) == before,
      libc.getenv(b"_SCOREP_PYTHON_CHILD") == c_before)
