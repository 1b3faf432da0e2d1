"""scorep.report on real measurements: the terminal report and every export checked with
its real consumer where one runs here (pstats.Stats, Graphviz dot) and with our
validators otherwise; values against a program with known call counts
(programs/report_work.py); profile-only, trace-only and error paths."""

import marshal
import os
import pstats
import re
import subprocess
import sys

import pytest

from conftest import program, run, run_scorep, scorep_env
from test_report_support import report, validate_chrome, validate_speedscope, chrome_slices

sys.path.insert(0, str(__import__("conftest").SRC))
from scorep.report.readers import Experiment  # noqa: E402

KNOWN = {"__main__:trunk": 1, "__main__:branch": 4, "__main__:leaf": 12,
         "__main__:recurse": 6, "__main__:nap": 1}


def measure(tmp_path, name, script="report_work.py", args=(), **env):
    exp = tmp_path / name
    out = run_scorep(sys.executable, [program(script)] + list(args), exp, cwd=tmp_path, **env)
    assert out.returncode == 0, out.stderr
    return exp


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """report_work.py with profile and trace; nap sleeps 0.2 s, by construction more than
    the interpreter's start-up and shut-down on a loaded machine (the program root's own
    time, which passed 20 ms there and took nap's first row)."""
    tmp = tmp_path_factory.mktemp("both")
    return measure(tmp, "exp", args=["4", "0.2"], SCOREP_ENABLE_TRACING="true")


ROW = re.compile(r"^\s+(\S+ \S+)\s+(\S+%)\s+(\S+ \S+)\s+(\S+%)\s+([\d,]+)\s+(\S+ \S+|-)"
                 r"\s+(\S.*)$")


def visits_in(text, region):
    """The visits column of a region's first row in a terminal table."""
    for line in text.splitlines():
        m = ROW.match(line)
        if m and m.group(7) == region:
            return int(m.group(5).replace(",", ""))
    raise AssertionError("%s not in the report" % region)


def test_terminal_report_known_counts(both):
    out = report(both)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    text = out.stdout
    assert text.startswith("scorep report: %s\n" % both)
    assert "  program  report_work.py" in text
    assert "1 process, 1 thread;" in text
    for region, visits in KNOWN.items():
        assert visits_in(text, region) == visits, region
    # nap sleeps 0.2 s: the largest exclusive time, first row of the first table
    first = text.split("Top 15 regions by exclusive time")[1].splitlines()[2]
    assert first.endswith("__main__:nap")
    assert "Threads" in text and "MainThread" in text
    assert "no trace buffer flush during the run" in text
    assert re.search(r"- [\d.]+ [mu]s \([\d.]+%\) of the run is outside any recorded function", text)
    assert "trace: " in text and " events, " in text
    assert "missing" not in text


def test_trees_from_profile_and_trace_agree(both):
    """The C reader's call tree (from events) and the profile agree: same call paths,
    visits, and times within 1 us (both come from the same timestamps)."""
    prof = Experiment(both, "profile").tree
    exp = Experiment(both, "trace")
    tree = exp.tree
    assert tree.source == "trace" and prof.source == "profile"

    def paths(t):
        out = {}
        for n in t.preorder():
            key = tuple(m.label for m in n.path())
            out[key] = (sum(t.visits[n.id]), sum(t.incl[n.id]))
        return out
    a, b = paths(prof), paths(tree)
    assert set(a) == set(b)
    for key in a:
        assert a[key][0] == b[key][0], key
        assert abs(a[key][1] - b[key][1]) < 1e-6, (key, a[key], b[key])
    flat = {s.region.name: s for s in tree.flat()}
    for region, visits in KNOWN.items():
        assert flat[region].visits == visits
    assert flat["__main__:nap"].incl >= 0.02
    # recursion counts once: the inclusive time of recurse is its outermost call's
    outer = [n for n in tree.nodes if n.region.name == "__main__:recurse" and not n.recursive]
    assert len(outer) == 1 and flat["__main__:recurse"].incl == sum(tree.incl[outer[0].id])


def test_pstats_opens_the_prof(both, tmp_path):
    out = report(both, "-o", tmp_path / "p.prof")
    assert out.returncode == 0, out.stderr
    assert "wrote %s" % (tmp_path / "p.prof") in out.stdout
    st = pstats.Stats(str(tmp_path / "p.prof"))
    by_name = {k[2]: (k, v) for k, v in st.stats.items()}
    src = program("report_work.py")
    for region, visits in KNOWN.items():
        key, (cc, nc, tt, ct, callers) = by_name[region]
        assert key[0] == src and nc == visits, region
    key, (cc, nc, tt, ct, callers) = by_name["__main__:recurse"]
    assert (cc, nc) == (1, 6)  # 6 calls, 1 primitive: pstats prints 6/1
    assert key[1] == 24  # first line of `def recurse`
    leaf_callers = by_name["__main__:leaf"][1][4]
    assert list(leaf_callers) == [by_name["__main__:branch"][0]]
    assert leaf_callers[by_name["__main__:branch"][0]][:2] == (12, 12)
    nap = by_name["__main__:nap"][1]
    assert 0.02 <= nap[2] <= nap[3] < 1.0
    assert st.total_calls == sum(v[1] for v in st.stats.values())
    # the pstats command line prints it too
    text = subprocess.run([sys.executable, "-c", "import pstats; pstats.Stats(%r)"
                           ".sort_stats('tottime').print_stats(3)" % str(tmp_path / "p.prof")],
                          capture_output=True, text=True)
    assert text.returncode == 0 and "report_work.py:28(__main__:nap)" in text.stdout
    assert "6/1" in subprocess.run(
        [sys.executable, "-c", "import pstats; pstats.Stats(%r).print_stats('recurse')"
         % str(tmp_path / "p.prof")], capture_output=True, text=True).stdout
    with open(tmp_path / "p.prof", "rb") as f:
        assert isinstance(marshal.load(f), dict)


def test_collapsed_stacks(both, tmp_path):
    out = report(both, "-o", tmp_path / "s.collapsed")
    assert out.returncode == 0, out.stderr
    lines = (tmp_path / "s.collapsed").read_text().splitlines()
    stacks = {}
    for line in lines:
        stack, value = line.rsplit(" ", 1)
        assert re.fullmatch(r"\d+", value) and int(value) > 0
        assert ";;" not in stack and "\n" not in stack
        stacks[stack] = int(value)
    leaf = "report_work.py;__main__:<module>;__main__:trunk;__main__:branch;__main__:leaf"
    assert leaf in stacks
    nap = stacks["report_work.py;__main__:<module>;__main__:nap"]
    assert 20_000_000 <= nap < 1_000_000_000
    deepest = max(stacks, key=lambda s: s.count(";"))
    assert deepest.count("__main__:recurse") == 6
    total = Experiment(both).tree.total_time()
    assert abs(sum(stacks.values()) - total * 1e9) < len(stacks) + 1  # rounding per line


def test_speedscope_export(both, tmp_path):
    """With a trace: an evented profile (speedscope's Time Order view) whose calls are
    the trace's, in order; profile only: sampled call paths by exclusive time."""
    out = report(both, "-o", tmp_path / "p.speedscope.json")
    assert out.returncode == 0, out.stderr
    assert "1 evented profile(s)" in out.stdout
    doc = validate_speedscope(tmp_path / "p.speedscope.json")
    assert len(doc["profiles"]) == 1 and doc["profiles"][0]["name"] == "MainThread"
    frames = doc["shared"]["frames"]
    names = [f["name"] for f in frames]
    prof = doc["profiles"][0]
    assert prof["type"] == "evented" and prof["unit"] == "nanoseconds"
    opened = [names[e["frame"]] for e in prof["events"] if e["type"] == "O"]
    for region, visits in KNOWN.items():
        assert opened.count(region) == visits, region
    # time order: trunk's calls (branch, leaf) before recurse before nap
    assert opened.index("__main__:trunk") < opened.index("__main__:recurse") < \
        opened.index("__main__:nap")
    nap = [e["at"] for e in prof["events"] if names[e["frame"]] == "__main__:nap"]
    assert len(nap) == 2 and nap[1] - nap[0] >= 20_000_000
    leaf = names.index("__main__:leaf")
    assert frames[leaf]["file"] == program("report_work.py") and frames[leaf]["line"] == 8
    # --min-duration leaves the short calls out, the nesting stays valid
    out = report(both, "-o", tmp_path / "long.speedscope.json", "--min-duration", "1ms")
    assert out.returncode == 0, out.stderr
    doc = validate_speedscope(tmp_path / "long.speedscope.json")
    names = [f["name"] for f in doc["shared"]["frames"]]
    opened = {names[e["frame"]] for e in doc["profiles"][0]["events"] if e["type"] == "O"}
    assert "__main__:nap" in opened and "__main__:leaf" not in opened

    # profile only: sampled
    out = report(both / "profile.cubex", "-o", tmp_path / "s.speedscope.json")
    assert out.returncode == 0, out.stderr
    assert "1 sampled profile(s)" in out.stdout
    doc = validate_speedscope(tmp_path / "s.speedscope.json")
    names = [f["name"] for f in doc["shared"]["frames"]]
    prof = doc["profiles"][0]
    # samples are root first: every stack starts at the program root
    assert all(names[s[0]] == "report_work.py" for s in prof["samples"])
    nap = names.index("__main__:nap")
    nap_weight = sum(w for s, w in zip(prof["samples"], prof["weights"]) if s[-1] == nap)
    assert nap_weight >= 20_000_000


def test_perfetto_protobuf_trace(both, tmp_path):
    """.pftrace: decoded with the protobuf library that wrote it, it holds a process and
    a thread track, the interned region names with their source, and a begin/end pair
    per call on the thread's track, properly nested, the same calls as the Chrome JSON."""
    from scorep.report.exports.perfetto import message_classes
    path = tmp_path / "t.pftrace"
    out = report(both, "-o", path, "-o", tmp_path / "t.json")
    assert out.returncode == 0, out.stderr
    assert re.match(r"wrote %s \([\d.]+ kB\): (\d+) calls" % re.escape(str(path)), out.stdout)
    trace = message_classes()["Trace"]()
    trace.ParseFromString(path.read_bytes())
    packets = list(trace.packet)
    tracks = [p.track_descriptor for p in packets if p.HasField("track_descriptor")]
    process = [t for t in tracks if t.HasField("process")]
    threads = [t for t in tracks if t.HasField("thread")]
    assert len(process) == 1 and process[0].process.process_name == "report_work.py (Process)"
    assert len(threads) == 1 and threads[0].thread.thread_name == "MainThread"
    assert threads[0].parent_uuid == process[0].uuid
    interned = [p for p in packets if p.HasField("interned_data")]
    assert len(interned) == 1 and interned[0].sequence_flags == 1
    names = {n.iid: n.name for n in interned[0].interned_data.event_names}
    sources = {s.iid: s for s in interned[0].interned_data.source_locations}
    events = [p for p in packets if p.HasField("track_event")]
    assert all(p.trusted_packet_sequence_id == 1 for p in packets)
    assert all(p.sequence_flags == 2 for p in events)  # they use the interned names
    stack, opened = [], []
    last = 0
    for p in events:
        ev = p.track_event
        assert ev.track_uuid == threads[0].uuid and p.timestamp >= last
        last = p.timestamp
        if ev.type == 1:
            stack.append(ev.name_iid)
            opened.append(names[ev.name_iid])
            assert ev.source_location_iid in sources
        else:
            assert ev.type == 2 and stack
            stack.pop()
    assert not stack
    for region, visits in KNOWN.items():
        assert opened.count(region) == visits, region
    leaf = [s for s in sources.values() if s.function_name == "__main__:leaf"][0]
    assert leaf.file_name == program("report_work.py") and leaf.line_number == 8
    chrome = [e["name"] for e in chrome_slices(validate_chrome(tmp_path / "t.json"))]
    assert sorted(chrome) == sorted(opened)
    assert path.stat().st_size < (tmp_path / "t.json").stat().st_size / 2


def test_chrome_json_known_calls(both, tmp_path):
    path = tmp_path / "t.json"
    out = report(both, "-o", path)
    assert out.returncode == 0, out.stderr
    doc = validate_chrome(path)
    xs = chrome_slices(doc)
    counts = {}
    for e in xs:
        counts[e["name"]] = counts.get(e["name"], 0) + 1
    for region, visits in KNOWN.items():
        assert counts[region] == visits
    assert doc["displayTimeUnit"] == "ns" and doc["otherData"]["exporter"] == "scorep-report"
    meta = [e for e in doc["traceEvents"] if e["ph"] == "M"]
    assert {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1,
            "args": {"name": "MainThread"}} in meta
    assert any(e["name"] == "process_name" and e["args"]["name"] == "report_work.py (Process)"
               for e in meta)
    nap = [e for e in xs if e["name"] == "__main__:nap"][0]
    assert nap["dur"] >= 20000.0 and nap["cat"] == "python"
    # file and line of the function in the args (Perfetto shows them with the slice)
    assert nap["args"] == {"file": program("report_work.py"), "line": 28}
    # the calls of leaf lie inside their branch
    branches = [e for e in xs if e["name"] == "__main__:branch"]
    for e in xs:
        if e["name"] == "__main__:leaf":
            assert any(b["ts"] <= e["ts"] and e["ts"] + e["dur"] <= b["ts"] + b["dur"] + 0.001
                       for b in branches)
    assert "wrote %s" % path in out.stdout and "%d calls" % len(xs) in out.stdout


def test_chrome_json_caps(both, tmp_path):
    path = tmp_path / "cap.json"
    out = report(both, "-o", path, "--max-size", "1k")
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("scorep-report: %s would hold "
                                                                  % path)
    assert "--min-duration" in out.stderr and "--force" in out.stderr
    assert not path.exists() and not list(tmp_path.glob(".scorep-report-*"))
    # the suggested depth cap fits, and --max-depth 1 keeps <module> and its callees
    out = report(both, "-o", path, "--max-depth", "1")
    assert out.returncode == 0, out.stderr
    names = {e["name"] for e in chrome_slices(validate_chrome(path))}
    assert {"__main__:<module>", "__main__:trunk", "__main__:recurse", "__main__:nap"} <= names
    assert "__main__:leaf" not in names and "__main__:branch" not in names
    out = report(both, "-o", path, "--min-duration", "10ms")
    assert out.returncode == 0, out.stderr
    names = [e["name"] for e in chrome_slices(validate_chrome(path))]
    assert "__main__:nap" in names and "__main__:leaf" not in names
    out = report(both, "-o", path, "--max-size", "1k", "--force")
    assert out.returncode == 0 and path.stat().st_size > 1000


def test_dot_png_svg_through_graphviz(both, tmp_path):
    out = report(both, "-o", tmp_path / "g.dot", "-o", tmp_path / "g.svg", "-o",
                 tmp_path / "g.png", "--node-threshold", "0")
    assert out.returncode == 0, out.stderr
    dot = (tmp_path / "g.dot").read_text()
    assert "__main__:leaf\\n" in dot and "12\xd7" in dot and "->" in dot
    # recursion (recurse -> recurse) is counted once: no edge above 100%
    edge_pcts = [float(x) for x in re.findall(r' -> \d+ \[.*?label="([\d.]+)%', dot)]
    assert edge_pcts and max(edge_pcts) <= 100.0
    check = subprocess.run(["dot", "-Tplain", str(tmp_path / "g.dot")], capture_output=True,
                           text=True)
    assert check.returncode == 0 and check.stderr == ""
    plain_nodes = [l for l in check.stdout.splitlines() if l.startswith("node ")]
    assert any("__main__:leaf" in l for l in plain_nodes)
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (tmp_path / "g.svg").read_text()
    assert "<svg" in svg and "__main__:branch" in svg
    # the default threshold (0.5% of the time) leaves the microsecond calls out
    out = report(both, "-o", tmp_path / "small.dot")
    assert out.returncode == 0
    small = (tmp_path / "small.dot").read_text()
    assert "__main__:nap" in small and "__main__:leaf" not in small


def test_per_rank_outputs(both, tmp_path):
    out = report(both, "-o", tmp_path / "cpu_{rank}.prof")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "cpu_0.prof").exists()
    pstats.Stats(str(tmp_path / "cpu_0.prof"))


def test_profile_only(tmp_path):
    exp = measure(tmp_path, "prof_only")
    out = report(exp)
    assert out.returncode == 0, out.stderr
    assert "missing  no trace (traces.otf2): tracing was off" in out.stdout
    assert visits_in(out.stdout, "__main__:leaf") == 12
    out = report(exp, "-o", tmp_path / "t.json")
    assert out.returncode == 1
    assert out.stderr == ("scorep-report: %s needs a trace, and %s has only a profile (run with "
                          "SCOREP_ENABLE_TRACING=true)\n" % (tmp_path / "t.json", exp))
    assert not (tmp_path / "t.json").exists()
    out = report(exp, "--source", "trace")
    assert out.returncode == 1 and "has no trace" in out.stderr


def test_trace_only(tmp_path):
    exp = measure(tmp_path, "trace_only", SCOREP_ENABLE_TRACING="true",
                  SCOREP_ENABLE_PROFILING="false")
    assert not (exp / "profile.cubex").exists()
    out = report(exp)
    assert out.returncode == 0, out.stderr
    assert "missing  no profile (profile.cubex)" in out.stdout
    assert "(call tree)" in out.stdout.splitlines()[2]
    for region, visits in KNOWN.items():
        assert visits_in(out.stdout, region) == visits
    out = report(exp, "-o", tmp_path / "t.prof")
    assert out.returncode == 0
    by_name = {k[2]: v for k, v in pstats.Stats(str(tmp_path / "t.prof")).stats.items()}
    assert by_name["__main__:leaf"][1] == 12 and by_name["__main__:recurse"][:2] == (1, 6)
    out = report(exp / "traces.otf2")  # the anchor file works as well
    assert out.returncode == 0 and visits_in(out.stdout, "__main__:leaf") == 12


def test_threads_breakdown(tmp_path):
    exp = measure(tmp_path, "threads", "threads.py", SCOREP_ENABLE_TRACING="true")
    out = report(exp)
    assert out.returncode == 0, out.stderr
    assert "1 process, 3 threads;" in out.stdout
    threads = out.stdout.split("\nThreads\n")[1].split("\n\n")[0].splitlines()[1:]
    assert sorted(l.split()[0] for l in threads) == ["MainThread", "worker-0", "worker-1"]
    assert visits_in(out.stdout, "__main__:work") == 11
    out = report(exp, "-o", tmp_path / "t.json", "-o", tmp_path / "t.speedscope.json")
    assert out.returncode == 0, out.stderr
    doc = validate_chrome(tmp_path / "t.json")
    tnames = {e["args"]["name"] for e in doc["traceEvents"]
              if e["ph"] == "M" and e["name"] == "thread_name"}
    assert tnames == {"MainThread", "worker-0", "worker-1"}
    work = [e for e in chrome_slices(doc) if e["name"] == "__main__:work"]
    assert len(work) == 11 and len({e["tid"] for e in work}) == 3
    ss = validate_speedscope(tmp_path / "t.speedscope.json")
    assert sorted(p["name"] for p in ss["profiles"]) == ["MainThread", "worker-0", "worker-1"]


def test_diff_terminal(tmp_path):
    a = measure(tmp_path, "a", args=["4"])
    b = measure(tmp_path, "b", args=["8"])
    out = report("diff", a, b)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "  A  %s  (report_work.py," % a in text and "  B  %s" % b in text
    visits = text.split("Regions whose visits changed")[1]
    rows = {l.split()[-1]: l.split()[:3] for l in visits.splitlines()[2:] if l.strip()}
    assert rows["__main__:leaf"] == ["12", "24", "+12"]
    assert rows["__main__:branch"] == ["4", "8", "+4"]
    assert "__main__:nap" not in rows  # once in both


def test_usage_and_error_paths(tmp_path, both):
    cases = [
        (["/nonexistent/exp"], 1, "scorep-report: /nonexistent/exp: no such file or directory\n"),
        ([tmp_path], 1, None),
        ([both, "-o", tmp_path / "x.xyz"], 2, None),
        ([both, "--min-duration", "fast"], 2, None),
        ([both, "-o", tmp_path / "nodir" / "x.prof"], 1, None),
        ([both, "--source", "nothing"], 2, None),
        (["diff", both], 2, None),
        (["diff", both, both, "-o", tmp_path / "d.json"], 2, None),
    ]
    for args, status, message in cases:
        out = report(*args)
        assert out.returncode == status, (args, out.stderr)
        assert out.stderr.startswith("scorep-report: "), out.stderr
        assert out.stderr.count("\n") == 1, out.stderr
        assert "Traceback" not in out.stderr
        if message:
            assert out.stderr == message
    out = report(tmp_path)
    assert "holds neither a profile (profile.cubex) nor a trace" in out.stderr
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "profile.cubex").write_bytes(b"not a tar")
    out = report(broken)
    assert out.returncode == 1 and out.stderr.startswith("scorep-report: %s" % broken)
    assert out.stderr.count("\n") == 1
    (broken / "profile.cubex").unlink()
    (broken / "traces.otf2").write_text("garbage")
    out = report(broken)
    assert out.returncode == 1 and out.stderr.count("\n") == 1, out.stderr
    assert report("--help").returncode == 0


def test_unreadable_trace_falls_back_to_the_profile(tmp_path, both):
    """A truncated trace (a crash while writing): the reports that the profile can make
    still come, with one warning; the trace exports fail with one line."""
    import shutil
    exp = tmp_path / "exp"
    shutil.copytree(both, exp)
    evt = exp / "traces" / "0.evt"
    evt.write_bytes(evt.read_bytes()[:100])
    out = report(exp)
    assert out.returncode == 0
    assert out.stderr.startswith("scorep-report: warning: the trace is not read (%s: reading "
                                 "the events of location 0 failed: " % (exp / "traces.otf2"))
    assert out.stderr.count("\n") == 1
    assert "missing  the trace could not be read" in out.stdout
    assert visits_in(out.stdout, "__main__:leaf") == 12
    out = report(exp, "-o", tmp_path / "t.json")
    assert out.returncode == 1 and out.stderr.count("\n") == 1
    assert not (tmp_path / "t.json").exists()


def test_console_script_entry_point(both):
    """tools/install.py installs `scorep-report` as `from scorep.report import main`."""
    code = ("import sys; from scorep.report import main; sys.exit(main([%r, '--top', '3']))"
            % str(both))
    env = dict(os.environ, PYTHONPATH=str(__import__("conftest").SRC))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0 and "Top 3 regions by exclusive time" in out.stdout


def test_manifest_notes_are_reported(tmp_path, both):
    """What the measurement wrote about lost data into MANIFEST.md shows in the report."""
    import shutil
    exp = tmp_path / "exp"
    shutil.copytree(both, exp)
    with open(exp / "MANIFEST.md", "a") as f:
        f.write("\n## Measurement\n\n- 17 call(s) deeper than SCOREP_PROFILING_MAX_CALLPATH_DEPTH=128"
                " were folded into their deepest call path\n- 2 trace buffer flush(es)\n")
    text = report(exp).stdout
    assert ("! MANIFEST.md: 17 call(s) deeper than SCOREP_PROFILING_MAX_CALLPATH_DEPTH=128 were "
            "folded into their deepest call path") in text
    assert "! MANIFEST.md: 2 trace buffer flush(es)" in text
    assert "MANIFEST.md: `profile.cubex`" not in text  # the file list is no note


def test_notes_the_measurement_writes_reach_the_report(tmp_path):
    exp = tmp_path / "exp"
    out = run_scorep(sys.executable, [program("recursion.py")], exp,
                     SCOREP_PROFILING_MAX_CALLPATH_DEPTH="10")
    assert out.returncode == 0, out.stderr
    text = report(exp).stdout
    flat = " ".join(text.split())
    assert ("! MANIFEST.md: 84 call(s) deeper than SCOREP_PROFILING_MAX_CALLPATH_DEPTH=10 are "
            "summed up in COLLAPSE call paths of the profile (as Score-P does)") in flat
    assert ("! call paths reach SCOREP_PROFILING_MAX_CALLPATH_DEPTH=10: deeper calls are summed "
            "up in COLLAPSE call paths") in flat


def test_stack_exports_of_deep_recursion_are_bounded(tmp_path):
    """Each .collapsed line and speedscope sample repeats its whole call path: a 50 000-deep
    profile ran past 60 s at 10 GB. The size is estimated first and refused over
    --max-size in one line, as the Chrome export is."""
    script = tmp_path / "deep.py"
    script.write_text("import sys\nsys.setrecursionlimit(10000)\n"
                      "def down(n):\n    return 0 if n == 0 else down(n - 1)\n"
                      "down(3000)\n")
    exp = tmp_path / "exp"
    out = run_scorep(sys.executable, [script], exp, SCOREP_PROFILING_MAX_CALLPATH_DEPTH="4000")
    assert out.returncode == 0, out.stderr
    for name in ("x.collapsed", "x.speedscope.json"):
        target = tmp_path / name
        out = run([sys.executable, "-m", "scorep.report", exp, "-o", target, "--max-size", "1M"],
                  env=scorep_env())
        assert out.returncode == 1 and not target.exists()
        assert out.stderr.startswith("scorep-report: %s would hold ~" % target)
        assert "call paths up to 3003 deep" in out.stderr and out.stderr.count("\n") == 1
        out = run([sys.executable, "-m", "scorep.report", exp, "-o", target], env=scorep_env())
        assert out.returncode == 0 and target.stat().st_size > 1 << 20


def test_terminal_fits_80_columns_line_by_line(both):
    """COLUMNS=80: every line fits, no name is cut (a long one moves whole to the next
    line), and the tables keep their columns."""
    out = report(both, columns=80)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), [l for l in lines if len(l) > 80]
    assert "~" not in out.stdout  # the old middle cut
    number = r"(?:[\d.]+ (?:s|ms|us|ns)|0 s)"
    expected = [
        r"scorep report: %s$" % re.escape(str(both)),
        r"  program  report_work\.py$",
        r"  read     profile profile\.cubex \(call tree\) \+ trace traces\.otf2 \([\d,]+ "
        r"events\)$",
        r"  ran      1 process, 1 thread; %s of thread time, [\d,]+ calls$" % number,
        r"$",
        r"Top 15 regions by exclusive time \(own time, callees excluded\)$",
        r"      excl  excl%     incl  incl%     visits per visit  region$",
    ]
    for i, pattern in enumerate(expected):  # the header, line by line
        assert re.match(pattern, lines[i]), (i, lines[i], pattern)
    # each row: the six columns at fixed places, then the name; a name that does not
    # fit follows whole on the next line, indented
    row = re.compile(r"  ( {0,7}%s) ( {0,5}[\d.]+%%) ( {0,7}%s) ( {0,5}[\d.]+%%) ( {0,9}[\d,]+) "
                     r"( {0,8}%s)(?:  (\S+))?$" % (number, number, number))
    table = lines[7:lines.index("", 7)]
    named = []
    for i, line in enumerate(table):
        m = row.match(line)
        if m:
            assert len(m.group(1)) == 8 and len(m.group(6)) == 9, line
            named.append(line if m.group(7) else line + "  " + table[i + 1].strip())
        else:
            assert re.match(r"      \S+$", line) and row.match(table[i - 1]), line
    assert len(named) >= 10
    assert named[0].endswith("  __main__:nap")
    assert [l for l in table if l.endswith("  __main__:leaf")][0].split()[6] == "12"
    assert "Threads" in lines
    t = lines.index("Threads")
    assert re.match(r"  thread +time  time% +calls  busiest region \(exclusive time\)$", lines[t + 1])
    assert re.match(r"  MainThread +%s +100\.0%% +[\d,]+  __main__:nap \(%s\)$" % (number, number),
                    lines[t + 2])
    # narrower: the per-visit column goes first, the names stay whole
    narrow = report(both, columns=60).stdout.splitlines()
    assert all(len(line) <= 60 for line in narrow)
    assert "per visit" not in "\n".join(narrow) and any(
        l.endswith("  __main__:<module>") for l in narrow)


def test_terminal_colour_on_a_terminal_only(both):
    """Colour when stdout is a terminal, none with NO_COLOR or in a pipe; --color forces."""
    import pty
    from conftest import scorep_env as env_of

    def on_tty(**extra):
        env = env_of()
        env.update(COLUMNS="100", PYTHONPATH=str(__import__("conftest").SRC), **extra)
        env.pop("NO_COLOR", None)
        env.update(extra)
        master, slave = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "scorep.report", str(both)], env=env,
                                stdout=slave, stderr=subprocess.PIPE)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        proc.wait(timeout=60)
        os.close(master)
        return b"".join(chunks).decode()

    coloured = on_tty()
    assert "\x1b[1mscorep report: " in coloured and "\x1b[36m__main__:nap\x1b[0m" in coloured
    assert "\x1b[" not in on_tty(NO_COLOR="1")
    assert "\x1b[" not in report(both).stdout  # a pipe
    forced = report(both, "--color", "always", NO_COLOR="1").stdout
    assert "\x1b[1mTop 15 regions" in forced
    plain = re.sub(r"\x1b\[[\d;]*m", "", forced)
    assert plain == report(both).stdout  # colour changes no character


def test_diff_puts_the_regressed_function_first(tmp_path):
    """process() got slower because it calls a new function: process comes first, with
    validate listed under it as new; tiny changes are marked as noise."""
    a = measure(tmp_path, "a", "regression.py", ["old"])
    b = measure(tmp_path, "b", "regression.py", ["new"])
    out = report("diff", a, b, columns=80)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)
    head = [i for i, l in enumerate(lines) if l.lstrip().startswith("change ")][0]
    first = lines[head + 1].split()
    assert first[-1] == "__main__:process" and first[0].startswith("+"), lines[head + 1]
    assert float(first[0][1:]) >= 25 and first[1] == "ms"  # validate's 30 ms, here once
    assert lines[head + 2].split()[-5:] == ["+", "__main__:validate", "(only", "in", "B)"]
    assert "new" in lines[head + 2].split()
    # main and <module> only pass validate's time on: small own change, marked noise
    rows = {l.split()[-1]: l for l in lines[head + 3:] if l.strip() and "(only" not in l}
    assert rows["__main__:main"].split()[0].startswith("~")
    # (<module> too, unless start-up on a loaded machine took milliseconds longer in one run)
    html = tmp_path / "d.html"
    assert report("diff", a, b, "-o", html).returncode == 0
    table = html.read_text().split('id="region-table"')[1]
    names = re.findall(r'<td class="name" data-sort="([^"]+)"', table)
    assert names[:2] == ["__main__:process", "__main__:validate"]


def test_same_name_regions_are_told_apart_by_their_line(tmp_path):
    """Two <genexpr> of one module: :line in the terminal report, the stacks, the diff."""
    exp = measure(tmp_path, "exp", "twin_genexpr.py")
    text = report(exp).stdout
    assert "__main__:<genexpr>:3" in text and "__main__:<genexpr>:4" in text
    assert visits_in(text, "__main__:<genexpr>:3") == 501
    assert visits_in(text, "__main__:<genexpr>:4") == 1501
    assert re.search(r"  __main__:<genexpr>$", text, re.M) is None
    assert report(exp, "-o", tmp_path / "s.collapsed").returncode == 0
    lines = [l.rsplit(" ", 1)[0] for l in (tmp_path / "s.collapsed").read_text().splitlines()]
    assert len(lines) == len(set(lines))  # no duplicate stack lines to be added up
    assert any(l.endswith(";__main__:<genexpr>:3") for l in lines)
    assert any(l.endswith(";__main__:<genexpr>:4") for l in lines)
    out = report("diff", exp, exp)
    assert "__main__:<genexpr>:3" in out.stdout and "__main__:<genexpr>:4" in out.stdout


def test_load_balance_compares_only_the_threads_that_run_a_region(tmp_path):
    """threads.py: worker runs in the two workers only: its statistics are over those two,
    its coverage 2 of 3, and it is not ranked imbalanced for the thread that never ran it."""
    from scorep.report.analysis import load_balance
    exp = measure(tmp_path, "threads", "threads.py")
    lb = load_balance(Experiment(exp).tree, top=50)
    assert lb["unit"] == "thread" and len(lb["names"]) == 3
    rows = {r["stat"].region.name: r for r in lb["regions"]}
    worker = rows["__main__:worker"]
    ran = [lb["names"][u] for u in worker["ran"]]
    assert sorted(ran) == ["worker-0", "worker-1"]
    lo, mean, hi, sd = worker["stats"]
    assert lo > 0 and hi / mean < 2.0  # over the threads that run it: no 0 minimum
    main_only = rows["__main__:<module>"]
    assert [lb["names"][u] for u in main_only["ran"]] == ["MainThread"]
    assert main_only["stats"][3] == 0.0  # one thread: nothing to compare


def test_the_readme_idiom_after_several_runs_reports_the_newest(tmp_path):
    """`scorep-report scorep-*` after two runs (the shell passes both) reports the newer one
    and says so; without an experiment the newest of the current directory; `diff` without
    experiments compares the two newest, the older as A."""
    older = measure(tmp_path, "scorep-b-older", "regression.py", ["old"])
    newer = measure(tmp_path, "scorep-a-newer", "regression.py", ["new"])
    # modification times decide, not names: the older run sorts first by name here
    os.utime(older / "profile.cubex", (1_000_000_000, 1_000_000_000))
    out = report(older, newer, "--top", "3", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stderr == "scorep-report: 2 experiments given, reporting the newest: %s\n" % newer
    assert out.stdout.splitlines()[0] == "scorep report: %s" % newer
    assert "__main__:validate" in out.stdout  # only the new version calls it

    out = report("--top", "3", cwd=tmp_path)
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout.splitlines()[0] == "scorep report: %s" % newer

    out = report("diff", cwd=tmp_path)
    assert (out.returncode, out.stderr) == (0, "")
    assert [line.split()[:2] for line in out.stdout.splitlines()[1:3]] == [
        ["A", str(older)], ["B", str(newer)]]


@pytest.mark.parametrize("args,message", [
    ([], "scorep-report: no experiment given, and the current directory has no scorep-*/ "
         "experiment (a directory with profile.cubex or traces.otf2) (see scorep-report --help)\n"),
    (["diff", "x"], "scorep-report: diff compares two experiments (got 1) "
                    "(see scorep-report --help)\n"),
    (["nothing-a", "nothing-b"], "scorep-report: none of the 2 paths given is an experiment (a "
                                 "directory with profile.cubex or traces.otf2, or one of those "
                                 "files)\n"),
])
def test_no_experiment_to_choose_is_one_line(tmp_path, args, message):
    out = report(*args, cwd=tmp_path)
    assert (out.returncode, out.stdout, out.stderr) == (2 if "--help" in message else 1, "",
                                                        message)


def test_trace_buffer_flushes_are_said_once(tmp_path):
    """The trace's flushes are one warning, not that of the trace's scan and the
    measurement's MANIFEST.md line on the same flushes both."""
    exp = tmp_path / "exp"
    out = run_scorep(sys.executable, [program("many_calls.py")], exp, cwd=tmp_path,
                     SCOREP_ENABLE_TRACING="true", SCOREP_TOTAL_MEMORY="1M")
    assert out.returncode == 0 and "flushed to disk" in out.stderr
    assert "the trace buffers were flushed" in (exp / "MANIFEST.md").read_text()
    text = report(exp).stdout
    assert text.count("flushed to disk") == 1, text
