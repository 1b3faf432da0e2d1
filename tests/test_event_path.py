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


def test_forked_child_leaves_the_parents_experiment_alone(python, tmp_path):
    """The child used to flush the stdio buffer of the spill file it inherited into the
    parent's file: no profile, unmatched leaves, a failed trace."""
    out = run_scorep(python, [program("fork_both_sides.py")], tmp_path / "exp",
                     SCOREP_ENABLE_TRACING="true", SCOREP_TOTAL_MEMORY="1M")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout == "child done\nparent done, child status 0\n"
    assert "flushed to disk" in out.stderr and "failed" not in out.stderr
    assert sorted(p.name for p in (tmp_path / "exp").iterdir()) == [
        "MANIFEST.md", "profile.cubex", "scorep.cfg", "traces", "traces.def", "traces.otf2"]
    trace = Trace(tmp_path / "exp")
    trace.check_nesting()
    # The parent's calls only: the child's 50 000 are not part of this experiment.
    assert trace.enters("__main__:leaf") == 200000
    assert len(trace.locations) == 1
