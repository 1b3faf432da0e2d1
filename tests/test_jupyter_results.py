"""What the Score-P kernel shows and keeps after a measured cell, driven through
jupyter_client as a notebook front end drives it: the inline result (the HTML report's
renderer in a frame, collapsed to a one-line summary) with the flame graph's data, that
result rendered in headless Chromium, %scorep_report and %scorep_diff, the per-cell
experiment folders and %scorep_clean, `_scorep`, the binding arguments' filter in a live
cell, parameters at a cell's top level, and the resource samples of measured cells.

SCOREP_README_SHOTS=DIR keeps the browser's picture of an inline result (the README's
docs/images/jupyter-inline.png is made by
`SCOREP_README_SHOTS=$PWD/docs/images pytest tests/test_jupyter_results.py -k chromium`).
"""

import csv
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, Trace
from scorep.report.html import unpack_page
from test_jupyter_kernel import RESULTS, Kernel, enters, install_kernelspec

BROWSER = REPO / "tests" / "jupyter_inline_browser.js"
PUPPETEER = REPO / "src" / "scorep" / "report" / "js" / "node_modules" / "puppeteer-core"
HAVE_BROWSER = os.path.exists("/usr/bin/chromium") and shutil.which("node") and \
    PUPPETEER.is_dir()

PAGE_PACKED = re.compile(
    r'<script type="application/gzip\+base64" class="scorep-page">(.*?)</script>', re.S)
REPORT_JSON = re.compile(r'<script type="application/json" id="report-data">(.*?)</script>',
                         re.S)


@pytest.fixture(scope="module")
def kernel_dirs(tmp_path_factory):
    return install_kernelspec(tmp_path_factory.mktemp("prefix"))


@pytest.fixture(scope="module")
def kernel(kernel_dirs, tmp_path_factory):
    # The front end names the notebook (as Jupyter Server does): its folder is named after it.
    k = Kernel("scorep_jupyter", kernel_dirs, tmp_path_factory.mktemp("notebook"),
               extra_env={"JPY_SESSION_NAME": "/home/someone/work/My Analysis.ipynb"})
    yield k
    k.shutdown()


def inline(cell):
    """The cell's inline result: (text/plain, text/html) of its one display."""
    found = [d for d in cell.displays if "scorep-inline" in d.get("text/html", "")]
    assert len(found) == 1, cell.displays
    return found[0]["text/plain"], found[0]["text/html"]


def embedded_page(html):
    """The report page inside an inline result, and the report's data."""
    page = unpack_page(PAGE_PACKED.search(html).group(1))
    data = json.loads(REPORT_JSON.search(page).group(1))
    return page, data


def flame_nodes(data):
    """{(call path of labels): (visits, inclusive ns)} of the flame graph's data."""
    flame = data["flame"]
    paths, out = [], {}
    for i, parent in enumerate(flame["parent"]):
        label = flame["labels"][flame["label"][i]]
        path = (paths[parent] if parent >= 0 else ()) + (label,)
        paths.append(path)
        out[path] = (flame["visits"][i], flame["incl"][i])
    return out


def busy_cell(name="busy", calls=5, extra=""):
    return ("%%%%execute_with_scorep\n"
            "def %s(n):\n"
            "    return sum(i * i for i in range(n))\n"
            "for _ in range(%d):\n"
            "    %s(20000)\n%s" % (name, calls, name, extra))


# ---- the inline result ------------------------------------------------------------------------


def test_inline_result_holds_the_flame_graph_and_the_summary(kernel):
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true")
    cell = kernel.ok(busy_cell())
    count = cell.reply["execution_count"]
    plain, html = inline(cell)
    # One line: the cell, its time, the calls and the hottest function.
    assert "\n" not in plain
    assert plain.startswith("scorep In [%d]: " % count)
    # busy() 5 times, its generator expression 20,001 times per call (one per value)
    assert re.fullmatch(r"scorep In \[%d\]: [\d.]+ m?s; 100,010 calls; hottest "
                        r"__main__:(<genexpr>|busy) [\d.]+ m?s own \(\d+%%\); CPU \d+%%, "
                        r"RSS [\d.]+ MB" % count, plain), plain
    # Collapsed to the summary; the report opens from it.
    assert html.count("<details>") == 1 and "<details open>" not in html
    page, data = embedded_page(html)
    assert page.startswith("<!DOCTYPE html>")
    nodes = flame_nodes(data)
    busy = [path for path in nodes if path[-1] == "__main__:busy"]
    assert len(busy) == 1 and nodes[busy[0]][0] == 5, nodes
    assert nodes[busy[0] + ("__main__:<genexpr>",)][0] == 5 * 20001
    # The inline layout: flame graph first, the timeline (the cell was traced) before the rest.
    order = re.findall(r'<section id="(\w+)"', page)
    assert order[:3] == ["flame", "summary", "timeline"]
    assert data["timeline"]["lanes"][0]["name"] == "MainThread"
    assert data["timeline"]["calls"] == 5 + 5 * 20001
    # What shows where scripts do not run: the top regions as a plain table.
    assert "<code>__main__:busy</code>" in html


def test_inline_result_from_the_trace_alone(kernel):
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true\nSCOREP_ENABLE_PROFILING=false")
    try:
        cell = kernel.ok(busy_cell("traced_only", 3))
    finally:
        kernel.ok("%%scorep_env\nSCOREP_ENABLE_PROFILING=true")
    plain, html = inline(cell)
    assert "3 calls" not in plain and "calls" in plain
    page, data = embedded_page(html)
    assert data["source"] == "trace"
    nodes = flame_nodes(data)
    assert [nodes[p][0] for p in nodes if p[-1] == "__main__:traced_only"] == [3]


def test_parameters_at_top_level_are_no_visits_and_the_root_is_no_row(kernel):
    cell = kernel.ok("%%execute_with_scorep\n"
                     "import scorep.user\n"
                     "scorep.user.parameter_int('n', 3)\n"
                     "def f():\n"
                     "    return 1\n"
                     "for i in range(4):\n"
                     "    f()")
    plain, html = inline(cell)
    assert "; 4 calls;" in plain
    rows = kernel.ok("print([(r['region'], r['visits']) for r in _scorep.rows])").stdout
    assert rows == "[('__main__:f', 4)]\n"
    assert "scorep_jupyter" not in html.split('class="scorep-static"')[1].split("</table>")[0]
    assert "0.000000" not in html


def test_inline_result_can_be_switched_off_and_data_stays(kernel):
    kernel.ok("%%scorep_env\nSCOREP_JUPYTER_INLINE=false\nSCOREP_ENABLE_TRACING=false")
    try:
        cell = kernel.ok(busy_cell("quiet", 2))
    finally:
        kernel.ok("%%scorep_env\nSCOREP_JUPYTER_INLINE=true")
    assert cell.displays == []
    path = cell.stdout.rsplit(" ", 1)[1].strip()
    out = kernel.ok("import os\n"
                    "print(os.fspath(_scorep) == %r, _scorep.experiment == %r,\n"
                    "      _scorep.execution_count, [r['visits'] for r in _scorep.rows\n"
                    "      if r['region'] == '__main__:quiet'])" % (path, path)).stdout
    assert out == "True True %d [2]\n" % cell.reply["execution_count"]


def test_result_as_data_frame_where_pandas_is_installed(kernel):
    kernel.ok(busy_cell("framed", 3))
    out = kernel.ok(
        "try:\n"
        "    import pandas\n"
        "except ImportError:\n"
        "    pandas = None\n"
        "regions = _scorep.regions\n"
        "if pandas is None:\n"
        "    print('list', regions == _scorep.rows)\n"
        "else:\n"
        "    print(type(regions).__name__, list(regions.columns))\n"
        "    print(int(regions.set_index('region').loc['__main__:framed', 'visits']))").stdout
    lines = out.splitlines()
    if lines[0].startswith("list"):
        assert lines == ["list True"]
    else:
        assert lines[0] == ("DataFrame ['region', 'kind', 'file', 'line', 'visits', "
                            "'inclusive_s', 'exclusive_s']")
        assert lines[1] == "3"


# ---- %scorep_report, %scorep_diff -------------------------------------------------------------


def test_scorep_report_shows_a_measured_cell_again(kernel):
    first = kernel.ok(busy_cell("again", 2))
    n = first.reply["execution_count"]
    kernel.ok(busy_cell("later", 1))
    cell = kernel.ok("%%scorep_report %d" % n)
    plain, html = inline(cell)
    assert plain.startswith("scorep In [%d]: " % n)
    assert "<details open>" in html  # asked for: shown open
    nodes = flame_nodes(embedded_page(html)[1])
    assert [nodes[p][0] for p in nodes if p[-1] == "__main__:again"] == [2]
    assert not [p for p in nodes if p[-1] == "__main__:later"]
    # Without a number: the last measured cell.
    plain, html = inline(kernel.ok("%scorep_report"))
    nodes = flame_nodes(embedded_page(html)[1])
    assert [nodes[p][0] for p in nodes if p[-1] == "__main__:later"] == [1]
    # An experiment directory.
    path = first.stdout.rsplit(" ", 1)[1].strip()
    plain, html = inline(kernel.ok("%%scorep_report %s" % path))
    assert plain.startswith("scorep In [%d]: " % n)
    cell = kernel.run("%scorep_report 9999", stop_on_error=False)
    assert cell.status == "error"
    assert cell.stderr.startswith("UsageError: In [9999] was not measured (measured cells: ")


def test_scorep_diff_of_two_cells(kernel):
    kernel.ok("def shared(n):\n    return sum(range(n))")
    a = kernel.ok("%%execute_with_scorep\n"
                  "def gone():\n    return shared(10)\n"
                  "for _ in range(3):\n    shared(1000)\n"
                  "gone()")
    b = kernel.ok("%%execute_with_scorep\n"
                  "def fresh():\n    return shared(10)\n"
                  "for _ in range(7):\n    shared(1000)\n"
                  "fresh()")
    na, nb = a.reply["execution_count"], b.reply["execution_count"]
    cell = kernel.ok("%%scorep_diff %d %d" % (na, nb))
    found = [d for d in cell.displays if "scorep-inline" in d.get("text/html", "")]
    assert len(found) == 1
    plain, html = found[0]["text/plain"], found[0]["text/html"]
    assert plain.startswith("scorep diff In [%d] -> In [%d]: B takes " % (na, nb))
    # the terminal diff: visits that changed, functions of one run only
    visits = re.search(r"^ +(\d+) +(\d+) +\+(\d+)  __main__:shared$", plain, re.M)
    assert visits and visits.groups() == ("4", "8", "4"), plain
    assert "__main__:fresh  (only in B)" in plain
    page = unpack_page(PAGE_PACKED.search(html).group(1))
    assert '<body data-mode="diff">' in page
    data = json.loads(REPORT_JSON.search(page).group(1))
    labels = data["flame"]["labels"]
    assert "__main__:fresh" in labels and "__main__:gone" in labels
    cell = kernel.run("%%scorep_diff %d" % na, stop_on_error=False)
    assert cell.stderr == "UsageError: %scorep_diff takes two measured cells: %scorep_diff N M\n"


@pytest.mark.skipif(not HAVE_BROWSER, reason="needs /usr/bin/chromium, node and puppeteer-core")
def test_inline_results_render_in_chromium(kernel, tmp_path):
    """The cells' HTML outputs saved into one page, as a notebook holds them: each opens
    from its summary into a working report (the flame graph drawn, the table filled, the
    timeline's lanes), nothing fetched, no script error."""
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true\nSCOREP_TOTAL_MEMORY=256M\n"
              "SCOREP_JUPYTER_MONITORING_INTERVAL=0.02")
    threaded = kernel.ok("%%execute_with_scorep\n"
                         "import threading\n"
                         "def leaf(n):\n"
                         "    return sum(i * i for i in range(n))\n"
                         "def work():\n"
                         "    for _ in range(150):\n"
                         "        leaf(5000)\n"
                         "t = threading.Thread(target=work, name='worker')\n"
                         "t.start()\n"
                         "work()\n"
                         "t.join()")
    kernel.ok("%%scorep_env\nSCOREP_JUPYTER_MONITORING_INTERVAL=0.1")
    single = kernel.ok(busy_cell("single", 4))
    diff = kernel.ok("%%scorep_diff %d %d" % (threaded.reply["execution_count"],
                                              single.reply["execution_count"]))
    outputs = [inline(threaded)[1], inline(single)[1],
               [d for d in diff.displays if "scorep-inline" in d.get("text/html", "")][0]
               ["text/html"]]
    page = tmp_path / "notebook.html"
    page.write_text("<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>\n%s\n"
                    "</body></html>\n" % "\n".join(outputs))
    shots = tmp_path / "shots"
    shots.mkdir()
    out = subprocess.run(["node", str(BROWSER), str(page), str(shots)], capture_output=True,
                         text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout)
    assert got["console"] == [] and got["requests"] == [], got
    first, second, third = got["results"]
    for r in (first, second):
        assert r["open_before"] is False and r["frames_before"] == 0  # collapsed, no frame yet
        assert r["static_visible"] and not r["static_visible_after"]
        assert r["monitoring_svg"] == 1
        assert r["ready"] == "yes" and r["errors"] is None and r["mode"] == "report"
        assert r["sections"][:3] == ["flame", "summary", "timeline"]
        assert r["frame_height"] > 300 and r["flame_width"] >= 300
        assert r["save_link"] is True
    assert {"__main__:work", "__main__:leaf", "__main__:<genexpr>"} <= set(first["flame_frames"])
    assert first["timeline_lanes"] == "2"
    assert first["table_regions"][0] == "__main__:<genexpr>"
    assert "__main__:single" in second["flame_frames"] and second["timeline_lanes"] == "1"
    assert third["open_before"] is True and third["mode"] == "diff"
    assert third["ready"] == "yes" and third["errors"] is None
    assert "__main__:single" in third["flame_frames"]
    keep = os.environ.get("SCOREP_README_SHOTS")
    if keep:
        shutil.copy(shots / (first["id"] + ".png"), Path(keep) / "jupyter-inline.png")


# ---- per-cell folders, %scorep_clean ------------------------------------------------------------


def test_experiments_go_into_the_notebooks_folder_and_clean_keeps_the_newest(kernel):
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=false\nSCOREP_EXPERIMENT_DIRECTORY=")
    folder = kernel.cwd / "scorep-notebook" / "My_Analysis"
    before = sorted(p.name for p in kernel.cwd.iterdir())
    counts = []
    for i in range(3):
        cell = kernel.ok(busy_cell("step%d" % i, 1))
        counts.append(cell.reply["execution_count"])
        path = folder / sorted(d.name for d in folder.iterdir()
                               if d.name.startswith("cell-%d-" % counts[-1]))[-1]
        assert cell.stdout == RESULTS % path
        assert sorted(p.name for p in path.iterdir()) == [
            "MANIFEST.md", "monitoring.csv", "profile.cubex", "scorep.cfg"]
    assert sorted(p.name for p in kernel.cwd.iterdir()) == before  # nothing new on top
    names = sorted(d.name for d in folder.iterdir())
    total = len(names)
    assert total >= 3
    cell = kernel.ok("%scorep_clean --keep 1")
    assert re.fullmatch(r"Removed %d experiments \([\d.]+ [kM]?B\) from %s; 1 kept\n"
                        % (total - 1, re.escape(str(folder))), cell.stdout), cell.stdout
    left = sorted(d.name for d in folder.iterdir())
    assert len(left) == 1 and left[0].startswith("cell-%d-" % counts[-1])
    # The removed cells are gone from the history too, and said to be removed.
    cell = kernel.run("%%scorep_report %d" % counts[0], stop_on_error=False)
    assert re.fullmatch(r"UsageError: the experiment of In \[%d\] was removed by %%scorep_clean: "
                        r"%s/cell-%d-\S+\n" % (counts[0], re.escape(str(folder)), counts[0]),
                        cell.stderr), cell.stderr
    cell = kernel.run("%scorep_clean --keep many", stop_on_error=False)
    assert cell.stderr.startswith("UsageError: usage: %scorep_clean [--keep K]")


def test_experiments_folder_is_named_after_ipythons_session_variable(tmp_path):
    """IPython's `__session__` (the notebook's path, where the front end gives it) names the
    folder, before JPY_SESSION_NAME."""
    cwd = tmp_path / "work"
    cwd.mkdir()
    k = Kernel("scorep_jupyter", install_kernelspec(tmp_path / "prefix"), cwd,
               extra_env={"JPY_SESSION_NAME": "/elsewhere/Other.ipynb"})
    try:
        k.ok("__session__ = '/home/someone/Load Study.ipynb'")
        cell = k.ok(busy_cell("named", 1))
        (made,) = (cwd / "scorep-notebook" / "Load_Study").iterdir()
        assert cell.stdout == RESULTS % made
    finally:
        k.shutdown()


def test_experiments_folder_is_configurable(kernel):
    kernel.ok("%%scorep_env\nSCOREP_JUPYTER_EXPERIMENTS=perf/runs")
    try:
        cell = kernel.ok(busy_cell("elsewhere", 1))
    finally:
        kernel.ok("%%scorep_env\nSCOREP_JUPYTER_EXPERIMENTS=scorep-notebook")
    n = cell.reply["execution_count"]
    folder = kernel.cwd / "perf" / "runs" / "My_Analysis"
    (made,) = [d for d in folder.iterdir() if d.name.startswith("cell-%d-" % n)]
    assert cell.stdout == RESULTS % made
    # A name no kernel knows (a misspelling, a newer kernel's) is one line, once per kernel;
    # no cell fails over it.
    cell = kernel.run("%%scorep_env\nSCOREP_JUPYTER_MONITOR=yes", stop_on_error=False)
    assert cell.status == "ok"
    assert cell.stderr == ("scorep: SCOREP_JUPYTER_MONITOR is not a variable of the Score-P "
                           "kernel, ignored (did you mean SCOREP_JUPYTER_MONITORING?)\n")
    kernel.ok(busy_cell("unknown_name", 1))  # still set: nothing more on stderr
    cell = kernel.run("%%scorep_env\nSCOREP_JUPYTER_X=1", stop_on_error=False)
    assert (cell.status, cell.stderr) == ("ok", (
        "scorep: SCOREP_JUPYTER_X is not a variable of the Score-P kernel, ignored (its "
        "variables: SCOREP_JUPYTER_EXPERIMENTS, SCOREP_JUPYTER_INLINE, "
        "SCOREP_JUPYTER_MONITORING, SCOREP_JUPYTER_MONITORING_INTERVAL)\n"))
    cell = kernel.run("%%scorep_env\nSCOREP_JUPYTER_MONITORING_INTERVAL=0", stop_on_error=False)
    assert cell.stderr.startswith("UsageError: SCOREP_JUPYTER_MONITORING_INTERVAL='0' is not an "
                                  "interval in seconds")
    cell = kernel.run("%%scorep_env\nSCOREP_JUPYTER_INLINE=brief", stop_on_error=False)
    assert cell.stderr == ("UsageError: SCOREP_JUPYTER_INLINE='brief' is neither a boolean "
                           "(true/false) nor 'summary'\n")


# ---- the filter of the binding arguments ---------------------------------------------------------


def test_filter_in_binding_arguments_is_honoured_in_a_live_cell(kernel):
    filt = kernel.cwd / "hide.filt"
    filt.write_text("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE __main__:hidden\n"
                    "SCOREP_REGION_NAMES_END\n")
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true\nSCOREP_EXPERIMENT_DIRECTORY=exp_filter")
    code = ("def hidden():\n    return 1\n"
            "def shown():\n    return hidden()\n"
            "for _ in range(3):\n    shown()")
    kernel.ok("%%scorep_python_binding_arguments\n--filter=hide.filt")
    try:
        kernel.ok("%%execute_with_scorep\n" + code)
        cfg = (kernel.cwd / "exp_filter" / "scorep.cfg").read_text()
        assert "SCOREP_FILTERING_FILE='%s'" % filt in cfg
        assert enters(Trace(kernel.cwd / "exp_filter")) == {"__main__:shown": 3}
    finally:
        kernel.ok("%%scorep_python_binding_arguments\n")
    # %%scorep's own arguments, as on the command line
    kernel.ok("%%scorep --filter=hide.filt\n" + code)
    assert enters(Trace(kernel.cwd / "exp_filter")) == {"__main__:shown": 3}
    kernel.ok("%%scorep\n" + code)
    assert enters(Trace(kernel.cwd / "exp_filter")) == {"__main__:shown": 3,
                                                        "__main__:hidden": 3}
    # A filter that cannot be used is said when it is given.
    cell = kernel.run("%%scorep_python_binding_arguments\n--filter=missing.filt",
                      stop_on_error=False)
    assert cell.status == "error"
    assert cell.stderr == ("UsageError: cannot read filter file %s: No such file or "
                           "directory\n" % (kernel.cwd / "missing.filt"))
    kernel.ok("%env SCOREP_EXPERIMENT_DIRECTORY=")
    kernel.ok("%%scorep_env\nSCOREP_EXPERIMENT_DIRECTORY=")


# ---- resource monitoring ------------------------------------------------------------------------


def test_monitoring_samples_a_busy_cell(kernel):
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true\nSCOREP_JUPYTER_MONITORING_INTERVAL=0.05")
    try:
        cell = kernel.ok("%%execute_with_scorep\n"
                         "import time\n"
                         "ballast = bytearray(64 * 1024 * 1024)\n"
                         "with open('written.bin', 'wb') as out:\n"
                         "    out.write(b'x' * 5000000)\n"
                         "cpu = time.process_time()\n"
                         "end = time.perf_counter() + 1.0\n"
                         "while time.perf_counter() < end:\n"
                         "    pass\n"
                         "print('busy', time.process_time() - cpu)")
    finally:
        kernel.ok("%%scorep_env\nSCOREP_JUPYTER_MONITORING_INTERVAL=0.1")
    path = Path(cell.stdout.rsplit(" ", 1)[1].strip())
    busy = float(re.search(r"^busy (\S+)$", cell.stdout, re.M).group(1))
    with open(path / "monitoring.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    cores = [k for k in rows[0] if re.fullmatch(r"cpu\d+_percent", k)]
    assert cores and len(cores) == len(os.sched_getaffinity(0))
    assert len(rows) >= 10  # a second and more, every 0.05 s
    # consecutive intervals, in CLOCK_MONOTONIC ns
    for a, b in zip(rows, rows[1:]):
        assert int(a["end_ns"]) == int(b["start_ns"])
    # The busy loop's CPU time, as the process measured it itself, is in the samples: their
    # process CPU shares times their intervals add up to it (plus the ballast's and the
    # write's, and the kernel's own work in the cell). Not a share of a core: on a loaded
    # machine the loop gets what the scheduler gives it.
    sampled = sum(float(r["process_cpu_percent"]) / 100 * (int(r["end_ns"]) - int(r["start_ns"]))
                  for r in rows) / 1e9
    assert 0.8 * busy <= sampled <= busy + 0.5, (busy, sampled)
    assert max(float(r[c]) for r in rows for c in cores if r[c]) >= 80
    # the ballast is resident; the 5 MB written went through write calls
    assert max(int(r["rss_bytes"]) for r in rows) >= 64 * 1024 * 1024
    assert sum(int(r["write_chars"]) for r in rows) >= 5000000
    assert "`monitoring.csv`" in (path / "MANIFEST.md").read_text()
    # the same samples as data, and as the inline plot
    out = kernel.ok("s = _scorep.samples\n"
                    "print(len(s), s.interval, s.peak_rss() >= 64 * 1024 * 1024)").stdout
    assert out == "%d 0.05 True\n" % len(rows)
    plain, html = inline(cell)
    assert re.search(r"CPU \d+%, RSS [\d.]+ MB", plain)
    assert html.count('<svg class="scorep-monitoring"') == 1
    # the sampling thread is no location of the trace: only the cell's own thread
    assert Trace(path).locations == ["MainThread"]
    # With tracing the samples are in the trace too: OTF2 Metric records of an asynchronous
    # metric class on that thread, at each interval's end, with monitoring.csv's values.
    import otf2
    with otf2.reader.open(str(path / "traces.otf2")) as reader:
        classes = [c for c in reader.definitions.metric_classes
                   if str(c.occurrence) == "MetricOccurrence.ASYNCHRONOUS"]
        assert len(classes) == 1
        members = [m.name for m in classes[0].members]
        assert members[:2] == ["process_cpu_percent", "rss_bytes"]
        assert "write_chars" in members and cores[0] in members
        modes = {m.name: str(m.metric_mode) for m in classes[0].members}
        assert modes["rss_bytes"] == "MetricMode.ABSOLUTE_POINT"
        assert modes["write_chars"] == "MetricMode.RELATIVE_LAST"
        events = [e for _loc, e in reader.events]
        samples = [(e.time, list(e.values)) for e in events
                   if type(e).__name__ == "Metric" and e.metric == classes[0]]
        times = [e.time for e in events]
        assert times == sorted(times)
    assert [t for t, _v in samples] == [int(r["end_ns"]) for r in rows][:len(samples)]
    assert len(samples) >= len(rows) - 1
    for (_t, values), row in zip(samples, rows):
        assert values[members.index("rss_bytes")] == int(row["rss_bytes"])
        assert values[members.index("write_chars")] == int(row["write_chars"])
        assert abs(values[0] - float(row["process_cpu_percent"])) < 0.06


def test_pool_cell_counts_its_workers(kernel):
    """A cell that maps over a Pool: the summary's hottest function is the cell's own (not
    the pool's waiting plumbing), the load balance counts each process by its busiest
    thread (the parent's waiting helper threads do not add up to more than the workers),
    and the resource samples hold the workers' CPU time."""
    from scorep.report.analysis import load_balance
    from scorep.report.readers import Experiment
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=false")
    cell = kernel.ok("%%scorep\n"
                     "import multiprocessing, time\n"
                     "def sq(n):\n"
                     "    t = time.process_time()\n"
                     "    sum(i * i for i in range(n))\n"
                     "    return time.process_time() - t\n"
                     "with multiprocessing.get_context('fork').Pool(2) as pool:\n"
                     "    spent = pool.map(sq, [300000] * 4)")
    plain, _html = inline(cell)
    assert re.search(r"; hottest __main__:(<genexpr>|sq) ", plain), plain
    path = Path(cell.stdout.rsplit(" ", 1)[1].strip())
    tree = Experiment(str(path)).tree
    lb = load_balance(tree)
    assert lb["unit"] == "rank" and len(lb["names"]) == 3  # the kernel and two workers
    assert lb["idle"] == []
    # The parent's work is that of its busiest thread, not the sum of its four.
    parent = tree.ranks[0].locations
    assert len(parent) == 4
    per_thread = [sum(tree.excl[n.id][l] for n in tree.nodes if n.region.kind in ("code", "io"))
                  for l in parent]
    assert lb["work"][0] == pytest.approx(max(per_thread))
    # The workers' CPU time (what they measured themselves) is in the samples.
    workers = float(kernel.ok("print(sum(spent))").stdout)
    with open(path / "monitoring.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    sampled = sum(float(r["process_cpu_percent"]) / 100 *
                  (int(r["end_ns"]) - int(r["start_ns"])) / 1e9 for r in rows)
    assert sampled >= 0.8 * workers, (sampled, workers)


def test_monitoring_can_be_switched_off(kernel):
    kernel.ok("%%scorep_env\nSCOREP_JUPYTER_MONITORING=false\nSCOREP_ENABLE_TRACING=false")
    try:
        cell = kernel.ok(busy_cell("unmonitored", 1))
    finally:
        kernel.ok("%%scorep_env\nSCOREP_JUPYTER_MONITORING=true")
    path = Path(cell.stdout.rsplit(" ", 1)[1].strip())
    assert not (path / "monitoring.csv").exists()
    plain, html = inline(cell)
    assert "RSS" not in plain and "scorep-monitoring" not in html
    assert kernel.ok("print(_scorep.samples)").stdout == "None\n"


# ---- %load_ext scorep --------------------------------------------------------------------------


def test_load_ext_scorep_shows_the_result_too(tmp_path):
    import json as _json
    import sys
    dirs = tmp_path / "spec"
    (dirs / "plain_python").mkdir(parents=True)
    with open(dirs / "plain_python" / "kernel.json", "w") as out:
        _json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f",
                             "{connection_file}"], "display_name": "Python",
                    "language": "python"}, out)
    cwd = tmp_path / "plain"
    cwd.mkdir()
    k = Kernel("plain_python", dirs, cwd)
    try:
        k.ok("%load_ext scorep")
        k.ok("def inc(x):\n    return x + 1")
        cell = k.ok("%%scorep\ninc(1)\ninc(2)")
        assert cell.results == ["3"]
        plain, html = inline(cell)
        nodes = flame_nodes(embedded_page(html)[1])
        assert [nodes[p][0] for p in nodes if p[-1] == "__main__:inc"] == [2]
        (folder,) = (cwd / "scorep-notebook").iterdir()
        assert folder.name.startswith("plain-")
        assert cell.stdout == RESULTS % next(folder.iterdir())
        assert k.ok("%scorep_report").displays
        # An error in a measured cell shows as in a plain cell: the cell's own frames, not
        # IPython's run_cell_magic nor "skipping hidden N frame".
        cell = k.run("%%scorep\ndef bad(x):\n    return 1 / x\nbad(0)", stop_on_error=False)
        assert cell.status == "error" and cell.errors[0]["ename"] == "ZeroDivisionError"
        text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(cell.errors[0]["traceback"]))
        assert "run_cell_magic" not in text and "hidden" not in text, text
        assert re.findall(r"^Cell In ?\[(\d+)\], line (\d+)", text, re.M) == [
            (str(cell.reply["execution_count"]), "3"), (str(cell.reply["execution_count"]), "2")
        ], text
    finally:
        k.shutdown()


def test_line_profiles_of_a_cell_from_the_magic_line(kernel):
    kernel.ok("%%scorep_env\nSCOREP_EXPERIMENT_DIRECTORY=exp_lines")
    try:
        kernel.ok("%%execute_with_scorep --lines=__main__:looped\n"
                  "def looped(n):\n"
                  "    total = 0\n"
                  "    for i in range(n):\n"
                  "        total += i\n"
                  "    return total\n"
                  "looped(40)")
        data = json.loads((kernel.cwd / "exp_lines" / "lines.json").read_text())
        assert [f["name"] for f in data["functions"].values()] == ["__main__:looped"]
        hits = sorted(hits for _, _, hits, _ in data["locations"][0]["lines"])
        assert hits == [1, 1, 40, 41]  # total = 0, return, the body, the loop header
        # the next cell has no line profiles: the arguments were the cell's own
        kernel.ok("%%execute_with_scorep\nlooped(3)")
        assert not (kernel.cwd / "exp_lines" / "lines.json").exists()
    finally:
        kernel.ok("%%scorep_env\nSCOREP_EXPERIMENT_DIRECTORY=")
