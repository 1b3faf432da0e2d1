"""--sampling --native while threads load and unload shared objects: a signal handler that
interrupts a thread holding the loader's lock must not wait for anything (the program hung:
one handler held libunwind's cache lock and waited for the loader's lock, the loader's
holder waited in its handler for the cache lock)."""
import subprocess

from conftest import program, run_scorep
from scorep import cube

LIBRARIES = 8


def test_threads_loading_libraries_under_native_sampling(python, tmp_path):
    for i in range(1, LIBRARIES + 1):
        subprocess.run(["cc", "-O0", "-shared", "-fPIC", "-DNUMBER=%d" % i,
                        "-o", str(tmp_path / ("libl%d.so" % i)), program("native_dlopen.c")],
                       check=True)
    exp = tmp_path / "exp"
    # Before the fix this hung in 1-3 s at 10 kHz; the timeout fails the test.
    out = run_scorep(python, ["--sampling=10000", "--native", program("native_dlopen.py"),
                              str(tmp_path), str(LIBRARIES), "4"], exp, cwd=tmp_path,
                     timeout=120)
    assert (out.returncode, out.stdout, out.stderr) == (0, "3 True\n", "")
    profile = cube.read(str(exp / "profile.cubex"))
    hits = profile.values(profile.metric("hits"), inclusive=False)
    churn = sum(sum(hits[c.id]) for c in profile.cnodes if "__main__:churn" in c.path())
    assert churn >= 20  # sampled while loading (how often depends on the machine's load)
