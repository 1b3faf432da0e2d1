"""Late Receiver in MPI_Wait* and the one-sided patterns of general active target
synchronization (Late Post, Early Wait), under real mpirun with 2 and 4 ranks: a program
whose phases make ranks wait a known time (programs/mpi_wait_states_more.py). The values
in profile.cubex (computed by the ranks at the end) are Scalasca's definitions applied to
the trace's own times, read with the OTF2 library's reader, about DELAY by construction,
zero where nobody waits, and the same as the offline replay of the trace."""

import shutil

import pytest

from conftest import program
from mpi_support import mpirun
from scorep import cube
from scorep.report.analysis import wait_state_values, wait_states
from scorep.report.readers import Experiment
from test_mpi_wait_states import mpi_calls, waiting

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun is not installed")

DELAY = 1.0  # long against the scheduling noise of an oversubscribed machine


def expected_waiting(calls, ranks):
    """Scalasca's definitions on the trace's times: {(metric, function, region): per rank}."""
    def call(rank, function, region, k=0):
        return calls[(rank, function, region)][k]

    zero = [0.0] * ranks
    out = {}
    # Late Receiver of a non-blocking send: from the enter of the MPI_Wait* completing it
    # until the receive was posted, when the Wait was still in its call then; the sends one
    # MPI_Waitall completed count once, with the longest
    enter, leave = call(0, "isend_late_receiver", "MPI_Wait")
    posted = call(1, "isend_late_receiver", "MPI_Recv")[0]
    out[("mpi_latereceiver", "isend_late_receiver", "MPI_Wait")] = \
        [posted - enter if leave >= posted > enter else 0.0] + zero[1:]
    enter, leave = call(0, "waitall_late_receiver", "MPI_Waitall")
    waits = [call(1, "waitall_late_receiver", "MPI_Recv", k)[0] - enter for k in (0, 1)]
    out[("mpi_latereceiver", "waitall_late_receiver", "MPI_Waitall")] = \
        [max(0.0, max(waits))] + zero[1:]
    # Late Post: the target's post entered inside an origin's MPI_Win_start (or complete)
    post = call(0, "late_post", "MPI_Win_post")[0]
    per_rank = [0.0]
    for r in range(1, ranks):
        s_enter, s_leave = call(r, "late_post", "MPI_Win_start")
        c_enter, c_leave = call(r, "late_post", "MPI_Win_complete")
        per_rank.append(0.0 if not s_enter < post < s_leave else post - s_enter)
        out[("mpi_rma_sync_late_post", "late_post", "MPI_Win_complete", r)] = \
            post - c_enter if c_enter < post < c_leave else 0.0
    out[("mpi_rma_sync_late_post", "late_post", "MPI_Win_start")] = per_rank
    # Early Wait: the target's MPI_Win_wait until the last origin entered MPI_Win_complete
    complete = max(call(r, "early_wait", "MPI_Win_complete")[0] for r in range(1, ranks))
    enter, leave = call(0, "early_wait", "MPI_Win_wait")
    out[("mpi_rma_early_wait", "early_wait", "MPI_Win_wait")] = \
        [max(0.0, min(complete, leave) - enter)] + zero[1:]
    return out


@pytest.mark.parametrize("ranks", [2, 4])
def test_late_receiver_in_wait_and_active_target_patterns(tmp_path, ranks):
    out = mpirun(ranks, ["--mpp=mpi", program("mpi_wait_states_more.py"), DELAY], tmp_path,
                 SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    exp = tmp_path / "exp"
    p = cube.read(str(exp))
    expected = expected_waiting(mpi_calls(exp), ranks)

    def check(metric, function, region, expected_ranks, delay=DELAY):
        got = waiting(p, metric, function, region)
        want = expected[(metric, function, region)]
        for r in range(ranks):
            if r in expected_ranks:
                assert abs(got[r] - want[r]) < 2e-6, (metric, function, r, got, want)
                assert got[r] > 0.5 * delay, (metric, function, r, got)
            else:
                assert got[r] == 0.0, (metric, function, r, got)

    # Issend + MPI_Wait: the sender waits in the Wait for the late receive
    check("mpi_latereceiver", "isend_late_receiver", "MPI_Wait", [0])
    assert waiting(p, "mpi_latereceiver", "isend_late_receiver", "MPI_Issend") == [0] * ranks
    # two Issends in one MPI_Waitall: one instance, the longer waiting (2 DELAY), not the sum
    check("mpi_latereceiver", "waitall_late_receiver", "MPI_Waitall", [0], 2 * DELAY)
    got = waiting(p, "mpi_latereceiver", "waitall_late_receiver", "MPI_Waitall")[0]
    assert got < 2.9 * DELAY, got
    assert waiting(p, "mpi_clr_count", "waitall_late_receiver", "MPI_Waitall") == \
        [1] + [0] * (ranks - 1)
    assert waiting(p, "mpi_clr_count", "isend_late_receiver", "MPI_Wait") == \
        [1] + [0] * (ranks - 1)
    # the receive was posted before the send: no Late Receiver
    assert waiting(p, "mpi_latereceiver", "isend_balanced", "MPI_Wait") == [0.0] * ranks
    # the target posts DELAY late: every origin waits in its (blocking) MPI_Win_start or
    # else in MPI_Win_complete, where the post fell
    start = waiting(p, "mpi_rma_sync_late_post", "late_post", "MPI_Win_start")
    complete = waiting(p, "mpi_rma_sync_late_post", "late_post", "MPI_Win_complete")
    assert start[0] == complete[0] == 0.0
    for r in range(1, ranks):
        want_start = expected[("mpi_rma_sync_late_post", "late_post", "MPI_Win_start")][r]
        want_complete = expected[("mpi_rma_sync_late_post", "late_post", "MPI_Win_complete", r)]
        assert abs(start[r] - want_start) < 2e-6, (r, start, want_start)
        assert abs(complete[r] - want_complete) < 2e-6, (r, complete, want_complete)
        assert start[r] + complete[r] > 0.5 * DELAY, (r, start, complete)
    # the last origin completes DELAY late: the target waits in MPI_Win_wait
    check("mpi_rma_early_wait", "early_wait", "MPI_Win_wait", [0])
    # the target posted before any origin started: no Late Post there
    for region in ("MPI_Win_start", "MPI_Win_complete"):
        assert waiting(p, "mpi_rma_sync_late_post", "early_wait", region) == [0.0] * ranks
    # Scalasca's names in the profile, and the terminal report's lines
    names = {m.uniq_name for m in p.metrics}
    assert {"mpi_rma_sync_late_post", "mpi_rma_early_wait"} <= names
    ws = {row["metric"]: row for row in wait_states(p)["patterns"]}
    assert ws["mpi_rma_early_wait"]["worst_path"][-2:] == ["__main__:early_wait",
                                                          "MPI_Win_wait"]
    # offline (scorep-report EXP --wait-states) agrees with the ranks, to the ns
    online = wait_state_values(p)
    replayed = Experiment(str(exp)).replay_wait_states()
    offline = replayed["values"]
    assert replayed["violations"] == 0
    assert sorted(online) == sorted(offline)
    for key, seconds in online.items():
        assert abs(offline[key] - seconds) < 2e-6, (key, seconds, offline[key])
