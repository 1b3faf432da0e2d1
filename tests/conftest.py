"""Shared test helpers: running programs under `python -m scorep` and reading what the
measurement wrote back with the real consumers (the OTF2 library's reader, otf2-print).

pytest itself runs on Debian's python3 (which has python3-otf2); the programs it measures
run on every interpreter in SCOREP_TEST_PYTHONS as well (the `python` fixture), so the
core tests cover 3.9-3.13.
"""

import collections
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

# A shell that starts the suite in the background (`make test &` in a script) leaves SIGINT and
# SIGQUIT ignored, and an ignored signal stays ignored in every program the tests start: the
# tests of Ctrl-C and of signals ending a measured program then saw nothing arrive. The
# programs get the dispositions of a terminal's foreground job.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
if signal.getsignal(signal.SIGQUIT) is signal.SIG_IGN:
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
PROGRAMS = Path(__file__).resolve().parent / "programs"


def _measured_pythons():
    pythons = [sys.executable]
    for path in os.environ.get("SCOREP_TEST_PYTHONS", "").split():
        if path and os.path.exists(path) and path not in pythons:
            pythons.append(path)
    return pythons


MEASURED_PYTHONS = _measured_pythons()


def python_id(path):
    out = subprocess.run([path, "-c", "import sys;print('py%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True)
    return out.stdout.strip() or os.path.basename(path)


def python_version(path):
    out = subprocess.run([path, "-c", "import sys;print(*sys.version_info[:2])"],
                         capture_output=True, text=True)
    return tuple(int(x) for x in out.stdout.split())


@pytest.fixture(params=MEASURED_PYTHONS, ids=[python_id(p) for p in MEASURED_PYTHONS])
def python(request):
    """Each interpreter the core is tested on."""
    return request.param


def scorep_env(experiment_dir=None, **extra):
    env = dict(os.environ)
    for name in list(env):
        if name.startswith("SCOREP_"):
            del env[name]
    env["PYTHONPATH"] = str(SRC)
    env.pop("PYTHONHOME", None)
    if experiment_dir is not None:
        env["SCOREP_EXPERIMENT_DIRECTORY"] = str(experiment_dir)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(args, env=None, cwd=None, timeout=120, input=None):
    return subprocess.run([str(a) for a in args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, input=input)


def run_scorep(python, args, experiment_dir=None, cwd=None, timeout=120, **env_vars):
    """python -m scorep <args> with a clean SCOREP_* environment plus env_vars."""
    env = scorep_env(experiment_dir, **env_vars)
    return run([python, "-m", "scorep"] + list(args), env=env, cwd=cwd, timeout=timeout)


def program(name):
    return str(PROGRAMS / name)


# ---- the yardstick: cProfile run by the measured interpreter itself ----------------------

# cProfile's counts are what visit counts are compared with (recursive calls included): each
# function's ncalls and, per caller, the calls it made. Run by the interpreter under test, so
# its own cProfile decides what a call is on that version. Summed per label from the profiler's
# raw entries: pstats keeps one of two functions that share (file, first line, name), such as
# two lambdas or nested generator expressions on one line, and drops the other's calls.
_CPROFILE_STATS = """
import cProfile, collections, json, runpy, sys
script, out = sys.argv[1], sys.argv[2]
sys.argv = [script] + sys.argv[3:]
profiler = cProfile.Profile()
profiler.enable()
try:
    runpy.run_path(script, run_name="__main__")
finally:
    profiler.disable()
def label(code):
    return ("~", 0, code) if isinstance(code, str) else \\
        (code.co_filename, code.co_firstlineno, code.co_name)
calls = collections.Counter()
callers = collections.defaultdict(collections.Counter)
for entry in profiler.getstats():
    calls[label(entry.code)] += entry.callcount
    for sub in entry.calls or ():
        callers[label(sub.code)][label(entry.code)] += sub.callcount
json.dump([list(f) + [n, [list(c) + [m] for c, m in callers[f].items()]]
           for f, n in calls.items()], open(out, "w"))
"""

CProfiled = collections.namedtuple("CProfiled", "file line name ncalls callers")


def cprofile_stats(python, script, args, out_dir, cwd=None, **env_vars):
    """cProfile's statistics of `python script args...`: one CProfiled per function (file "~"
    and line 0 for C functions, cProfile's spelling as name); callers as (file, line, name,
    calls) tuples."""
    out_file = Path(out_dir) / "cprofile-stats.json"
    out = run([python, "-c", _CPROFILE_STATS, script, out_file] + list(args),
              env=scorep_env(**env_vars), cwd=cwd)
    assert out.returncode == 0, out.stderr
    return [CProfiled(fn, line, name, nc, [tuple(c) for c in callers])
            for fn, line, name, nc, callers in json.loads(out_file.read_text())]


# ---- reading traces back -----------------------------------------------------------------


def fix_python_otf2():
    """python3-otf2 (Debian's, OTF2 3.0.2) reads an InterComm definition with the fields of
    Comm in front of its own (InterComm subclasses Comm and its fields are appended), so a
    trace with an inter-communicator cannot be read. otf2-print (the C library) reads them
    as OTF2 3.0 specifies: name, groupA, groupB, common communicator, flags."""
    from otf2 import definitions
    fields = definitions.InterComm._fields
    if len(fields) == 8 and [f.name for f in fields[:2]] == ["name", "group"]:
        definitions.InterComm._fields = (fields[0],) + fields[4:]


def assert_metric_instances_per_group(experiment_dir, groups):
    """A per-process metric is one OTF2 metric instance per location group (process), scoped
    to it, and each group's metric events use its own instance only."""
    import otf2

    with otf2.reader.open(str(Path(experiment_dir) / "traces.otf2")) as reader:
        instances = list(reader.definitions.metric_instances)
        assert sorted(i.scope.name for i in instances) == sorted(groups)
        seen = collections.defaultdict(set)  # location group -> instances its events use
        for location, event in reader.events:
            if type(event).__name__ == "Metric" and event.metric in instances:
                seen[location.group.name].add(event.metric.scope.name)
    assert dict(seen) == {g: {g} for g in groups}, dict(seen)


# group: the location group (process) of the location; locations of different processes may
# share a name ("MainThread"), so per-location checks key on (group, location).
Event = collections.namedtuple("Event", "location kind region time attrs group")


def otf2_print(archive, *flags):
    """otf2-print output; the reader must not complain about anything."""
    out = run(["otf2-print"] + list(flags) + [archive])
    assert out.returncode == 0, out.stderr
    assert out.stderr == "", out.stderr
    return out.stdout


class Trace:
    """An OTF2 archive read with the OTF2 library's Python reader (python3-otf2)."""

    def __init__(self, experiment_dir):
        import otf2

        self.path = str(Path(experiment_dir) / "traces.otf2")
        self.events = []
        with otf2.reader.open(self.path) as reader:
            defs = reader.definitions
            self.clock = defs.clock_properties
            self.regions = {r.name: r for r in defs.regions}
            self.locations = [loc.name for loc in defs.locations]
            self.location_groups = [g.name for g in defs.location_groups]
            self.location_event_counts = {loc.name: loc.number_of_events for loc in defs.locations}
            for location, event in reader.events:
                kind = type(event).__name__
                region = getattr(event, "region", None)
                attrs = {}
                for name in ("parameter", "value", "string", "measurement_mode", "exit_status",
                             "program_name", "program_arguments", "stop_time"):
                    if hasattr(event, name):
                        value = getattr(event, name)
                        attrs[name] = value.name if name == "parameter" else value
                self.events.append(Event(location.name, kind,
                                         region.name if region is not None else None,
                                         event.time, attrs, location.group.name))

    def of(self, kind=None, region=None, location=None):
        return [e for e in self.events if (kind is None or e.kind == kind) and
                (region is None or e.region == region) and
                (location is None or e.location == location)]

    def enters(self, region, location=None):
        return len(self.of("Enter", region, location))

    def leaves(self, region, location=None):
        return len(self.of("Leave", region, location))

    def check_nesting(self):
        """Per location: timestamps never decrease and every leave closes the innermost
        enter; nothing stays open. Returns the deepest stack seen."""
        stacks, last, deepest = {}, {}, 0
        for e in self.events:
            where = (e.group, e.location)
            assert e.time >= last.get(where, 0), "time goes backwards on %s" % (where,)
            last[where] = e.time
            stack = stacks.setdefault(where, [])
            if e.kind == "Enter":
                stack.append(e.region)
                deepest = max(deepest, len(stack))
            elif e.kind == "Leave":
                assert stack, "leave of %s without enter on %s" % (e.region, e.location)
                top = stack.pop()
                assert top == e.region, "leave of %s closes %s on %s" % (e.region, top, e.location)
        for location, stack in stacks.items():
            assert not stack, "regions left open on %s: %s" % (location, stack)
        return deepest

    def calls(self, location=None):
        """(region, depth, enter time, leave time) of every call, in enter order."""
        result, stacks = [], {}
        for e in self.events:
            if location is not None and e.location != location:
                continue
            stack = stacks.setdefault((e.group, e.location), [])
            if e.kind == "Enter":
                stack.append(len(result))
                result.append([e.region, len(stack) - 1, e.time, None])
            elif e.kind == "Leave":
                result[stack.pop()][3] = e.time
        return [tuple(c) for c in result]
