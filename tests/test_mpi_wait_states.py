"""The wait-state analysis at the end of a traced MPI run, under real mpirun with 2 and 4
ranks: a program whose phases make ranks wait a known time in known MPI calls
(programs/mpi_wait_states.py); Scalasca's metrics read back from profile.cubex."""

import shutil

import pytest

from conftest import program
from mpi_support import mpirun
from scorep import cube
from scorep.report.analysis import wait_states
from scorep.report.readers import Experiment
from scorep.report.terminal import render
from scorep.score.formatting import format_report
from scorep.score.model import estimate

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun is not installed")

DELAY = 1.0  # long against the scheduling noise of an oversubscribed machine


def waiting(p, metric, function, region):
    """Per rank: the metric's time on the call paths of `region` called in `function`
    (Late Sender with its Wrong Order part: Cube shows a metric with its children)."""
    values = p.values(p.metric(metric), inclusive=False)
    parts = [values]
    if metric == "mpi_latesender":
        parts.append(p.values(p.metric("mpi_latesender_wo"), inclusive=False))
    per_rank = [0.0] * len(p.locations)
    for c in p.cnodes:
        path = c.path()
        if path[-1] == region and "__main__:" + function in path:
            for v in parts:
                for r, x in enumerate(v[c.id]):
                    per_rank[r] += x
    return per_rank


def near(value, expected):
    return abs(value - expected) <= 0.1 * expected


@pytest.mark.parametrize("ranks", [2, 4])
def test_wait_states_of_a_constructed_program(tmp_path, ranks):
    out = mpirun(ranks, ["--mpp=mpi", program("mpi_wait_states.py"), DELAY], tmp_path,
                 SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    for r in range(ranks):  # mpirun interleaves the ranks' output
        assert "rank %d done" % r in out.stdout
    exp = tmp_path / "exp"
    p = cube.read(str(exp))
    last = ranks - 1

    def check(metric, function, region, expected_ranks):
        got = waiting(p, metric, function, region)
        for r in range(ranks):
            if r in expected_ranks:
                assert near(got[r], DELAY), (metric, function, r, got)
            else:
                assert got[r] == 0.0, (metric, function, r, got)

    # point to point: the receiver waits DELAY for the late sender
    check("mpi_latesender", "late_sender", "MPI_Recv", [0])
    # mpi4py's comm.recv(): the waiting is in MPI_Mprobe, before MPI_Mrecv
    check("mpi_latesender", "pickle_recv", "MPI_Mprobe", [0])
    assert waiting(p, "mpi_latesender", "pickle_recv", "MPI_Mrecv") == [0.0] * ranks
    # two receives completed by one MPI_Waitall: DELAY once, not the sum
    check("mpi_latesender", "waitall", "MPI_Waitall", [0])
    # collectives: the last rank (or root) comes late, the others wait
    check("mpi_barrier_wait", "late_barrier", "MPI_Barrier", range(last))
    check("mpi_wait_nxn", "late_allreduce", "MPI_Allreduce", range(last))
    check("mpi_latebroadcast", "late_bcast", "MPI_Bcast", range(1, ranks))
    check("mpi_earlyreduce", "early_reduce", "MPI_Reduce", [0])
    # a receiver that comes late waits for nobody
    assert waiting(p, "mpi_latesender", "late_receiver", "MPI_Recv") == [0.0] * ranks
    # the reports: the terminal report's section and scorep-score's summary line
    text = render(Experiment(str(exp)), width=300)
    section = text.split("Wait states (Scalasca's patterns")[1].split("\n\n")[0]
    late_sender = [line for line in section.split("\n") if "Late Sender:" in line][0]
    assert "worst" in late_sender and "on MPI Rank 0 in __main__:" in late_sender
    bcast = [line for line in section.split("\n") if "Late Broadcast:" in line][0]
    assert "in __main__:late_bcast > MPI_Bcast" in bcast and "on MPI Rank 0" not in bcast
    ws = wait_states(p)
    by_metric = {row["metric"]: row for row in ws["patterns"]}
    assert near(by_metric["mpi_earlyreduce"]["total"], DELAY)
    assert near(by_metric["mpi_wait_nxn"]["total"], DELAY * (ranks - 1))
    assert by_metric["mpi_earlyreduce"]["worst_path"][-2:] == ["__main__:early_reduce",
                                                               "MPI_Reduce"]
    assert 0 < ws["total"] < ws["mpi_time"]
    score = format_report(estimate(p))
    assert "Waiting time in MPI (wait states, all ranks): %.2fs of %.2fs in MPI" % (
        ws["total"], ws["mpi_time"]) in score
    manifest = (exp / "MANIFEST.md").read_text()
    assert "the wait-state analysis (SCOREP_MPI_WAIT_STATES) replayed" in manifest
    assert "0 message(s) received before they were sent" in manifest


def test_wait_states_switched_off(tmp_path):
    out = mpirun(2, ["--mpp=mpi", program("mpi_wait_states.py"), 0.05], tmp_path,
                 SCOREP_ENABLE_TRACING="true", SCOREP_MPI_WAIT_STATES="false")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    p = cube.read(str(tmp_path / "exp"))
    names = [m.uniq_name for m in p.metrics]
    assert "time" in names and not [n for n in names if n.startswith("mpi_")]
    assert "wait-state" not in (tmp_path / "exp" / "MANIFEST.md").read_text()


def test_no_wait_states_without_tracing(tmp_path):
    out = mpirun(2, ["--mpp=mpi", program("mpi_wait_states.py"), 0.05], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    names = [m.uniq_name for m in cube.read(str(tmp_path / "exp")).metrics]
    assert not [n for n in names if n.startswith("mpi_")]
