"""Metrics per region (SCOREP_METRIC_RUSAGE, SCOREP_METRIC_PERF, SCOREP_METRIC_PAPI, --memory):
read at every enter and leave, written as Score-P writes them: dense metrics per call path in
profile.cubex (read back with our CUBE reader) and Metric records before every Enter and
Leave in the trace (read back with the OTF2 library's reader, python3-otf2).

The program (tests/programs/metrics_app.py) has a busy function, one that keeps 10 MB of
bytes objects, one that touches 64 MB of fresh memory, garbage collections and a thread."""

import json
import os
import subprocess
import sys

import pytest

from conftest import program, python_version, run, run_scorep
from scorep import cube

PYTHON = sys.executable
APP = program("metrics_app.py")
MB = 1024 * 1024


def profile_of(experiment):
    return cube.read(os.path.join(str(experiment), "profile.cubex"))


def node(profile, name, thread="MainThread"):
    """(cnode id, location id) of the first call path of region `name`."""
    location = next(l.id for l in profile.locations if l.name == thread)
    for c in profile.cnodes:
        if c.region.name == name and not c.parameters and \
                profile.value("visits", c.id, location, inclusive=False):
            return c.id, location
    raise AssertionError("no call path of %s on %s" % (name, thread))


def metric_value(profile, metric, name, thread="MainThread"):
    cnode, location = node(profile, name, thread)
    return profile.value(metric, cnode, location)


def times_of(stdout):
    """The program's own wall and thread CPU time per function (argument `times`)."""
    times = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 3:
            times[parts[0]] = (float(parts[1]), float(parts[2]))
    return times


@pytest.fixture(scope="module")
def rusage_run(tmp_path_factory):
    """Profile and trace with rusage (per thread and per process) and the Python memory
    metrics, on Debian's python3."""
    exp = tmp_path_factory.mktemp("metrics") / "exp"
    out = run_scorep(PYTHON, ["--memory", APP, "times"], exp,
                     SCOREP_ENABLE_TRACING="true",
                     SCOREP_METRIC_RUSAGE="ru_utime,ru_stime,ru_minflt",
                     SCOREP_METRIC_RUSAGE_PER_PROCESS="ru_maxrss")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    return exp, out


def test_cube_metric_definitions_as_scorep_writes_them(rusage_run):
    exp, _out = rusage_run
    p = profile_of(exp)
    metrics = {m.uniq_name: m for m in p.metrics}
    # Score-P's scorep_metric_rusage.c: ru_utime in 10^-6 s, ru_maxrss in 2^10 Bytes; the
    # CUBE writer puts the exponent into the unit; all inclusive UINT64 without URL.
    assert [m.uniq_name for m in p.metrics][4:] == [
        "ru_utime", "ru_stime", "ru_minflt", "python_allocated", "python_freed",
        "native_allocated", "native_freed", "native_peak", "ru_maxrss"]
    for name, uom, descr in [("ru_utime", "10^-6 s", "user CPU time used"),
                             ("ru_stime", "10^-6 s", "system CPU time used"),
                             ("ru_minflt", "#", "page reclaims (soft page faults)"),
                             ("ru_maxrss", "2^10 Bytes", "maximum resident set size"),
                             ("python_allocated", "Bytes", None)]:
        m = metrics[name]
        assert (m.disp_name, m.uom, m.dtype, m.type, m.url) == (name, uom, "UINT64",
                                                                "INCLUSIVE", "")
        if descr:
            assert m.descr == descr


def test_user_time_of_a_busy_function(rusage_run):
    """ru_utime of a busy function is at least 90% of its wall time, unless the machine was
    so busy that the thread did not get the CPU: then of the CPU time it got (the
    program's own time.thread_time())."""
    exp, out = rusage_run
    p = profile_of(exp)
    utime = metric_value(p, "ru_utime", "__main__:busy") * 1e-6
    wall = metric_value(p, "time", "__main__:busy")
    assert wall > 0.05
    program_wall, program_cpu = times_of(out.stdout)["busy"]
    if program_cpu >= 0.9 * program_wall:
        assert utime >= 0.9 * wall, (utime, wall)
    else:  # another process had the CPU part of the time
        assert utime >= 0.9 * program_cpu - 0.01, (utime, program_cpu)
    # Inclusive: the caller has at least the callee's time.
    assert metric_value(p, "ru_utime", "__main__:main") >= metric_value(p, "ru_utime",
                                                                      "__main__:busy")


def test_page_faults_grow_for_fresh_memory(rusage_run):
    exp, _out = rusage_run
    p = profile_of(exp)
    pages = 64 * MB // 4096
    assert metric_value(p, "ru_minflt", "__main__:touch") >= 0.9 * pages
    assert metric_value(p, "ru_minflt", "__main__:busy") < 0.05 * pages
    # (The per-process maximum RSS is a high-water mark that a process inherits from the
    # parent it was forked from: how much touch() raised it depends on the test runner's
    # size. Its level is checked in the trace.)


def test_per_process_metrics_only_on_the_first_thread(rusage_run):
    exp, _out = rusage_run
    p = profile_of(exp)
    assert metric_value(p, "ru_utime", "__main__:busy", thread="worker") > 0
    cnode, location = node(p, "__main__:busy", thread="worker")
    assert p.value("ru_maxrss", cnode, location) == 0


def test_python_allocations_against_tracemalloc(python, tmp_path):
    """alloc() keeps 10 MB of bytes objects: at least that many bytes allocated, and
    allocated minus freed is what tracemalloc finds the function kept."""
    out = run([python, APP, "tracemalloc"])
    assert out.returncode == 0, out.stderr
    kept = int(out.stdout.split()[1])
    assert kept >= 10 * 1000 * 1000
    exp = tmp_path / "exp"
    out = run_scorep(python, ["--memory", APP], exp)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "done\n"
    p = profile_of(exp)
    allocated = metric_value(p, "python_allocated", "__main__:alloc")
    freed = metric_value(p, "python_freed", "__main__:alloc")
    assert allocated >= 10 * 1000 * 1000
    assert abs((allocated - freed) - kept) <= 0.02 * kept, (allocated, freed, kept)


def test_gc_collections_are_regions_with_their_generation(python, tmp_path):
    exp = tmp_path / "exp"
    out = run_scorep(python, ["--memory", "--c-calls", APP], exp)
    assert out.returncode == 0, out.stderr
    p = profile_of(exp)
    main = next(l.id for l in p.locations if l.name == "MainThread")
    collect = [c for c in p.cnodes if c.region.name == "__main__:collect"][0]
    # With C calls, the call of the C function gc.collect is a region too (paradigm compiler,
    # also named gc:collect); the collection it makes is inside it.
    calls = [c for c in collect.children if c.region.paradigm.startswith("compiler")]
    assert [c.region.name for c in calls] == ["gc:collect"]
    collect = calls[0]
    gcs = [c for c in collect.children if c.region.name == "gc:collect"]
    assert len(gcs) == 1 and gcs[0].region.paradigm.startswith("user")
    generations = {c.parameters[0][2]: p.value("visits", c.id, main, inclusive=False)
                   for c in gcs[0].children if c.parameters}
    # gc.collect(1) is a collection of generation 1, under the function that asked for it.
    assert generations.get(1, 0) >= 1, generations
    assert gcs[0].children[0].parameters[0][1] == "generation"


def test_trace_metric_records_read_with_otf2(rusage_run):
    """Score-P's tracing substrate: MetricMember definitions, the strict metrics one metric
    class (SYNCHRONOUS_STRICT, CPU), the per-process ones an instance of a synchronous class
    scoped to the process; a Metric event with the Enter's/Leave's time right before each
    Enter and Leave, whose differences are the profile's values."""
    import otf2
    exp, _out = rusage_run
    p = profile_of(exp)
    with otf2.reader.open(str(exp / "traces.otf2")) as reader:
        defs = reader.definitions
        members = [m.name for m in defs.metric_members]
        assert members == ["ru_utime", "ru_stime", "ru_minflt", "python_allocated",
                           "python_freed", "native_allocated", "native_freed", "native_peak",
                           "ru_maxrss"]
        utime = defs.metric_members[0]
        assert (str(utime.metric_type), str(utime.metric_mode), utime.exponent, utime.unit) \
            == ("MetricType.RUSAGE", "MetricMode.ACCUMULATED_START", -6, "s")
        classes = list(defs.metric_classes)
        assert str(classes[0].occurrence) == "MetricOccurrence.SYNCHRONOUS_STRICT"
        assert str(classes[0].recorder_kind) == "RecorderKind.CPU"
        assert [m.name for m in classes[0].members] == members[:8]
        assert str(classes[1].occurrence) == "MetricOccurrence.SYNCHRONOUS"
        instances = list(defs.metric_instances)
        assert len(instances) == 1 and instances[0].recorder.name == "MainThread"
        pending = {}
        busy_delta = touch_maxrss = None
        enter_values = {}
        for location, event in reader.events:
            kind = type(event).__name__
            if kind == "Metric":
                pending.setdefault(location.name, []).append(event)
                continue
            if kind in ("Enter", "Leave"):
                metrics = pending.pop(location.name, [])
                expected = 2 if location.name == "MainThread" else 1
                assert len(metrics) == expected, (location.name, kind, event.region.name)
                assert all(m.time == event.time for m in metrics)
                strict = [m for m in metrics if m.metric == classes[0]][0]
                if event.region.name == "__main__:touch" and kind == "Leave":
                    per_process = [m for m in metrics if m.metric != classes[0]][0]
                    touch_maxrss = per_process.values[0]  # KiB
                if event.region.name == "__main__:busy" and location.name == "MainThread":
                    if kind == "Enter":
                        enter_values = list(strict.values)
                    else:
                        busy_delta = [b - a for a, b in zip(enter_values, strict.values)]
    assert busy_delta is not None
    assert busy_delta[0] == metric_value(p, "ru_utime", "__main__:busy")
    # The process's maximum RSS after touch() holds the 64 MB it touched (in KiB).
    assert touch_maxrss * 1024 >= 64 * MB
    assert busy_delta[2] == metric_value(p, "ru_minflt", "__main__:busy")


def test_perf_software_events(tmp_path):
    """SCOREP_METRIC_PERF with perf's software events (hardware counters are not available
    in this VM): page-faults of the function touching fresh memory."""
    exp = tmp_path / "exp"
    out = run_scorep(PYTHON, [APP], exp, SCOREP_METRIC_PERF="page-faults,task-clock")
    assert out.returncode == 0, out.stderr
    if "is not recorded" in out.stderr:
        pytest.skip("perf_event_open refuses software events here: " + out.stderr.strip())
    p = profile_of(exp)
    assert metric_value(p, "page_faults", "__main__:touch") >= 0.9 * 64 * MB // 4096
    assert p.metric("page_faults").disp_name == "page-faults"


def test_perf_task_clock_counts_a_busy_function(tmp_path):
    """task-clock (its own perf PMU) in a group led by page-faults counts from the first event:
    a member added to a running group used to count nothing until the thread's next context
    switch, about one run in three. Three runs, each must count busy's CPU time."""
    for attempt in range(3):
        exp = tmp_path / "exp{}".format(attempt)
        out = run_scorep(PYTHON, [APP, "times"], exp,
                         SCOREP_METRIC_PERF="page-faults,task-clock")
        assert out.returncode == 0, out.stderr
        if "is not recorded" in out.stderr:
            pytest.skip("perf_event_open refuses software events here: " + out.stderr.strip())
        p = profile_of(exp)
        # task-clock counts nanoseconds of the thread on a CPU (user mode, as Score-P).
        task_clock = metric_value(p, "task_clock", "__main__:busy") * 1e-9
        wall = metric_value(p, "time", "__main__:busy")
        _program_wall, program_cpu = times_of(out.stdout)["busy"]
        assert task_clock >= 0.8 * program_cpu - 0.01, (attempt, task_clock, program_cpu)
        assert task_clock <= wall * 1.01 + 0.001, (attempt, task_clock, wall)
        assert metric_value(p, "task_clock", "__main__:main") >= task_clock * 1e9


def test_unavailable_counters_one_line_each_and_a_complete_experiment(tmp_path):
    """A hardware counter this machine cannot count (PAPI, or perf's cycles in a VM) is one
    line naming it and why; the run and its experiment are complete without it."""
    exp = tmp_path / "exp"
    out = run_scorep(PYTHON, [APP], exp, SCOREP_ENABLE_TRACING="true",
                     SCOREP_METRIC_PAPI="PAPI_TOT_INS", SCOREP_METRIC_RUSAGE="ru_utime")
    assert out.returncode == 0
    assert out.stdout == "done\n"
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("scorep: SCOREP_METRIC_PAPI: 'PAPI_TOT_INS' is not recorded: ")
    assert "libpapi could not be loaded" in lines[0] or "cannot count" in lines[0] or \
        "does not know" in lines[0]
    for name in ("profile.cubex", "traces.otf2", "MANIFEST.md", "scorep.cfg"):
        assert (exp / name).exists()
    p = profile_of(exp)
    assert [m.uniq_name for m in p.metrics][-1] == "ru_utime"
    assert metric_value(p, "ru_utime", "__main__:busy") > 0


def test_unknown_rusage_metric_stops_before_the_program(tmp_path):
    out = run_scorep(PYTHON, [APP], tmp_path / "exp", SCOREP_METRIC_RUSAGE="ru_utime,ru_bogus")
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1
    assert "SCOREP_METRIC_RUSAGE: unknown resource usage metric 'ru_bogus'" in out.stderr


def test_separator_and_all(tmp_path):
    exp = tmp_path / "exp"
    out = run_scorep(PYTHON, [APP], exp, SCOREP_METRIC_RUSAGE="ru_utime:ru_nvcsw",
                     SCOREP_METRIC_RUSAGE_SEP=":")
    assert out.returncode == 0, out.stderr
    assert [m.uniq_name for m in profile_of(exp).metrics][-2:] == ["ru_utime", "ru_nvcsw"]
    exp = tmp_path / "all"
    out = run_scorep(PYTHON, [APP], exp, SCOREP_METRIC_RUSAGE="all")
    assert out.returncode == 0, out.stderr
    assert len([m for m in profile_of(exp).metrics if m.uniq_name.startswith("ru_")]) == 16
    assert "SCOREP_METRIC_RUSAGE='all'" in (exp / "scorep.cfg").read_text()


def test_no_metrics_no_definitions(tmp_path):
    """Without metric variables nothing changes: Score-P's four metrics, no Metric record."""
    exp = tmp_path / "exp"
    out = run_scorep(PYTHON, [APP], exp, SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    assert [m.uniq_name for m in profile_of(exp).metrics] == ["visits", "time", "min_time",
                                                              "max_time"]
    import otf2
    with otf2.reader.open(str(exp / "traces.otf2")) as reader:
        assert len(list(reader.definitions.metric_members)) == 0


def papi_installed():
    import ctypes.util
    return ctypes.util.find_library("papi") is not None


# Asks this machine's PAPI (in a process of its own: PAPI keeps its state) whether it knows an
# event, and if not, why its perf_event component is off (papi_avail says the same): machines of
# one kind differ, e.g. "Error libpfm4 no default PMU found" where the VM shows no PMU.
PAPI_PROBE = r"""
import ctypes, ctypes.util, json, sys
lib = ctypes.CDLL(ctypes.util.find_library("papi"))
lib.PAPI_strerror.restype = ctypes.c_char_p
major = next((m for m in (7, 6, 5) if (lib.PAPI_library_init(m << 24) >> 24) == m), None)
if major is None:
    print(json.dumps("PAPI_library_init accepts none of the versions 5-7")); sys.exit()
code = ctypes.c_int()
rc = lib.PAPI_event_name_to_code(sys.argv[1].encode(), ctypes.byref(code))
if rc == 0:
    print(json.dumps(None)); sys.exit()
why = "PAPI does not know %s here (%s)" % (sys.argv[1], lib.PAPI_strerror(rc).decode())
index = lib.PAPI_get_component_index(b"perf_event")
if major == 7 and index >= 0:
    # PAPI_component_info_t of papi.h 7: disabled_reason follows five strings of 128+64+128+64*3
    lib.PAPI_get_component_info.restype = ctypes.c_void_p
    info = lib.PAPI_get_component_info(index)
    reason = ctypes.string_at(info + 512, 1024).split(b"\0")[0].decode(errors="replace")
    if reason:
        why += "; its perf_event component is disabled: " + reason
print(json.dumps(why))
"""


def papi_cannot_count(event):
    """None where this machine's PAPI knows EVENT, else why not (in PAPI's words)."""
    out = subprocess.run([PYTHON, "-c", PAPI_PROBE, event], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.skipif(not papi_installed(), reason="libpapi is not installed (libpapi-dev)")
def test_papi_software_events_through_dlopened_libpapi(python, tmp_path):
    """Where libpapi is installed it is loaded at run time: PAPI's perf_event component
    counts software events here (hardware counters are not available in this VM: those are
    named in one line each, and so is an event PAPI does not know). Machines of one kind
    differ: where this machine's PAPI has no perf_event component, it says why and the test
    skips with that reason."""
    why_not = papi_cannot_count("perf::PAGE-FAULTS")
    if why_not:
        pytest.skip(why_not)
    exp = tmp_path / "exp"
    out = run_scorep(python, [APP], exp, SCOREP_ENABLE_TRACING="true",
                     SCOREP_METRIC_PAPI="perf::PAGE-FAULTS,NO_SUCH_EVENT")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "done\n"
    assert out.stderr == "scorep: SCOREP_METRIC_PAPI: 'NO_SUCH_EVENT' is not recorded: PAPI " \
                         "does not know this event (Not supported)\n" or \
        out.stderr.startswith("scorep: SCOREP_METRIC_PAPI: 'NO_SUCH_EVENT' is not recorded")
    p = profile_of(exp)
    assert p.metric("perf::PAGE_FAULTS").disp_name == "perf::PAGE-FAULTS"
    assert metric_value(p, "perf::PAGE_FAULTS", "__main__:touch") >= 0.9 * 64 * MB // 4096
    import otf2
    with otf2.reader.open(str(exp / "traces.otf2")) as reader:
        member = list(reader.definitions.metric_members)[0]
        assert (member.name, str(member.metric_type)) == ("perf::PAGE-FAULTS",
                                                          "MetricType.PAPI")


def test_many_short_threads_give_their_metric_sources_back(tmp_path):
    """400 threads one after the other with 128 descriptors allowed: each thread's perf
    counter goes when the thread ends, so every thread's work is counted."""
    exp = tmp_path / "exp"
    out = run_scorep(PYTHON, [program("metrics_threads.py")], exp,
                     SCOREP_METRIC_PERF="task-clock")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "done\n"
    if "is not recorded" in out.stderr:
        pytest.skip("perf_event_open refuses software events here: " + out.stderr.strip())
    p = profile_of(exp)
    counted = 0
    for c in p.cnodes:
        if c.region.name == "__main__:work":
            for location in p.locations:
                if p.value("visits", c.id, location.id, inclusive=False):
                    counted += p.value("task_clock", c.id, location.id) > 0
    assert counted == 400


def test_gc_callback_at_the_recursion_limit(python, tmp_path):
    """Collections in the deepest frames the recursion limit allows: the gc:collect callback
    runs there without a frame of its own, so the program's unraisable hook sees nothing (a
    Python callback failed with RecursionError, reported as unraisable) and the collections
    are still regions."""
    app = program("gc_at_recursion_limit.py")
    plain = subprocess.run([python, app], capture_output=True, text=True, timeout=120)
    assert plain.stdout == "ended: RecursionError\nunraisable: []\n", plain.stdout + plain.stderr
    exp = tmp_path / "exp"
    out = run_scorep(python, ["--memory", app], exp)
    assert out.returncode == 0, out.stderr
    assert out.stdout == plain.stdout
    assert "Exception ignored" not in out.stderr, out.stderr
    p = profile_of(exp)
    main = next(l.id for l in p.locations if l.name == "MainThread")
    visits = sum(p.value("visits", c.id, main, inclusive=False)
                 for c in p.cnodes if c.region.name == "gc:collect")
    assert visits > 100, visits
