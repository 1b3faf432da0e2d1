"""What a measured child sees of the measurement: no descriptor of its. A subprocess child
given pass_fds has exactly stdin, stdout, stderr and those (CPython's test_subprocess
test_pass_fds_redirected), a forked child no descriptor its parent's program did not have,
a child that closes every descriptor it did not open (daemon code) still hands its results
over, and what a preexec_fn puts into the environment with os.putenv reaches the child
(test_preexec). Prints the same with and without measurement."""
import os
import subprocess
import sys
import time


def descriptors():
    """(descriptor, what it is) of every open descriptor below 1024, as CPython's
    subprocessdata/fd_status.py finds them (fstat: no descriptor of its own)."""
    found = set()
    for fd in range(1024):
        try:
            os.fstat(fd)
        except OSError:
            continue
        try:
            found.add((fd, os.readlink("/proc/self/fd/%d" % fd)))
        except OSError:
            found.add((fd, "?"))
    return found


def child_work(n):
    return sum(range(n))


if len(sys.argv) > 1 and sys.argv[1] == "list":
    print(",".join(str(fd) for fd, _ in sorted(descriptors())), flush=True)
    child_work(1000)
    sys.exit(0)
if len(sys.argv) > 1 and sys.argv[1] == "daemon":
    os.closerange(3, 1 << 16)
    begin = time.monotonic()
    while time.monotonic() - begin < 1.0:  # works after its parent's program ended
        child_work(10000)
    sys.exit(0)
if len(sys.argv) > 1 and sys.argv[1] == "preexec":
    print("preexec", os.environ.get("FRUIT"), child_work(1000), flush=True)
    sys.exit(0)

passed = [os.open(os.devnull, os.O_RDWR) for _ in range(2)]
read_end, write_end = os.pipe()
passed.insert(1, write_end)
with subprocess.Popen([sys.executable, __file__, "list"], stdin=passed[0], stdout=passed[1],
                      stderr=passed[2], close_fds=True, pass_fds=passed):
    seen = os.read(read_end, 1024)
seen = {int(fd) for fd in seen.split(b",")}
print("subprocess sees", sorted(seen) == sorted({0, 1, 2} | set(passed)))

mine = descriptors()
pid = os.fork()
if pid == 0:
    extra = descriptors() - mine
    print("forked child's own descriptors", sorted(fd for fd, _ in extra), flush=True)
    child_work(1000)
    os._exit(0)
os.waitpid(pid, 0)

out = subprocess.run([sys.executable, __file__, "preexec"], capture_output=True, text=True,
                     preexec_fn=lambda: os.putenv("FRUIT", "apple"))
print(out.stdout.strip(), out.returncode)
subprocess.Popen([sys.executable, __file__, "daemon"])
print("done")
