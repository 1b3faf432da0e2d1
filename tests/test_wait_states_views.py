"""Where users see wait states, under real mpirun: scorep-report EXP --wait-states (the
analysis replayed from an experiment's OTF2 trace, the reader running the ranks' engine
with one thread per rank) and the HTML report's metric selector.

The offline result of a run agrees with the one its ranks computed at the end, per metric,
rank and call path; a run measured without the analysis gets the waiting its trace's times
give by Scalasca's definitions; what is not an MPI trace gets one line. In the HTML report
one choice of a wait-state metric redraws the flame graph, the region table and the load
balance per rank (headless Chromium, the selectors used as a person would). A notebook runs
its MPI program with mpirun from a cell (the kernel measures cells in its own process, one
process, no ranks) and %scorep_report of that experiment shows the waiting in its summary
and the selector in its report (through jupyter_client)."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import program, run_scorep
from mpi_support import mpirun
from scorep import cube
from scorep.report.analysis import summarize_wait_states, wait_state_values, wait_states
from scorep.report.readers import Experiment
from test_mpi_wait_states import expected_waiting, mpi_calls
from test_report_support import needs_chromium, report

needs_mpirun = pytest.mark.skipif(shutil.which("mpirun") is None,
                                  reason="mpirun is not installed")
DELAY = 0.5


def section(text):
    assert "Wait states (Scalasca's patterns, replayed from the trace)" in text, text
    return text.split("Wait states (Scalasca's patterns, replayed from the trace)")[1] \
        .split("\n\n")[0]


@pytest.fixture(scope="module")
def traced_run(tmp_path_factory):
    """A traced 2-rank run of the constructed program with the analysis at the end."""
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun is not installed")
    tmp_path = tmp_path_factory.mktemp("traced")
    out = mpirun(2, ["--mpp=mpi", program("mpi_wait_states.py"), DELAY], tmp_path,
                 SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    return tmp_path / "exp"


def test_offline_replay_agrees_with_the_ranks(traced_run):
    exp = traced_run
    online = wait_state_values(cube.read(str(exp)))
    replayed = Experiment(str(exp)).replay_wait_states()
    offline = replayed["values"]
    assert replayed["ranks"] == 2 and replayed["violations"] == 0
    # The same call paths of the same ranks wait in the same patterns ...
    assert len(online) >= 6
    assert sorted(online) == sorted(offline)
    # ... the same time: OTF2 interpolates the clock offsets as the ranks did, to the ns
    for key, seconds in online.items():
        assert abs(offline[key] - seconds) < 2e-6, (key, seconds, offline[key])
    late = [k for k in offline if k[0] == "mpi_latesender" and k[3][-1] == "MPI_Recv"
            and "__main__:late_sender" in k[3]]
    assert [k[1] for k in late] == ["MPI Rank 0"]
    assert offline[late[0]] > 0.5 * DELAY
    # The terminal section says the same as the online one
    ws_online = wait_states(cube.read(str(exp)))
    ws_offline = wait_states(None, replayed)
    assert [(r["metric"], r["worst_rank"], r["worst_path"]) for r in ws_online["patterns"]] \
        == [(r["metric"], r["worst_rank"], r["worst_path"]) for r in ws_offline["patterns"]]
    assert abs(ws_online["total"] - ws_offline["total"]) < 2e-5
    cli = report(exp, "--wait-states")
    assert cli.returncode == 0, cli.stderr
    assert cli.stderr == ""
    text = section(cli.stdout)
    worst = ws_online["patterns"][0]
    assert worst["metric"] == "mpi_latesender"
    assert "Late Sender: " in text and "on MPI Rank 0 in %s" % " > ".join(
        worst["worst_path"][-2:]) in text.replace("\n    ", " ")


@needs_mpirun
def test_offline_replay_of_a_run_without_the_analysis(tmp_path):
    """SCOREP_MPI_WAIT_STATES=false: the profile has no wait states, the replay of the
    trace finds each constructed wait where Scalasca's definitions put it."""
    out = mpirun(2, ["--mpp=mpi", program("mpi_wait_states.py"), DELAY], tmp_path,
                 SCOREP_ENABLE_TRACING="true", SCOREP_MPI_WAIT_STATES="false")
    assert out.returncode == 0, out.stderr
    exp = tmp_path / "exp"
    assert not [m for m in cube.read(str(exp)).metrics if m.uniq_name.startswith("mpi_")]
    expected = expected_waiting(mpi_calls(exp), 2)
    values = Experiment(str(exp)).replay_wait_states()["values"]

    def got(metric, function, region):
        per_rank = [0.0, 0.0]
        for (m, group, _loc, path), v in values.items():
            if m == metric and path[-1] == region and "__main__:" + function in path:
                per_rank[int(group.rsplit(" ", 1)[1])] += v
        return per_rank

    for metric, function, region in [("mpi_latesender", "late_sender", "MPI_Recv"),
                                     ("mpi_latesender", "pickle_recv", "MPI_Mprobe"),
                                     ("mpi_latesender", "waitall", "MPI_Waitall"),
                                     ("mpi_barrier_wait", "late_barrier", "MPI_Barrier"),
                                     ("mpi_wait_nxn", "late_allreduce", "MPI_Allreduce"),
                                     ("mpi_latebroadcast", "late_bcast", "MPI_Bcast"),
                                     ("mpi_earlyreduce", "early_reduce", "MPI_Reduce")]:
        want = expected[(metric, function, region)]
        have = got(metric, function, region)
        for r in range(2):
            assert abs(have[r] - want[r]) < 2e-6, (metric, function, r, have, want)
        assert max(have) > 0.5 * DELAY, (metric, function, have)
    assert got("mpi_latesender", "late_receiver", "MPI_Recv") == [0.0, 0.0]
    cli = report(exp, "--wait-states")
    assert cli.returncode == 0, cli.stderr
    assert "Wait at Barrier: " in section(cli.stdout)


def test_offline_replay_bad_input(tmp_path):
    """Not an MPI trace, no trace, a damaged trace: one line each, no traceback."""
    serial = tmp_path / "serial"
    script = tmp_path / "work.py"
    script.write_text("def f():\n    return sum(range(1000))\nf()\n")
    out = run_scorep(sys.executable, [str(script)], serial, SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    cli = report(serial, "--wait-states")
    assert cli.returncode == 1 and cli.stdout == ""
    assert cli.stderr.startswith("scorep-report: ") and cli.stderr.count("\n") == 1
    assert "not a trace of an MPI run" in cli.stderr and "Traceback" not in cli.stderr

    cli = report(serial, "--wait-states", "-o", tmp_path / "r.html")
    assert cli.returncode == 2 and cli.stderr.count("\n") == 1
    assert "--wait-states goes to the terminal report" in cli.stderr

    profile_only = tmp_path / "profile_only"
    out = run_scorep(sys.executable, [str(script)], profile_only)
    assert out.returncode == 0, out.stderr
    cli = report(profile_only, "--wait-states")
    assert cli.returncode == 1 and cli.stderr.count("\n") == 1
    assert "has no trace (traces.otf2)" in cli.stderr



def test_offline_replay_of_a_damaged_trace(traced_run, tmp_path):
    """An MPI trace whose event files were cut short: one line that says which location's
    events could not be read."""
    damaged = tmp_path / "damaged"
    shutil.copytree(traced_run, damaged)
    evts = list((damaged / "traces").glob("*.evt"))
    assert len(evts) >= 2
    for evt in evts:
        evt.write_bytes(evt.read_bytes()[:100])
    cli = report(damaged, "--wait-states", "--source", "profile")
    assert cli.returncode == 1 and cli.stdout == "" and cli.stderr.count("\n") == 1, cli.stderr
    assert cli.stderr.startswith("scorep-report: %s: reading the events of location "
                                 % (damaged / "traces.otf2"))
    assert "Traceback" not in cli.stderr


@needs_chromium
def test_html_metric_selector_drives_the_views(traced_run, tmp_path):
    """One selector for time and each wait-state metric of the profile: choosing Late
    Sender above the flame graph redraws it by that metric, shows its columns in the region
    table and draws the load balance as Late Sender per rank; choosing in the load balance
    moves the others along; time brings everything back."""
    exp = traced_run
    html = tmp_path / "r.html"
    out = report(exp, "-o", html)
    assert out.returncode == 0, out.stderr
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"steps": [
        {"select": "#flame-metric", "label": "Late Sender"},
        {"select": "#balance-metric", "label": "Wait at Barrier"},
        {"select": "#balance-metric", "label": "time"}]}))
    script = os.path.join(os.path.dirname(__file__), "wait_states_browser.js")
    run = subprocess.run(["node", script, str(html), str(plan)], capture_output=True,
                         text=True, timeout=240)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen["console"] == []
    p = cube.read(str(exp))
    names = {m.uniq_name for m in p.metrics}

    def per_rank(metric):
        values = wait_state_values(p)
        ranks = [0.0, 0.0]
        for (m, group, _loc, _path), v in values.items():
            if m == metric:
                ranks[int(group.rsplit(" ", 1)[1])] += v
        return ranks

    first = seen["initial"]
    assert first["balance_shows"] == "time" and first["flame_metric"] == "-1"
    # time and each wait-state metric of the profile; the load balance draws the times per
    # rank (Scalasca's counts, unit occ, only in the flame graph and the table)
    engine = ("mpi_", "critical_path", "delay_")
    times = [m for m in p.metrics if m.uniq_name.startswith(engine) and m.uom == "sec"]
    assert first["balance_options"] == ["time"] + [m.disp_name for m in times]
    assert "Critical path profile" in first["balance_options"]
    assert set(first["balance_options"]) <= set(first["flame_options"])
    assert len(first["flame_options"]) == 1 + len([n for n in names if n.startswith(engine)])
    assert "Late Sender" in first["balance_options"] and \
        "Wait at Barrier" in first["balance_options"]
    time_values = first["balance_values"]

    late, barrier, back = seen["steps"]
    # Late Sender chosen above the flame graph: all three views follow
    assert late["flame_metric"] == late["table_metric"] == late["balance_metric"] != "-1"
    assert late["balance_shows"] == "mpi_latesender"
    shown = [float(v) for v in late["balance_values"].split()]
    want = per_rank("mpi_latesender")
    assert want[0] > 0.5 * DELAY * 3 and want[1] == 0.0  # three receives wait DELAY each
    assert shown[1] == 0.0 and abs(shown[0] - want[0]) < 1e-5 * want[0]
    assert late["table_heads"] == ["Late Sender excl", "Late Sender incl"]
    frames = late["flame_frames"]
    assert frames[0].startswith("mpi_wait_states.py: ") and "Late Sender inclusive (100.0%)" \
        in frames[0]
    for function in ("late_sender", "pickle_recv", "waitall"):
        assert any(f.startswith("__main__:%s " % function) for f in frames), frames
    assert not any("late_receiver" in f or "late_bcast" in f for f in frames), frames
    # Wait at Barrier chosen in the load balance: the flame graph and table follow
    assert barrier["balance_shows"] == "mpi_barrier_wait"
    assert barrier["flame_metric"] == barrier["table_metric"] == barrier["balance_metric"]
    shown = [float(v) for v in barrier["balance_values"].split()]
    want = per_rank("mpi_barrier_wait")
    assert all(abs(a - b) < 1e-5 * max(want) for a, b in zip(shown, want)), (shown, want)
    assert any(f.startswith("__main__:late_barrier ") for f in barrier["flame_frames"])
    # time again
    assert back["balance_shows"] == "time" and back["flame_metric"] == "-1"
    assert back["balance_values"] == time_values and back["table_heads"] == []


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    from test_jupyter_kernel import Kernel, install_kernelspec
    dirs = install_kernelspec(tmp_path_factory.mktemp("prefix"))
    k = Kernel("scorep_jupyter", dirs, tmp_path_factory.mktemp("notebook"))
    yield k
    k.shutdown()


@needs_mpirun
def test_notebook_runs_mpi_and_its_report_shows_the_wait_states(kernel, tmp_path):
    from test_jupyter_results import embedded_page, inline
    exp = tmp_path / "nb-exp"
    cell = kernel.run(
        "!OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
        "SCOREP_ENABLE_TRACING=true SCOREP_EXPERIMENT_DIRECTORY=%s "
        "mpirun --oversubscribe -np 2 %s -m scorep --mpp=mpi %s %s"
        % (exp, sys.executable, program("mpi_wait_states.py"), DELAY), timeout=240)
    assert cell.status == "ok", (cell.stderr, cell.errors)
    assert "rank 0 done" in cell.stdout and "rank 1 done" in cell.stdout, cell.stdout
    p = cube.read(str(exp))
    ws = wait_states(p)
    plain, html = inline(kernel.ok("%%scorep_report %s" % exp))
    worst = max(ws["patterns"], key=lambda r: r["total"])
    from scorep.report.model import format_seconds
    assert "waiting in MPI %s of %s, most %s %s (worst on %s in %s)" % (
        format_seconds(ws["total"]), format_seconds(ws["mpi_time"]), worst["display"],
        format_seconds(worst["total"]), worst["worst_rank"],
        " > ".join(worst["worst_path"][-2:])) in plain, plain
    # the embedded report carries the metric selector's data: Late Sender per rank
    _page, data = embedded_page(html)
    by_name = {m["name"]: m for m in data["balance"]["metrics"]}
    late = by_name["mpi_latesender"]["values"]
    want = [0.0, 0.0]
    for (m, group, _loc, _path), v in wait_state_values(p).items():
        if m == "mpi_latesender":
            want[int(group.rsplit(" ", 1)[1])] += v
    assert want[0] > 0.5 * DELAY and late[1] == 0.0
    assert abs(late[0] - want[0]) < 1e-9
    assert [m["display"] for m in data["flame"]["metrics"]][:2] == \
        ["Late Sender", "Late Sender, Wrong Order"]


def test_total_waiting_with_metrics_the_engine_adds():
    """The reports take the metrics from the engine's table by name: one they do not know
    (Late Receiver, the critical path, delay costs, as the backward pass adds them) is
    listed by its name, and the total waiting (scorep-score's summary line, the terminal
    section's first line) counts the waiting patterns only: not completion times, not the
    critical path, not the delay costs that attribute the same waiting to its causes."""
    table = [("mpi_latesender", None), ("mpi_latesender_wo", "mpi_latesender"),
             ("mpi_latereceiver", None), ("mpi_barrier_completion", None),
             ("critical_path", None), ("delay_latesender", None),
             ("mpi_latesender_count", None)]
    path = ("main.py", "__main__:solve", "MPI_Recv")
    values = {("mpi_latesender", "MPI Rank 0", "MainThread", path): 2.0,
              ("mpi_latesender", "MPI Rank 2", "MainThread", path): 0.5,
              ("mpi_latesender_wo", "MPI Rank 0", "MainThread", path): 0.25,
              ("mpi_latereceiver", "MPI Rank 1", "MainThread", ("main.py", "MPI_Ssend")): 1.0,
              ("mpi_barrier_completion", "MPI Rank 1", "MainThread", ("MPI_Barrier",)): 0.125,
              ("critical_path", "MPI Rank 1", "MainThread", ("main.py",)): 7.0,
              ("delay_latesender", "MPI Rank 1", "MainThread", path): 2.5,
              ("mpi_latesender_count", "MPI Rank 0", "MainThread", path): 3.0}
    ws = summarize_wait_states(values, 10.0, table, {"mpi_latereceiver": "Late Receiver"})
    assert ws["total"] == 3.5
    # the counts (unit "occ") are instances, no pattern of time
    assert [r["metric"] for r in ws["patterns"]] == [
        "mpi_latesender", "mpi_latereceiver", "mpi_barrier_completion", "critical_path",
        "delay_latesender"]
    by = {r["metric"]: r for r in ws["patterns"]}
    assert by["mpi_latereceiver"]["display"] == "Late Receiver"
    assert by["critical_path"]["display"] == "Critical path"
    assert by["mpi_latesender"]["worst_rank"] == "MPI Rank 0"
    assert by["mpi_latesender"]["worst_seconds"] == 2.0 and by["mpi_latesender"]["share"] == 0.25
    assert ws["wrong_order"] == 0.25 and [p["metric"] for p in ws["parts"]] == \
        ["mpi_latesender_wo"]
