"""The event path on programs that stress it: exceptions pending when a hook runs, deep
recursion. The measured program must behave exactly as without measurement."""

import pytest

from conftest import Trace, program, run, run_scorep, scorep_env

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
