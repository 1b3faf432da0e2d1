"""The wait-state analysis at the end of a traced MPI run, under real mpirun with 2 and 4
ranks: a program whose phases make ranks wait a known time in known MPI calls
(programs/mpi_wait_states.py); Scalasca's metrics read back from profile.cubex."""

import collections
import shutil

import pytest

from conftest import fix_python_otf2, program
from mpi_support import mpirun, rank_of
from scorep import cube
from scorep.report.analysis import wait_states
from scorep.report.readers import Experiment
from scorep.report.terminal import render
from scorep.score.formatting import format_report
from scorep.score.estimator import estimate

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


def mpi_calls(exp):
    """{(rank, function, MPI region): [(enter, leave) in seconds]} from the OTF2 trace, read
    with the OTF2 library's reader: the MPI calls made directly by a function of the
    program."""
    import otf2
    fix_python_otf2()
    calls = collections.defaultdict(list)
    stacks = collections.defaultdict(list)
    with otf2.reader.open(str(exp / "traces.otf2")) as reader:
        resolution = float(reader.definitions.clock_properties.timer_resolution)
        for location, event in reader.events:
            rank = rank_of(location)
            stack = stacks[rank]
            kind = type(event).__name__
            if kind == "Enter":
                stack.append([event.region.name, event.time / resolution, None])
            elif kind == "Leave" and stack:
                name, enter, _ = stack.pop()
                if name.startswith("MPI_") and stack and stack[-1][0].startswith("__main__:"):
                    calls[(rank, stack[-1][0][len("__main__:"):], name)].append(
                        (enter, event.time / resolution))
    return calls


def expected_waiting(calls, ranks):
    """Scalasca's definitions applied to the trace's own times: per (metric, function,
    region), the waiting of each rank."""
    def call(rank, function, region, k=0):
        return calls[(rank, function, region)][k]

    out = {}
    for function, region in [("late_sender", "MPI_Recv"), ("pickle_recv", "MPI_Mprobe")]:
        enter, leave = call(0, function, region)
        if region == "MPI_Mprobe":
            leave = call(0, function, "MPI_Mrecv")[1]
        send = call(1, function, "MPI_Send")[0]
        out[("mpi_latesender", function, region)] = [max(0.0, min(send, leave) - enter)] + \
            [0.0] * (ranks - 1)
    enter, leave = call(0, "waitall", "MPI_Waitall")
    late = max(min(s[0], leave) - enter for s in calls[(1, "waitall", "MPI_Send")])
    out[("mpi_latesender", "waitall", "MPI_Waitall")] = [max(0.0, late)] + [0.0] * (ranks - 1)
    for metric, function, region in [("mpi_barrier_wait", "late_barrier", "MPI_Barrier"),
                                     ("mpi_wait_nxn", "late_allreduce", "MPI_Allreduce"),
                                     ("mpi_rma_wait_at_fence", "late_fence", "MPI_Win_fence")]:
        last = max(call(r, function, region)[0] for r in range(ranks))
        out[(metric, function, region)] = [
            max(0.0, min(last, call(r, function, region)[1]) - call(r, function, region)[0])
            for r in range(ranks)]
    root = call(0, "late_bcast", "MPI_Bcast")[0]
    out[("mpi_latebroadcast", "late_bcast", "MPI_Bcast")] = [0.0] + [
        max(0.0, min(root, call(r, "late_bcast", "MPI_Bcast")[1]) -
            call(r, "late_bcast", "MPI_Bcast")[0]) for r in range(1, ranks)]
    # Late Receiver: the blocking send on rank 0 waits from its enter until rank 1 posted
    # the receive, when it was still in the call then (an eager MPI_Send was not)
    for function, region in [("late_receiver", "MPI_Send"), ("ssend_late_receiver", "MPI_Ssend")]:
        enter, leave = call(0, function, region)
        posted = call(1, function, "MPI_Recv")[0]
        out[("mpi_latereceiver", function, region)] = [
            posted - enter if leave >= posted > enter else 0.0] + [0.0] * (ranks - 1)
    first = min(call(r, "early_reduce", "MPI_Reduce")[0] for r in range(1, ranks))
    enter, leave = call(0, "early_reduce", "MPI_Reduce")
    out[("mpi_earlyreduce", "early_reduce", "MPI_Reduce")] = [
        max(0.0, min(first, leave) - enter)] + [0.0] * (ranks - 1)
    return out


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

    expected = expected_waiting(mpi_calls(exp), ranks)

    def check(metric, function, region, expected_ranks):
        """The waiting ranks wait what the definition gives on the trace's times (to the
        microsecond), and about DELAY by construction: the sleeping rank is late by DELAY
        plus however long this loaded machine kept it from running (at least half of DELAY
        is asserted; on a quiet machine it is within 10%); the others wait exactly 0."""
        got = waiting(p, metric, function, region)
        want = expected[(metric, function, region)]
        for r in range(ranks):
            if r in expected_ranks:
                assert abs(got[r] - want[r]) < 2e-6, (metric, function, r, got, want)
                assert got[r] > 0.5 * DELAY, (metric, function, r, got)
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
    # one-sided: the fence of a window waits for its last member, like a barrier
    check("mpi_rma_wait_at_fence", "late_fence", "MPI_Win_fence", range(last))
    assert waiting(p, "mpi_barrier_wait", "late_fence", "MPI_Win_fence") == [0.0] * ranks
    check("mpi_latebroadcast", "late_bcast", "MPI_Bcast", range(1, ranks))
    check("mpi_earlyreduce", "early_reduce", "MPI_Reduce", [0])
    # a receiver that comes late waits for nobody
    assert waiting(p, "mpi_latesender", "late_receiver", "MPI_Recv") == [0.0] * ranks
    assert waiting(p, "mpi_latesender", "ssend_late_receiver", "MPI_Recv") == [0.0] * ranks
    # the synchronous send waits for it (Late Receiver, backward pass); an eager MPI_Send
    # left before the receive was posted and did not wait
    check("mpi_latereceiver", "ssend_late_receiver", "MPI_Ssend", [0])
    assert expected[("mpi_latereceiver", "late_receiver", "MPI_Send")] == [0.0] * ranks
    assert waiting(p, "mpi_latereceiver", "late_receiver", "MPI_Send") == [0.0] * ranks
    for function in ("late_sender", "pickle_recv", "waitall", "late_barrier"):
        assert waiting(p, "mpi_latereceiver", function, "MPI_Send") == [0.0] * ranks
    # Scalasca's count metrics: one Late Receiver and one Late Sender instance with data
    assert waiting(p, "mpi_clr_count", "ssend_late_receiver", "MPI_Ssend") == \
        [1] + [0] * (ranks - 1)
    assert waiting(p, "mpi_cls_count", "late_sender", "MPI_Recv") == [1] + [0] * (ranks - 1)
    assert waiting(p, "mpi_cls_count", "waitall", "MPI_Waitall") == [1] + [0] * (ranks - 1)
    for metric in ("mpi_sls_count", "mpi_slr_count", "mpi_slswo_count", "mpi_clswo_count"):
        assert sum(sum(row) for row in p.values(p.metric(metric), inclusive=False)) == 0
    # the reports: the terminal report's section and scorep-score's summary line
    text = render(Experiment(str(exp)), width=300)
    section = text.split("Wait states (Scalasca's patterns")[1].split("\n\n")[0]
    late_sender = [line for line in section.split("\n") if "Late Sender:" in line][0]
    assert "worst" in late_sender and "on MPI Rank 0 in __main__:" in late_sender
    bcast = [line for line in section.split("\n") if "Late Broadcast:" in line][0]
    assert "in __main__:late_bcast > MPI_Bcast" in bcast and "on MPI Rank 0" not in bcast
    ws = wait_states(p)
    by_metric = {row["metric"]: row for row in ws["patterns"]}
    assert abs(by_metric["mpi_earlyreduce"]["total"] -
               sum(expected[("mpi_earlyreduce", "early_reduce", "MPI_Reduce")])) < 2e-6
    assert abs(by_metric["mpi_wait_nxn"]["total"] -
               sum(expected[("mpi_wait_nxn", "late_allreduce", "MPI_Allreduce")])) < 2e-6
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


def _inclusive(p, metric, function, below, with_parts=()):
    """Per rank: the metric (with its parts: the critical path with its imbalance, as Cube
    shows a metric with its children) summed over the call paths that pass through
    __main__:`function` and then `below` (a region name)."""
    rows = [p.values(p.metric(m), inclusive=False) for m in (metric,) + tuple(with_parts)]
    per_rank = [0.0] * len(p.locations)
    for c in p.cnodes:
        path = c.path()
        if "__main__:" + function in path and below in path[path.index("__main__:" + function):]:
            for v in rows:
                for r, x in enumerate(v[c.id]):
                    per_rank[r] += x
    return per_rank


@pytest.mark.parametrize("ranks", [2, 4])
def test_critical_path_and_delay_costs(tmp_path, ranks):
    """A rank late by DELAY in slow(): the waiting it caused is its delay cost on slow()'s
    call path (Late Sender, Barrier, N x N), the critical path runs through slow() on the
    late rank and not through the waiting; a receiver that comes late causes nothing."""
    out = mpirun(ranks, ["--mpp=mpi", program("mpi_critpath.py"), DELAY], tmp_path,
                 SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    exp = tmp_path / "exp"
    p = cube.read(str(exp))
    last = ranks - 1

    def close(got, want):
        return want > 0.5 * DELAY and abs(got - want) <= 0.1 * want

    cases = [("delay_latesender", "mpi_latesender", "late_sender", "MPI_Recv", 1),
             ("delay_barrier", "mpi_barrier_wait", "late_barrier", "MPI_Barrier", last),
             ("delay_n2n", "mpi_wait_nxn", "late_allreduce", "MPI_Allreduce", last)]
    for delay, pattern, function, region, late in cases:
        caused = sum(_inclusive(p, pattern, function, region))
        got = _inclusive(p, delay, function, "__main__:slow")
        assert close(got[late], caused), (delay, got, caused)
        assert [g for r, g in enumerate(got) if r != late] == [0.0] * (ranks - 1), (delay, got)
        # nothing else in the phase caused much (the ranks' next barrier waits a few ms
        # for whichever leaves the phase last)
        assert abs(sum(_inclusive(p, delay, function, "__main__:" + function)) - got[late]) \
            < 0.02 * caused, delay
        # the critical path: slow() on the late rank (its whole time), not the waiting
        cp = _inclusive(p, "critical_path", function, "__main__:slow",
                        ("critical_path_imbalance",))
        slow_time = _inclusive(p, "time", function, "__main__:slow")
        assert close(cp[late], slow_time[late]), (function, cp, slow_time)
        waited = _inclusive(p, "critical_path", function, region, ("critical_path_imbalance",))
        assert all(w < 0.05 * DELAY for w in waited), (function, waited)
        # the imbalance: slow() runs on one rank, its average is 1/ranks of it
        imb = _inclusive(p, "critical_path_imbalance", function, "__main__:slow")
        assert abs(imb[late] - cp[late] * (1 - 1 / ranks)) < 0.02 * cp[late], (imb, cp)
    # the receiver that is late waits for nobody and delays nobody in its phase
    for delay in ("delay_latesender", "delay_n2n"):
        assert sum(_inclusive(p, delay, "late_receiver", "__main__:slow")) == 0.0
    # the reports: the terminal report lists them by name, not as waiting
    ws = wait_states(p)
    by_metric = {row["metric"]: row for row in ws["patterns"]}
    assert "critical_path" in by_metric and "delay_latesender" in by_metric
    assert ws["total"] == pytest.approx(sum(r["total"] for r in ws["patterns"]
                                            if r["metric"].startswith("mpi_")
                                            and "completion" not in r["metric"]))
    text = render(Experiment(str(exp)), width=300)
    section = text.split("Wait states (Scalasca's patterns")[1].split("\n\n")[0]
    line = [x for x in section.split("\n") if "Late Sender delay" in x][0]
    assert "on MPI Rank 1 in __main__:late_sender > __main__:slow" in line, line
    # offline: the same values from the trace
    replayed = Experiment(str(exp)).replay_wait_states()["values"]
    from scorep.report.analysis import wait_state_values
    def ours(values):
        return {k: v for k, v in values.items() if k[0].startswith(("critical_path", "delay_"))}
    online, offline = ours(wait_state_values(p)), ours(replayed)
    assert online and sorted(online) == sorted(offline)
    for key, seconds in online.items():
        assert abs(offline[key] - seconds) < 2e-6, (key, seconds, offline[key])
