"""The call-path profile (profile.cubex), read back with scorep.cube (proven on real
Score-P profiles in test_cube_reader.py), on every interpreter in SCOREP_TEST_PYTHONS."""

import collections
import json
import re

import pytest

from conftest import Trace, cprofile_stats, program, python_version, run_scorep
from scorep import cube


def profile_of(python, tmp_path, script, *args, **env):
    exp = tmp_path / "exp"
    out = run_scorep(python, [program(script)] + list(args), exp, cwd=tmp_path, **env)
    assert out.returncode == 0, out.stderr
    return out, exp


class Flat:
    """Per-region sums over call paths and locations, plus the tree itself."""

    def __init__(self, exp, name="profile.cubex"):
        self.profile = cube.read(str(exp / name))
        p = self.profile
        self.visits = p.values(p.metric("visits"), inclusive=False)
        self.incl = p.values(p.metric("time"), inclusive=True)
        self.excl = p.values(p.metric("time"), inclusive=False)
        self.min = p.values(p.metric("min_time"), inclusive=False)
        self.max = p.values(p.metric("max_time"), inclusive=False)

    def nodes(self, region):
        return [c for c in self.profile.cnodes if c.region.name == region and not c.parameters]

    def total_visits(self, region, location=None):
        cols = range(len(self.profile.locations)) if location is None else [location]
        return sum(self.visits[c.id][l] for c in self.nodes(region) for l in cols)

    def total(self, values, region):
        return sum(sum(values[c.id]) for c in self.nodes(region))


def test_visits_tree_and_time_consistency(python, tmp_path):
    out, exp = profile_of(python, tmp_path, "calls.py")
    assert out.stderr == ""
    flat = Flat(exp)
    p = flat.profile
    assert len(p.roots) == 1 and p.root.region.name == "calls.py"
    assert p.root.region.paradigm == "measurement" and p.root.region.role == "artificial"
    assert flat.visits[p.root.id][0] == 1
    assert flat.total_visits("__main__:leaf") == 12
    assert flat.total_visits("__main__:middle") == 3
    assert flat.total_visits("__main__.Shape:area") == 1
    # The program's module code, then what the interpreter runs on the way out
    # (threading._shutdown waits for threads before the exit handlers run).
    assert [c.region.name for c in p.root.children][0] == "__main__:<module>"
    module = p.root.children[0]
    assert "__main__:middle" in [c.region.name for c in module.children]
    for leaf in flat.nodes("__main__:leaf"):
        assert "__main__:middle" in leaf.path()
    # Inclusive time is the node's exclusive time plus its children's inclusive time, and
    # the root holds the whole measured run.
    for c in p.cnodes:
        assert flat.incl[c.id][0] >= flat.excl[c.id][0] >= 0
        assert flat.incl[c.id][0] == pytest.approx(
            flat.excl[c.id][0] + sum(flat.incl[k.id][0] for k in c.children), rel=1e-9, abs=1e-12)
    assert flat.incl[p.root.id][0] == pytest.approx(sum(flat.excl[c.id][0] for c in p.cnodes))
    assert flat.incl[p.root.id][0] >= flat.incl[module.id][0] > 0
    leaf = flat.nodes("__main__:leaf")[0]
    assert 0 < flat.min[leaf.id][0] <= flat.max[leaf.id][0] <= flat.incl[leaf.id][0]
    region = next(r for r in p.regions if r.name == "__main__:leaf")
    assert region.file == program("calls.py") and region.begin_line == 6
    assert [l.name for l in p.locations] == ["MainThread"]
    assert [g.name for g in p.location_groups] == ["Process"]


def test_known_times_min_max_and_parameters(python, tmp_path):
    out, exp = profile_of(python, tmp_path, "timed.py", "--own-times")
    own = json.loads(out.stdout)  # what each call took, as the program measured it itself

    def close(measured, program):
        # The region encloses the program's own timing: at least that long, and longer only
        # by a call's entry and exit (not by the sleep's lateness on a loaded machine).
        assert program <= measured <= program + 0.002, (measured, program)

    flat = Flat(exp)
    slow, fast = flat.total(flat.incl, "__main__:slow"), flat.nodes("__main__:fast")
    close(slow, own["slow"][0])
    assert own["slow"][0] >= 0.03 and own["fast"][0] >= 0.01
    direct_fast = [c for c in fast if c.parent.region.name == "__main__:<module>"][0]
    close(flat.incl[direct_fast.id][0], own["fast"][0])
    varying, = flat.nodes("__main__:varying")
    assert flat.visits[varying.id][0] == 2
    close(flat.min[varying.id][0], min(own["varying"]))
    close(flat.max[varying.id][0], max(own["varying"]))
    close(flat.incl[varying.id][0], sum(own["varying"]))
    # parameter_int("n", n % 3) inside user:iteration splits the call path by value.
    iteration, = flat.nodes("user:iteration")
    assert flat.visits[iteration.id][0] == 6
    split = {c.parameters[0][2]: c for c in iteration.children if c.parameters}
    assert sorted(split) == ["0", "1", "2"] or sorted(split) == [0, 1, 2]
    for node in split.values():
        kind, key, _ = node.parameters[0]
        assert key == "n" and node.region.name == "user:iteration"
        assert flat.visits[node.id][0] == 2
        # fast() ran after the parameter was set: it belongs to the value's node.
        assert [k.region.name for k in node.children] == ["__main__:fast"]
        assert flat.visits[node.children[0].id][0] == 2


def test_profile_visits_equal_trace_enters(python, tmp_path):
    out, exp = profile_of(python, tmp_path, "threads.py", SCOREP_ENABLE_TRACING="true")
    flat = Flat(exp)
    trace = Trace(exp)
    names = {e.region for e in trace.events if e.kind == "Enter"}
    locations = [l.name for l in flat.profile.locations]
    assert sorted(locations) == ["MainThread", "worker-0", "worker-1"]
    for name in names:
        for col, location in enumerate(locations):
            assert flat.total_visits(name, col) == trace.enters(name, location), (name, location)
    assert flat.total_visits("__main__:work", locations.index("worker-1")) == 5


def test_depth_limit_collapses_and_tells(python, tmp_path):
    out, exp = profile_of(python, tmp_path, "recursion.py",
                          SCOREP_PROFILING_MAX_CALLPATH_DEPTH="10")
    assert out.stdout == "98\n"
    # <module> is frame 1 under the root; down() at frames 2..51 twice: frames 10 and deeper
    # (42 per recursion) would make the tree deeper than 10 levels.
    assert re.fullmatch(r"scorep: 84 call\(s\) deeper than "
                        r"SCOREP_PROFILING_MAX_CALLPATH_DEPTH=10 are summed up in COLLAPSE "
                        r"call paths of the profile \(as Score-P does\)\n", out.stderr)
    manifest = (exp / "MANIFEST.md").read_text()
    assert manifest.endswith("\n## Notes on this measurement\n\n- 84 call(s) deeper than "
                             "SCOREP_PROFILING_MAX_CALLPATH_DEPTH=10 are summed up in COLLAPSE "
                             "call paths of the profile (as Score-P does)\n")
    flat = Flat(exp)
    p = flat.profile
    # Score-P's rule: the first call beyond the limit is a visit of its caller's COLLAPSE
    # child (one level deeper than the limit); the calls inside it make no nodes.
    deepest = max(len(c.path()) for c in p.cnodes)
    assert deepest == 11
    downs = sorted(flat.nodes("__main__:down"), key=lambda c: len(c.path()))
    assert len(downs) == 8
    assert flat.total_visits("__main__:down") == 2 * 8
    collapse, = flat.nodes("COLLAPSE")
    assert collapse.parent is downs[-1] and not collapse.children
    assert flat.visits[collapse.id] == [2]
    region = collapse.region
    assert (region.paradigm, region.role, region.file, region.begin_line, region.end_line) == \
        ("user", "unknown", "", -1, -1)
    # The collapsed calls' time is COLLAPSE's: the deepest down() keeps only its own.
    assert flat.incl[collapse.id][0] > 0
    assert flat.incl[downs[-1].id][0] == pytest.approx(
        flat.excl[downs[-1].id][0] + flat.incl[collapse.id][0])
    assert flat.excl[downs[-1].id][0] < flat.incl[collapse.id][0]
    # The minimum and maximum are those of the two collapsed calls.
    assert 0 < flat.min[collapse.id][0] <= flat.max[collapse.id][0] <= flat.incl[collapse.id][0]


def test_profiling_switches_and_base_name(tmp_path):
    out, exp = profile_of("python3", tmp_path, "calls.py", SCOREP_PROFILING_BASE_NAME="myprof")
    assert sorted(p.name for p in exp.iterdir()) == ["MANIFEST.md", "myprof.cubex", "scorep.cfg"]
    assert "`myprof.cubex`" in (exp / "MANIFEST.md").read_text()
    assert Flat(exp, "myprof.cubex").total_visits("__main__:leaf") == 12
    exp2 = tmp_path / "exp2"
    out = run_scorep("python3", [program("calls.py")], exp2, cwd=tmp_path,
                     SCOREP_ENABLE_PROFILING="false")
    assert out.returncode == 0
    assert sorted(p.name for p in exp2.iterdir()) == ["MANIFEST.md", "scorep.cfg"]


def test_end_of_run_summary_on_request(tmp_path):
    out = run_scorep("python3", ["--summary", program("timed.py")], tmp_path / "exp",
                     cwd=tmp_path)
    assert out.returncode == 0 and out.stdout == ""
    lines = out.stderr.splitlines()
    assert lines[0].startswith("scorep: measured timed.py for ")
    assert lines[1] == "scorep: results in %s" % (tmp_path / "exp")
    assert lines[2] == "scorep: top regions by exclusive time:"
    # Debian's 3.11 records no C calls by default: the sleeping functions hold the time.
    top = [line.split()[-1] for line in lines[4:7]]
    assert top[0] == "__main__:fast"  # 7 x 10 ms
    assert set(top[1:]) == {"__main__:slow", "__main__:varying"}  # 30 ms, 40 ms
    fast = lines[4].split()
    assert fast[2] == "7"
    assert lines[-1].startswith("scorep: look further: scorep-score %s" % (tmp_path / "exp"))
    # With C calls, time.sleep is a region of its own that holds it: 10 calls.
    out = run_scorep("python3", ["--summary", "--c-calls", program("timed.py")],
                     tmp_path / "exp2", cwd=tmp_path)
    assert out.returncode == 0 and out.stdout == ""
    lines = out.stderr.splitlines()
    assert lines[4].split()[-1] == "time:sleep"
    assert lines[4].split()[2] == "10"


SAME_LINE = '''\
def twice(n):
    rows = [[i] for i in range(n)] + [str(i) for i in range(n)]
    pick = [lambda: 1, lambda: 2]
    return len(rows) + sum(f() for f in pick) + sum(f() for f in pick)
for _ in range(3):
    twice(4)
'''


def test_functions_that_share_a_line_add_up(python, tmp_path):
    """Two code objects of one name on one line (two lambdas, two list comprehensions, nested
    generator expressions: dask's and pandas' code has them) are one region; each call is a
    visit. The profile kept one code object's values of each call path and dropped the
    other's: 1 visit of 2 (issue 30's rule: never undercount silently)."""
    script = tmp_path / "same_line.py"
    script.write_text(SAME_LINE)
    out = run_scorep(python, [script], tmp_path / "exp", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    p = cube.read(str(tmp_path / "exp" / "profile.cubex"))
    visits = p.values(p.metric("visits"), inclusive=False)
    times = p.values(p.metric("time"), inclusive=False)
    by_name = collections.Counter()
    for node in p.cnodes:
        if node.region.file == str(script) and not node.region.name.endswith(":<module>"):
            by_name[node.region.name.split(":")[-1]] += sum(visits[node.id])
    # The expected counts are cProfile's, by the interpreter itself, summed per label.
    expected = collections.Counter()
    for f in cprofile_stats(python, str(script), [], tmp_path):
        if f.file == str(script) and f.name != "<module>":
            expected[f.name] += f.ncalls
    assert by_name == expected
    assert by_name["<lambda>"] == 3 * 2 * 2
    if python_version(python) < (3, 12):  # list comprehensions are inlined from 3.12 on
        assert by_name["<listcomp>"] == 3 * 2
    # Times add up too: the lambdas' call path holds the time of both lambdas' visits, no
    # more than their caller's.
    lambdas = [n for n in p.cnodes if n.region.name.endswith(":<lambda>")]
    assert all(sum(times[n.id]) <= sum(p.values(p.metric("time"), inclusive=True)[n.parent.id])
               for n in lambdas)
