"""Traces of known programs, read back with the OTF2 library (python3-otf2, otf2-print),
on every interpreter in SCOREP_TEST_PYTHONS."""

import re

import pytest

from conftest import Trace, otf2_print, program, python_version, run_scorep


def trace_of(python, tmp_path, script, *args, options=(), **env):
    exp = tmp_path / "exp"
    out = run_scorep(python, list(options) + [program(script)] + list(args), exp,
                     cwd=tmp_path, SCOREP_ENABLE_TRACING="true", **env)
    return out, exp


def test_calls_names_and_counts(python, tmp_path):
    out, exp = trace_of(python, tmp_path, "calls.py")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert out.stdout == "argv []\n"
    trace = Trace(exp)
    assert trace.check_nesting() >= 3  # <module>, middle, leaf (3.12 inlines comprehensions)
    assert trace.enters("__main__:leaf") == 12
    assert trace.enters("__main__:middle") == 3
    # The method is named after the class that defines it, not the instance's class.
    assert trace.enters("__main__.Shape:area") == 1
    assert trace.enters("__main__.Shape:unit") == 1
    assert trace.enters("__main__.Shape:make") == 1
    assert trace.enters("__main__:inner") == 1
    assert trace.enters("__main__:<lambda>") == 1
    assert trace.enters("__main__:<module>") == 1
    assert not [name for name in trace.regions if "scorep" in name or name.startswith("runpy")]
    leaf = trace.regions["__main__:leaf"]
    assert leaf.source_file == program("calls.py")
    assert leaf.begin_line_number == 6
    assert str(leaf.paradigm).endswith("USER") and str(leaf.region_role).endswith("FUNCTION")
    # Calls nest: each middle() encloses its four leaf() calls in time.
    calls = trace.calls()
    for name, depth, enter, leave in calls:
        assert enter <= leave
    middles = [c for c in calls if c[0] == "__main__:middle"]
    leaves = [c for c in calls if c[0] == "__main__:leaf"]
    for _, _, enter, leave in middles:
        assert len([l for l in leaves if enter <= l[2] and l[3] <= leave]) == 4


# The default timer is the TSC where it is usable (not under kvm-clock, say), so the
# clock_gettime run keeps both timers covered on a machine with an invariant TSC.
@pytest.mark.parametrize("timer", [None, "clock_gettime"])
def test_program_begin_end_and_clock(python, tmp_path, timer):
    env = {"SCOREP_TIMER": timer} if timer else {}
    out, exp = trace_of(python, tmp_path, "calls.py", "3", **env)
    assert out.returncode == 3
    trace = Trace(exp)
    begin, = trace.of("ProgramBegin")
    end, = trace.of("ProgramEnd")
    # As Score-P: the program (here the script) with its path, its own arguments.
    assert begin.attrs["program_name"] == program("calls.py")
    assert list(begin.attrs["program_arguments"]) == ["3"]
    assert end.attrs["exit_status"] == 3
    assert trace.events[0].kind == "ProgramBegin"
    assert all(begin.time <= e.time <= end.time for e in trace.events)
    clock = trace.clock
    assert clock.timer_resolution > 1e8
    assert clock.global_offset <= begin.time
    assert clock.global_offset + clock.trace_length >= end.time
    assert clock.realtime_timestamp > 1.6e18  # ns since the epoch, after 2020
    assert trace.locations == ["MainThread"]
    assert trace.location_groups == ["Process"]
    assert trace.location_event_counts["MainThread"] == len(trace.events)
    text = otf2_print(str(exp / "traces.otf2"))
    assert re.search(r'ENTER\s+0\s+\d+\s+Region: "__main__:leaf"', text)
    defs = otf2_print(str(exp / "traces.otf2"), "-G")
    assert "SYSTEM_TREE_NODE" in defs and "CLOCK_PROPERTIES" in defs


def test_generators_and_coroutines(python, tmp_path):
    out, exp = trace_of(python, tmp_path, "generators.py")
    assert out.stdout == "6 5\n" and out.returncode == 0, out.stderr
    trace = Trace(exp)
    trace.check_nesting()
    assert trace.enters("__main__:numbers") == 4
    assert trace.leaves("__main__:numbers") == 4
    assert trace.enters("__main__:task") == 2
    assert trace.enters("__main__.Pause:__await__") == 2


def test_exceptions_unwind_balanced(python, tmp_path):
    out, exp = trace_of(python, tmp_path, "exceptions.py", "escape")
    assert out.returncode == 1
    assert out.stdout == "caught\n"
    assert "ValueError: deep" in out.stderr
    trace = Trace(exp)
    trace.check_nesting()
    assert trace.enters("__main__:deep") == 4 + 3
    assert trace.enters("__main__:catcher") == 1
    end, = trace.of("ProgramEnd")
    assert end.attrs["exit_status"] == 1


def test_threads_are_locations(python, tmp_path):
    out, exp = trace_of(python, tmp_path, "threads.py")
    assert out.stdout == "threads done\n" and out.returncode == 0, out.stderr
    trace = Trace(exp)
    trace.check_nesting()
    assert sorted(trace.locations) == ["MainThread", "worker-0", "worker-1"]
    assert trace.enters("__main__:work", "worker-0") == 5
    assert trace.enters("__main__:work", "worker-1") == 5
    assert trace.enters("__main__:work", "MainThread") == 1
    assert trace.enters("__main__:worker", "MainThread") == 0
    begin, = trace.of("ProgramBegin")
    assert begin.location == "MainThread"


def test_user_api(python, tmp_path):
    out, exp = trace_of(python, tmp_path, "user_api.py")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert out.stdout == "user api done\n"
    trace = Trace(exp)
    trace.check_nesting()
    assert trace.enters("user:manual") == 1
    # The user API's own bookkeeping is not recorded (no os.path calls on the caller's stack).
    assert not [n for n in trace.regions if n.startswith(("posixpath:", "genericpath:"))]
    assert trace.regions["user:manual"].source_file == program("user_api.py")
    params = {e.attrs["parameter"]: e.attrs.get("value", e.attrs.get("string"))
              for e in trace.events if e.kind.startswith("Parameter")}
    # Each name is its own parameter; uint keeps values beyond the int64 range.
    assert params == {"count": -5, "size": 2**64 - 1, "mode": "fast", "other": 7}
    assert [e.kind for e in trace.events if e.kind.startswith("Parameter")] == [
        "ParameterInt", "ParameterUnsignedInt", "ParameterString", "ParameterInt"]
    assert trace.enters("user:context") == 1
    assert trace.enters("user:decorated") == 1
    assert trace.enters("__main__:named_decorated") == 1
    # Decorated and instrumented: recorded once, under the function's own region.
    assert trace.enters("__main__:self_named") == 1
    assert trace.enters("__main__:bare") == 1
    # disable("quiet"): the named section is there, the call inside it is not;
    # disable_recording(): nothing; the rewound attempt: nothing; the kept one: once.
    assert trace.enters("user_instrumenter:quiet") == 1
    assert trace.enters("__main__:decorated_target") == 1
    assert trace.enters("kept") == 1
    assert trace.enters("attempt") == 0
    modes = [str(e.attrs["measurement_mode"]) for e in trace.events if e.kind == "MeasurementOnOff"]
    assert [m.rsplit(".", 1)[-1] for m in modes] == ["OFF", "ON", "OFF", "ON"]


def test_error_region(python, tmp_path):
    out, exp = trace_of(python, tmp_path, "error_region.py")
    assert out.returncode == 0
    assert out.stderr == (
        "SCOREP_BINDING_PYTHON ERROR: There was a region exit without an enter!\n"
        'SCOREP_BINDING_PYTHON ERROR: For details look for "error_region" in the trace or '
        "profile.\n")
    trace = Trace(exp)
    trace.check_nesting()
    assert trace.enters("error_region") == 2
    names = [e.attrs["string"] for e in trace.events if e.kind == "ParameterString"]
    assert names == ["user:never_begun", "user:b"]
    assert trace.enters("user:b") == 1


@pytest.mark.parametrize("instrumenter", ["cProfile", "profile", "cTrace", "trace", "monitoring",
                                          "eval"])
def test_instrumenter_types_record_the_same(python, tmp_path, instrumenter):
    modern = python_version(python) >= (3, 12)
    if (instrumenter == "monitoring" and not modern) or (instrumenter == "eval" and modern):
        out, _ = trace_of(python, tmp_path, "calls.py",
                          options=["--instrumenter-type=" + instrumenter])
        assert out.returncode == 1
        assert out.stderr.startswith("scorep: ") and "3.12" in out.stderr
        assert out.stderr.count("\n") == 1
        return
    out, exp = trace_of(python, tmp_path, "calls.py",
                        options=["--instrumenter-type=" + instrumenter])
    assert out.returncode == 0, out.stderr
    trace = Trace(exp)
    trace.check_nesting()
    assert trace.enters("__main__:leaf") == 12
    assert trace.enters("__main__.Shape:area") == 1


def test_dummy_instrumenter_creates_experiment(python, tmp_path):
    out, exp = trace_of(python, tmp_path, "calls.py", options=["--instrumenter-type=dummy"])
    assert out.returncode == 0 and out.stdout == "argv []\n"
    trace = Trace(exp)
    assert not [e for e in trace.events if e.kind == "Enter"]
    assert sorted(p.name for p in exp.iterdir()) == [
        "MANIFEST.md", "profile.cubex", "scorep.cfg", "traces", "traces.def", "traces.otf2"]


def test_regions_merged_by_name_keep_later_ids_apart(python, tmp_path):
    out, exp = trace_of(python, tmp_path, "same_name_regions.py")
    assert out.returncode == 0, out.stderr
    trace = Trace(exp)
    assert trace.enters("__main__:twin") == 4
    assert trace.enters("__main__:after") == 2
    # The exec'd module code shares the script's name, file and first line.
    assert trace.enters("__main__:<module>") == 3
    trace.check_nesting()


def test_filter_files_in_the_shape_score_p_writes(python, tmp_path):
    """Real `scorep-score -g` writes one EXCLUDE followed by a `MANGLED <name>` line per
    region; the manual writes `INCLUDE bar MANGLED foo baz`; keywords are case-sensitive
    (`exclude` is a pattern). Our parser used to reject the first two."""
    filter_file = tmp_path / "scorep.filter"
    filter_file.write_text("SCOREP_REGION_NAMES_BEGIN\n"
                           "  EXCLUDE\n"
                           "    MANGLED __main__:leaf\n"
                           "    MANGLED __main__:middle\n"
                           "  INCLUDE exclude MANGLED __main__:middle\n"
                           "SCOREP_REGION_NAMES_END\n")
    out = run_scorep(python, ["--filter=%s" % filter_file, program("calls.py")],
                     tmp_path / "exp", SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    trace = Trace(tmp_path / "exp")
    assert trace.enters("__main__:leaf") == 0
    assert trace.enters("__main__:middle") > 0  # included again by the last rule
    assert trace.enters("__main__:outer") > 0
