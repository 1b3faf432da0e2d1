"""The reports' C reader (scorep._reader) against the OTF2 library's Python reader
(python3-otf2, the `Trace` of conftest): the same calls with the same times, per-location
statistics, the timeline's choice of the longest calls, buffer flushes, and memory that
does not grow with the number of events."""

import array
import subprocess
import sys

import pytest

from conftest import SRC, Trace, program, run_scorep
from test_report_support import report, validate_chrome

sys.path.insert(0, str(SRC))
from scorep import _reader  # noqa: E402


def measure(tmp_path, name, script, **env):
    exp = tmp_path / name
    out = run_scorep(sys.executable, [program(script)], exp, cwd=tmp_path,
                     SCOREP_ENABLE_TRACING="true", **env)
    assert out.returncode == 0, out.stderr
    return exp


def to_ns(t, clock):
    return round((t - clock.global_offset) * 1e9 / clock.timer_resolution)


def c_calls(exp, **kwargs):
    trace = _reader.open(str(exp / "traces.otf2"))
    defs = trace.definitions()
    scan = trace.scan(timeline_limit=kwargs.pop("limit", 1 << 20), **kwargs)
    cols = scan.slices()
    start, dur = array.array("Q", cols["start"]), array.array("Q", cols["dur"])
    region, loc = array.array("I", cols["region"]), array.array("I", cols["loc"])
    depth = array.array("I", cols["depth"])
    names = [r[0] if r else None for r in defs["regions"]]
    lnames = [l[1] for l in defs["locations"]]
    calls = sorted((lnames[loc[i]], names[region[i]], depth[i], start[i], dur[i])
                   for i in range(len(start)))
    return defs, scan, calls


def test_same_calls_as_the_otf2_python_reader(tmp_path):
    exp = measure(tmp_path, "threads", "threads.py")
    py = Trace(exp)
    py.check_nesting()
    expected = []
    for location in py.locations:
        for name, depth, enter, leave in py.calls(location):
            expected.append((location, name, depth, to_ns(enter, py.clock),
                             to_ns(leave, py.clock) - to_ns(enter, py.clock)))
    expected.sort()
    defs, scan, calls = c_calls(exp)
    assert len(calls) == len(expected) > 30
    for got, want in zip(calls, expected):
        assert got[:3] == want[:3]
        # ns rounding of ticks may differ by one
        assert abs(got[3] - want[3]) <= 1 and abs(got[4] - want[4]) <= 2, (got, want)
    stats = scan.locations()
    by_name = dict(zip([l[1] for l in defs["locations"]], stats))
    for location in py.locations:
        assert by_name[location]["enters"] == len(py.of("Enter", location=location))
        assert by_name[location]["leaves"] == len(py.of("Leave", location=location))
        assert by_name[location]["unmatched_leaves"] == 0 and by_name[location]["unclosed"] == 0
    assert scan.summary["events"] == len(py.events)
    assert [l[3] for l in defs["locations"]] == [py.location_event_counts[l[1]]
                                                 for l in defs["locations"]]
    assert defs["resolution"] == py.clock.timer_resolution
    assert defs["offset"] == py.clock.global_offset


def test_timeline_keeps_the_longest_calls(tmp_path):
    exp = measure(tmp_path, "work", "report_work.py")
    _, _, everything = c_calls(exp)
    defs, scan, kept = c_calls(exp, limit=8)
    threshold = scan.summary["threshold_ns"]
    assert 0 < len(kept) <= 12 and threshold > 0
    assert all(c[4] >= threshold for c in kept)
    assert sorted(kept) == sorted(c for c in everything if c[4] >= threshold)
    assert "__main__:nap" in {c[1] for c in kept}
    # (which of the many short calls are dropped depends on the machine's load: that the
    # kept ones are exactly those above the threshold is the property)
    assert len(kept) < len(everything)
    # the histogram counts every call, whatever the timeline kept
    counts = array.array("Q", scan.histogram()[0])
    assert sum(counts) == scan.summary["calls"] == len(everything)
    # depth limits and minimum durations apply before the cap
    _, scan2, shallow = c_calls(exp, timeline_max_depth=1)
    assert shallow and max(c[2] for c in shallow) == 1
    _, scan3, longer = c_calls(exp, timeline_min_ns=1_000_000)
    assert {c[1] for c in longer} >= {"__main__:nap", "__main__:<module>"}
    assert all(c[4] >= 1_000_000 for c in longer)


def test_bucket_bounds():
    for ns in (0, 1, 3, 4, 5, 7, 8, 100, 1000, 12345, 10**9, 10**12):
        b = _reader.bucket(ns)
        assert _reader.bucket_floor(b) <= ns
        assert b + 1 >= _reader.BUCKETS or _reader.bucket_floor(b + 1) > ns


def test_buffer_flushes_are_reported(tmp_path):
    """1 MB of trace memory for 400 000 events: the measurement flushes mid-run; every
    report says how often and how long the program stood still."""
    exp = measure(tmp_path, "flush", "many_calls.py", SCOREP_TOTAL_MEMORY="1M")
    py_flushes = subprocess.run(["otf2-print", str(exp / "traces.otf2")], capture_output=True,
                                text=True).stdout.count("BUFFER_FLUSH")
    assert py_flushes >= 2
    out = report(exp)
    assert out.returncode == 0, out.stderr
    assert ("! the trace buffers were flushed to disk %d time(s) during the run: the program "
            "stood still for " % py_flushes) in out.stdout
    assert "raise SCOREP_TOTAL_MEMORY (now 1048576)" in out.stdout
    path = tmp_path / "f.json"
    out = report(exp, "-o", path, "--min-duration", "20us")
    assert out.returncode == 0, out.stderr
    assert ", %d buffer flushes" % py_flushes in out.stdout
    doc = validate_chrome(path)
    flushes = [e for e in doc["traceEvents"] if e.get("name") == "trace buffer flush"]
    assert len(flushes) == py_flushes and all(e["cat"] == "measurement" for e in flushes)
    lanes = {e["tid"] for e in flushes}
    assert lanes == {1000001}
    assert {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1000001,
            "args": {"name": "MainThread: trace buffer flushes"}} in doc["traceEvents"]


def test_memory_does_not_grow_with_events(tmp_path):
    """Scanning 400 000 events with the timeline capped needs a few MB, not the
    ~40 bytes per event a list of events would."""
    exp = measure(tmp_path, "many", "many_calls.py")
    code = """
import resource, sys
sys.path.insert(0, %r)
from scorep import _reader
t = _reader.open(%r)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
s = t.scan(timeline_limit=1000, density_bins=1024, message_limit=1000, flush_limit=100,
           durations_path=%r)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(s.summary["events"], s.summary["calls"], after - before)
""" % (str(SRC), str(exp / "traces.otf2"), str(tmp_path / "durations"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    events, calls, grown_kb = map(int, out.stdout.split())
    assert events >= 400000
    assert grown_kb < 12 * 1024, grown_kb
    # the durations file holds one u64 per call, in enter order
    assert calls > 200000
    assert (tmp_path / "durations").stat().st_size == 8 * calls


def test_reader_errors_are_one_line(tmp_path):
    with pytest.raises(RuntimeError) as info:
        _reader.open(str(tmp_path / "none.otf2"))
    assert "\n" not in str(info.value) and "not an OTF2 archive" in str(info.value)
    trace = _reader.open(str(measure(tmp_path, "w", "report_work.py") / "traces.otf2"))
    with pytest.raises(RuntimeError) as info:
        trace.scan(durations_path=str(tmp_path / "no" / "such" / "dir"))
    assert "cannot create" in str(info.value)
