"""The event path on programs that stress it: exceptions pending when a hook runs, deep
recursion. The measured program must behave exactly as without measurement."""

import pytest

from conftest import Trace, program, run, run_scorep, scorep_env
from scorep import cube

INSTRUMENTERS = ["default", "cProfile", "cTrace"]


def instrumenter_args(instrumenter):
    return [] if instrumenter == "default" else ["--instrumenter-type=%s" % instrumenter]


@pytest.mark.parametrize("instrumenter", INSTRUMENTERS)
def test_pending_exception_survives_first_sight_of_code(python, tmp_path, instrumenter):
    plain = run([python, program("pending_exceptions.py")], env=scorep_env())
    out = run_scorep(python, instrumenter_args(instrumenter) +
                     [program("pending_exceptions.py")], tmp_path / "exp",
                     SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    assert out.stdout == plain.stdout == "caught thrown\ntask cancelled\ndone\n"
    # Nothing of ours on stderr; the only line is the program's own "never awaited" warning.
    assert "SystemError" not in out.stderr and "Exception ignored" not in out.stderr
    assert out.stderr == plain.stderr
    trace = Trace(tmp_path / "exp")
    trace.check_nesting()
    # Started coroutines and generators are visits; the ones closed before starting are not
    # (plain Python runs no line of them either).
    assert trace.enters("__main__:main") == 2  # started, resumed once after awaiting the task
    assert trace.enters("__main__:closed_before_start") <= 1


def test_deep_recursion_as_deep_as_the_recursion_limit(python, tmp_path):
    """3.11 plain Python recurses 90 000 deep without C stack; under the frame evaluation
    hook every call takes C stack, and used to crash at ~15 000 (SIGSEGV)."""
    out = run_scorep(python, [program("deep_recursion.py"), "90000"], tmp_path / "exp",
                     SCOREP_ENABLE_TRACING="true", SCOREP_TOTAL_MEMORY="64M")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout == "90000\nRecursionError\n[30000] 201\n"
    trace = Trace(tmp_path / "exp")
    assert trace.check_nesting() > 90000
    assert trace.enters("__main__:down") == 90001 + 30001
    assert cube.read(str(tmp_path / "exp" / "profile.cubex")).metric("visits")


@pytest.mark.parametrize("children", [True, False], ids=["children", "no-children"])
def test_forked_child_leaves_the_parents_experiment_alone(python, tmp_path, children):
    """The child used to flush the stdio buffer of the spill file it inherited into the
    parent's file: no profile, unmatched leaves, a failed trace. Both sides spill now; the
    child measures into a location group of its own (or not at all with --no-children),
    never into the parent's."""
    args = [] if children else ["--no-children"]
    out = run_scorep(python, args + [program("fork_both_sides.py")], tmp_path / "exp",
                     SCOREP_ENABLE_TRACING="true", SCOREP_TOTAL_MEMORY="1M")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout == "child done\nparent done, child status 0\n"
    assert "flushed to disk" in out.stderr and "failed" not in out.stderr
    assert sorted(p.name for p in (tmp_path / "exp").iterdir()) == [
        "MANIFEST.md", "profile.cubex", "scorep.cfg", "traces", "traces.def", "traces.otf2"]
    trace = Trace(tmp_path / "exp")
    trace.check_nesting()
    parent = trace.location_groups[0]
    assert len([e for e in trace.of("Enter", "__main__:leaf") if e.group == parent]) == 200000
    if children:
        assert len(trace.location_groups) == 2
        child = trace.location_groups[1]
        assert child.startswith("Process 1 (pid ") and parent.startswith("Process 0 (pid ")
        assert len([e for e in trace.of("Enter", "__main__:leaf") if e.group == child]) == 50000
    else:
        assert trace.location_groups == ["Process"] and len(trace.locations) == 1
        assert trace.enters("__main__:leaf") == 200000


@pytest.mark.parametrize("tracing", ["false", "true"])
def test_thread_churn_stays_within_the_memory_budget(tmp_path, tracing):
    """Every thread used to keep a 256 kB buffer of the budget until the end, silently:
    2 000 short threads took 548 MB (plain python: 13 MB). Ended threads now give their
    buffers back (the trace's to a spill file, the profile's into memory of its own size)."""
    import subprocess
    import sys

    exp = tmp_path / "exp"
    # A fresh parent whose only child is the measured run: its children's peak RSS is
    # that run's.
    parent = ("import resource, subprocess, sys\n"
              "out = subprocess.run(sys.argv[1:])\n"
              "print(out.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", parent, sys.executable, "-m", "scorep",
                          program("thread_churn.py"), "600"],
                         env=scorep_env(exp, SCOREP_ENABLE_TRACING=tracing,
                                        SCOREP_TOTAL_MEMORY="1M"),
                         capture_output=True, text=True, timeout=300)
    done, status_and_peak = out.stdout.splitlines()
    status, peak_kb = (int(x) for x in status_and_peak.split())
    assert status == 0 and done == "done", out.stderr
    # 600 threads x 256 kB would be 150 MB; what is left is the interpreter and the data.
    assert peak_kb < 100 * 1024, "peak RSS %d kB" % peak_kb
    assert "bytes more than SCOREP_TOTAL_MEMORY" not in out.stderr or \
        int(out.stderr.split("needed ")[1].split(" bytes")[0]) <= 2 * 262144, out.stderr
    profile = cube.read(str(exp / "profile.cubex"))
    assert len(profile.locations) == 601
    if tracing == "true":
        trace = Trace(exp)
        trace.check_nesting()
        assert trace.enters("__main__:work") == 600
        assert sum(1 for name in trace.locations if trace.enters("__main__:work", name)) == 600
        assert not [p for p in exp.iterdir() if p.name.startswith(".scorep-spill")]
