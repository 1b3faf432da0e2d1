"""--sampling --native must not change the program: the sampler's signal is sent only to
threads that run, or that wait in a call the kernel restarts, so calls that a signal ends
early (pause, sleep, select, nanosleep: signal(7)) return as they do without measurement.
Checked on what the calls return (unslept seconds, errno, the timeout left), never on how
long they took."""
import re

import pytest

from conftest import program, python_version, run, run_scorep
from scorep import cube

EXPECTED = ("pause returned after 1 alarm(s)\n"
            "sleep 0\n"
            "select (0, 0, 0, 0)\n"
            "nanosleep (0, 0, 0, 0)\n"
            "compute %d\n" % sum(i * i for i in range(2_000_000)))


def test_the_program_alone_prints_what_the_test_expects(python, tmp_path):
    plain = run([python, program("native_eintr.py")], cwd=tmp_path, timeout=120)
    assert (plain.returncode, plain.stdout, plain.stderr) == (0, EXPECTED, "")


@pytest.mark.parametrize("rate", ["1000", "5000"])
def test_blocking_calls_are_not_ended_early_under_native_sampling(python, tmp_path, rate):
    exp = tmp_path / "exp"
    out = run_scorep(python, ["--sampling=" + rate, "--native", program("native_eintr.py")], exp, cwd=tmp_path, timeout=120)
    assert (out.returncode, out.stderr) == (0, "")
    manifest = (exp / "MANIFEST.md").read_text()
    # What is left is the race docs/sampling.md describes: a thread read as running that
    # enters its call before the signal arrives (on a loaded machine the sampler can be
    # preempted between the read and the signal). It changes only a call that ends with
    # EINTR, and the run says so: every such call is counted in MANIFEST.md.
    changed = [line for line in out.stdout.splitlines() if line not in EXPECTED.splitlines()]
    assert len(out.stdout.splitlines()) == len(EXPECTED.splitlines()), out.stdout
    for line in changed:
        assert re.fullmatch(r"sleep [1-9]|(select|nanosleep) \(-1, 4, .*\)", line), out.stdout
    found = re.search(r"; (\d+) times a signalled thread's handler found the call it\s+interrupted",
                      manifest)
    assert (int(found.group(1)) if found else 0) >= len(changed), (out.stdout, manifest)
    # The waiting threads were sampled without a signal, each with the call it waits in.
    assert "blocked threads (--native): " in manifest, manifest
    profile = cube.read(str(exp / "profile.cubex"))
    hits = profile.values(profile.metric("hits"), inclusive=False)
    under = {}
    for c in profile.cnodes:
        path = c.path()
        for caller in ("__main__:sleeper", "__main__:selector", "__main__:nanosleeper"):
            if caller in path and path[-1] != caller and sum(hits[c.id]):
                under.setdefault(caller, set()).add(path[-1])
    # 3.11+: the thread state names its thread, so a thread that blocked before its first
    # signal has the libc call it waits in as the native frame below its Python function
    # (before 3.11 only once its handler ran: these threads block at once).
    if python_version(python) < (3, 11):
        return
    assert any("nanosleep [libc.so.6]" in n for n in under.get("__main__:nanosleeper", ())) or \
        any("nanosleep [libc.so.6]" in n for n in under.get("__main__:sleeper", ())), under
