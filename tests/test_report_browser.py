"""The HTML report used as a person would: Debian's Chromium driven by puppeteer-core
(tests/report_browser.js) clicks a row of the region table and reads the callers and
callees panel, drags over the timeline's time axis and reads the totals of that range,
zooms and pans with W/A/S/D, resizes the window and measures the flame graph, folds a
lane of a timeline with many threads and folds recursion in the flame graph. The numbers
are checked against scorep.report's own aggregates and an independent computation from
the trace.

SCOREP_README_SHOTS=DIR keeps the screenshots: the README's pictures (docs/images) are
made by `SCOREP_README_SHOTS=$PWD/docs/images pytest tests/test_report_browser.py`."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, SRC, program, run, run_scorep, scorep_env
from test_report_support import report

sys.path.insert(0, str(SRC))
from scorep.report.analysis import callers_and_callees  # noqa: E402
from scorep.report.readers import Experiment  # noqa: E402
from scorep.report.trace_calls import scan_calls  # noqa: E402

SCRIPT = REPO / "tests" / "report_browser.js"
PUPPETEER = REPO / "src" / "scorep" / "report" / "js" / "node_modules" / "puppeteer-core"

pytestmark = pytest.mark.skipif(
    not (os.path.exists("/usr/bin/chromium") and shutil.which("node") and PUPPETEER.is_dir()),
    reason="needs /usr/bin/chromium, node and puppeteer-core (make js)")

UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def seconds(text):
    number, unit = text.split()
    return float(number) * UNITS[unit]


def close(text, value):
    """A time as the page prints it (3 significant digits) and the value it stands for."""
    return abs(seconds(text) - value) <= max(0.006 * abs(value), 1.5e-9)


def drive(html, tmp_path, **plan):
    shots = os.environ.get("SCOREP_README_SHOTS")
    plan.setdefault("screenshots", shots or str(tmp_path))
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan))
    out = subprocess.run(["node", str(SCRIPT), str(html), str(plan_file)],
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout)
    assert got["ready"] == "yes" and got["errors"] is None, got
    assert got["console"] == [] and got["requests"] == [], got
    return got


# The README's pictures show the program's path: when they are made, the program runs from a
# neutral place named for the example, not from a developer's work tree.
NEUTRAL = Path("/tmp/example")


def measured_program(script):
    return NEUTRAL / script if os.environ.get("SCOREP_README_SHOTS") else Path(program(script))


def measure(tmp_path, name, script, **env):
    exp = tmp_path / name
    path = measured_program(script)
    if path != Path(program(script)):
        NEUTRAL.mkdir(exist_ok=True)
        shutil.copy(program(script), path)
    out = run_scorep(sys.executable, [str(path)], exp, cwd=tmp_path, **env)
    assert out.returncode == 0, out.stderr
    return exp


def range_totals(exp, r0, r1):
    """Per region (calls, exclusive s, inclusive s) of the calls in [r0, r1] ns, each
    clipped to the range: computed here from the trace's calls, not by the page."""
    calls = scan_calls(Experiment(exp))
    names = {r.id: r.display for r in calls.scan.regions}
    out = {}
    for l in range(len(calls.scan.locations)):
        stack = []  # (end, name, clipped)
        for i in range(calls.offsets[l], calls.offsets[l + 1]):
            s, e = calls.start[i], calls.start[i] + calls.dur[i]
            while stack and stack[-1][0] <= s:
                stack.pop()
            if s >= r1 or e <= r0:
                stack.append((e, names[calls.region[i]], 0))
                continue
            clip = min(e, r1) - max(s, r0)
            name = names[calls.region[i]]
            st = out.setdefault(name, [0, 0.0, 0.0])
            st[0] += 1
            st[1] += clip
            if all(n != name for _, n, _ in stack):
                st[2] += clip
            if stack:
                out[stack[-1][1]][1] -= clip
            stack.append((e, name, clip))
    return {k: (v[0], v[1] * 1e-9, v[2] * 1e-9) for k, v in out.items()}


def test_select_a_function_a_range_keys_and_a_narrow_window(tmp_path):
    exp = measure(tmp_path, "exp", "report_work.py", SCOREP_ENABLE_TRACING="true")
    html = tmp_path / "report.html"
    assert report(exp, "-o", html).returncode == 0
    got = drive(html, tmp_path, search="branch", select="__main__:branch", range=[0.02, 0.6],
                keys="wwad", narrow=800)
    steps = got["steps"]

    # flame graph search: functions and time, not "samples" of nanoseconds; cleared: gone
    assert re.match(r"search: 1 function\(s\) in 1 frame\(s\), [\d.]+ [mun]?s of [\d.]+ [mun]?s "
                    r"\([\d.]+%\)$", steps["search"]["found"]), steps["search"]
    assert steps["search"]["cleared"] == ""

    # a click on the table's row: the callers and callees panel, as the aggregates say
    sel = steps["select"]
    assert sel["selected"] == "__main__:branch" and sel["selected_rows"] == 1
    tree = Experiment(exp).tree
    rid = [n.region.id for n in tree.nodes if n.region.name == "__main__:branch"][0]
    want = callers_and_callees(tree, rid)
    assert [row[:2] for row in sel["callers"]] == [
        [r.display, str(calls)] for r, calls, _, _ in want["callers"]] == [["__main__:trunk", "4"]]
    assert [row[:2] for row in sel["callees"]] == [["__main__:leaf", "12"]]
    for row, (r, calls, excl, incl) in zip(sel["callers"] + sel["callees"],
                                           want["callers"] + want["callees"]):
        assert close(row[2], incl) and close(row[3], excl), (row, incl, excl)
    assert sel["title"].startswith("__main__:branch %s:12" % measured_program("report_work.py"))
    assert sel["totals"].startswith("4 calls, inclusive ")
    assert sel["focus"] == "__main__:branch"  # the flame graph zoomed to it
    assert sel["marked"] == "4"               # its 4 calls highlighted in the timeline
    assert sel["source"].endswith("lines 12-16 (__main__:branch)")
    assert sel["hot"][0].startswith("12def branch(k):")

    # a range dragged on the time axis: its totals, computed independently from the trace
    rng = steps["range"]
    r0, r1 = (int(v) for v in rng["range"].split(","))
    assert 0 <= r0 < r1 and rng["title"].startswith("Selected ")
    want = range_totals(exp, r0, r1)
    assert rng["rows"], rng
    shown = {row[0]: row for row in rng["rows"]}
    assert set(shown) == {k for k, v in want.items() if v[0]}
    for name, (calls, excl, incl) in want.items():
        row = shown[name]
        assert int(row[1].replace(",", "")) == calls, (name, row, calls)
        assert close(row[2], excl) and close(row[3], incl), (name, row, excl, incl)
    excls = [seconds(row[2]) for row in rng["rows"]]
    assert excls == sorted(excls, reverse=True)
    # the flame graph shows the range, and the whole run again once it is cleared
    assert rng["scope"].startswith("Showing the time range ")
    assert set(rng["frames"]) <= set(want) and rng["frames"]
    assert rng["cleared_scope"] is True

    # W zooms in at the pointer (or the middle), twice; A pans back, D forward
    views = [[int(x) for x in v.split(",")] for v in steps["keys"]]
    widths = [b - a for a, b in views]
    assert widths[1] < widths[0] and widths[2] < widths[1]
    assert abs(widths[3] - widths[2]) <= 2 and views[3][0] < views[2][0]
    assert abs(widths[4] - widths[3]) <= 2 and views[4][0] > views[3][0]

    # 800 px wide: the flame graph is redrawn at the new width, nothing is wider
    nar = steps["narrow"]
    assert nar["flame_attr"] == nar["flame_svg"]
    assert int(nar["flame_attr"]) < int(nar["wide_flame"]) and int(nar["flame_attr"]) <= 800
    assert nar["page_width"] <= 800
    assert nar["table"] <= nar["table_box"] and nar["timeline"] <= 800
    for name in ("sandwich", "timeline-range", "flame-range", "narrow", "source"):
        png = Path(os.environ.get("SCOREP_README_SHOTS") or tmp_path) / (name + ".png")
        assert png.stat().st_size > 2000, name


def test_many_threads_fold_and_recursion_folds(tmp_path):
    exp = measure(tmp_path, "exp", "many_threads.py", SCOREP_ENABLE_TRACING="true")
    html = tmp_path / "threads.html"
    assert report(exp, "-o", html).returncode == 0
    got = drive(html, tmp_path, fold_lane=0)
    before, after = got["steps"]["fold"]["before"], got["steps"]["fold"]["after"]
    assert before[0] == "13"  # a lane per thread
    # 13 lanes: all but the first start folded to one row; clicking the first lane's name
    # folds it too: the lanes get shorter
    assert after[0] <= int(before[1].rstrip("px"))

    rec = measure(tmp_path, "rec", "recursion_mix.py", SCOREP_ENABLE_TRACING="true")
    html = tmp_path / "rec.html"
    assert report(rec, "-o", html).returncode == 0
    got = drive(html, tmp_path, fold=True)
    frames = got["steps"]["fold"]
    assert frames["unfolded"].count("__main__:fib") >= 10
    assert frames["folded"].count("__main__:fib") == 1
    assert frames["folded"].count("__main__:is_even") == 1
    assert frames["folded_height"] < frames["unfolded_height"]


def test_flame_graph_and_table_by_a_recorded_metric(tmp_path):
    """A run with metrics (rusage and --memory): the flame graph's metric selector draws
    the frames by page faults instead of time, the region table shows that metric's
    columns and puts the region with the most of it first."""
    exp = tmp_path / "metrics"
    out = run_scorep(sys.executable, ["--memory", program("metrics_app.py")], exp,
                     cwd=tmp_path, SCOREP_METRIC_RUSAGE="ru_utime,ru_minflt")
    assert out.returncode == 0, out.stderr
    html = tmp_path / "metrics.html"
    assert run([sys.executable, "-m", "scorep.report", str(exp), "-o", str(html)],
               env=scorep_env()).returncode == 0
    got = drive(html, tmp_path, metric="ru_minflt")["steps"]["metric"]
    assert not got["hidden"]
    assert got["options"] == ["time", "ru_utime", "ru_minflt", "python_allocated",
                              "python_freed", "native_allocated", "native_freed",
                              "native_peak"]

    def width(frames, prefix):
        # a function with none of the metric has no frame at all (busy's page faults: the
        # reads' own faults are no longer its)
        return max((f["width"] for f in frames if f["name"].startswith(prefix)), default=0)
    # By time busy() is the widest function; by page faults touch() (64 MB of fresh pages).
    assert width(got["before"], "__main__:busy") > width(got["before"], "__main__:touch")
    assert width(got["after"], "__main__:touch") > 3 * width(got["after"], "__main__:busy")
    label = [f["title"] for f in got["after"] if f["name"].startswith("__main__:touch")][0]
    assert "ru_minflt inclusive" in label, label
    assert got["table"]["chosen"] == "1"
    assert "ru_minflt excl" in got["table"]["visible"]
    assert "ru_utime excl" not in got["table"]["visible"]
    assert got["table"]["first"] == "__main__:touch"


LONG_NAMES = {
    "networkx/__init__.py": "",
    "networkx/algorithms/__init__.py": "",
    "networkx/algorithms/shortest_paths/__init__.py": "",
    "networkx/algorithms/shortest_paths/weighted.py": (
        "class MultiDiGraphAdjacencyView:\n"
        "    def single_source_dijkstra_path_length_with_cutoff(self, n):\n"
        "        return sum(self._weight_function_of_an_edge_of_the_graph(i) for i in range(n))\n"
        "\n"
        "    def _weight_function_of_an_edge_of_the_graph(self, i):\n"
        "        return i * 2\n"),
    "app.py": (
        "from networkx.algorithms.shortest_paths.weighted import MultiDiGraphAdjacencyView\n"
        "view = MultiDiGraphAdjacencyView()\n"
        "for _ in range(20):\n"
        "    view.single_source_dijkstra_path_length_with_cutoff(1000)\n"),
}


def test_long_region_names_leave_every_summary_column_visible(tmp_path):
    """A library's qualified names (networkx's are 90 characters) at 1 400 px: the summary's
    time, % and visits columns stay inside their boxes; the names are cut, whole on hover."""
    for name, text in LONG_NAMES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    exp = tmp_path / "exp"
    out = run_scorep(sys.executable, ["app.py"], exp, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    html = tmp_path / "report.html"
    assert report(exp, "-o", html).returncode == 0
    tops = drive(html, tmp_path, width=1400, tops=True)["steps"]["tops"]
    assert len(tops) == 2
    for box in tops:
        assert box["overflow"] <= 0 and box["hidden_columns"] == [], box
    long_name = ("networkx.algorithms.shortest_paths.weighted.MultiDiGraphAdjacencyView:"
                 "_weight_function_of_an_edge_of_the_graph")
    assert long_name in tops[0]["names_cut"]
