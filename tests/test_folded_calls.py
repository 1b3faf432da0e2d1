"""Per-function totals do not depend on the call-path depth limit: the calls COLLAPSE folds
(50 000-deep recursion, a 20 000-deep mutual recursion) are counted per function and per
caller -> callee pair (folded_calls.json in profile.cubex), so that the flat views, the
.prof export and scorep-score give cProfile's numbers, while the call tree keeps COLLAPSE
as Score-P does."""

import pstats
import sys
import tarfile

import pytest

from conftest import program, run, run_scorep, scorep_env

sys.path.insert(0, str(__import__("conftest").SRC))
from scorep import cube  # noqa: E402
from scorep.report.analysis import call_stats, top_regions  # noqa: E402
from scorep.report.readers import Experiment  # noqa: E402

FUNCS = ("f", "ping", "pong", "work")


def _by_name(stats):
    """{short name: (cc, nc, tt, ct, {caller short name: (nc, cc, tt, ct)})}"""
    def short(key):
        return key[2].rsplit(":", 1)[-1]
    return {short(k): (v[0], v[1], v[2], v[3], {short(c): cv for c, cv in v[4].items()})
            for k, v in stats.items()}


@pytest.fixture
def measured(python, tmp_path):
    exp = tmp_path / "exp"
    out = run_scorep(python, [program("folded_recursion.py")], exp, cwd=tmp_path,
                     SCOREP_ENABLE_TRACING="true", timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "[(50000, 20000, 10)]\n"
    return exp, _cprofile_reference(python, tmp_path, out.stdout)


def _consistent(stats):
    """cProfile's stats of the program, if they hold together: every function there, each
    one's callers adding up to its own call count. cProfile on 3.13 wrote broken ones in two CI
    runs of many (f's callers {f: (50007, 0)} for 50 012 calls once, no `work` at all another
    time), never in a dozen runs on a quiet machine."""
    if any(name not in stats for name in FUNCS):
        return False
    return all(sum(v[0] for v in stats[name][4].values()) == stats[name][1]
               for name in FUNCS if name != "work")


def _cprofile_reference(python, tmp_path, expected_stdout, attempts=3):
    """The first consistent reference of a few cProfile runs, or None: a broken reference is
    cProfile's defect, and the exact values the tests assert hold without it."""
    for attempt in range(attempts):
        ref = tmp_path / f"cprofile{attempt}.prof"
        plain = run([python, program("folded_recursion.py"), ref], timeout=300)
        assert plain.stdout == expected_stdout
        stats = _by_name(pstats.Stats(str(ref)).stats)
        if _consistent(stats):
            return stats
    return None


def test_prof_export_equals_cprofile_beyond_the_depth_limit(measured, tmp_path):
    exp, ref = measured
    prof = tmp_path / "s.prof"
    out = run([sys.executable, "-m", "scorep.report", exp, "-o", prof], env=scorep_env())
    assert out.returncode == 0, out.stderr
    ours = _by_name(pstats.Stats(str(prof)).stats)
    assert "COLLAPSE" not in ours
    for name in FUNCS if ref is not None else ():
        cc, nc, tt, ct, callers = ours[name]
        rcc, rnc, _, _, rcallers = ref[name]
        assert (cc, nc) == (rcc, rnc), name
        if name == "work":
            continue  # cProfile.runcall starts at work(), which has no caller there
        assert {c: v[:2] for c, v in callers.items()} == {c: v[:2] for c, v in rcallers.items()}
    assert ours["f"][:2] == (2, 50012)
    assert {c: v[:2] for c, v in ours["f"][4].items()} == {"f": (50010, 2), "work": (2, 2)}
    assert (ours["ping"][:2], ours["pong"][:2]) == ((1, 10001), (1, 10000))
    assert {c: v[:2] for c, v in ours["ping"][4].items()} == {"pong": (10000, 1), "work": (1, 1)}
    assert {c: v[:2] for c, v in ours["pong"][4].items()} == {"ping": (10000, 1)}
    # Inclusive time once per outermost activation: f calls only itself, ping's outermost
    # call holds every ping and pong, pong's is inside it.
    assert ours["f"][3] == pytest.approx(ours["f"][2], rel=1e-9)
    assert ours["ping"][3] == pytest.approx(ours["ping"][2] + ours["pong"][2], rel=1e-9)
    assert ours["pong"][3] <= ours["ping"][3]
    assert ours["work"][3] >= ours["f"][3] + ours["ping"][3]


def test_profile_totals_equal_the_trace(measured):
    """Profile and trace share their clock readings: visits, exclusive and inclusive time
    per function are the same numbers from both, although the profile's tree stops at
    depth 128."""
    exp, _ = measured
    experiment = Experiment(str(exp), "profile")
    tree = experiment.tree
    assert any(n.region.name == "COLLAPSE" for n in tree.nodes)  # the call tree keeps it
    assert max(n.depth for n in tree.nodes) == 128  # 128 levels and COLLAPSE below
    profile = {s.region.name: s for s in tree.flat()}
    trace = {s.region.name: s for s in Experiment(str(exp), "trace").tree.flat()}
    assert "COLLAPSE" not in profile
    for name in ("f", "ping", "pong", "work"):
        p, t = profile["__main__:" + name], trace["__main__:" + name]
        assert p.visits == t.visits, name
        # The trace's timestamps are whole nanoseconds, the profile's durations ticks: a
        # visit's duration and each of its callees' round by up to 1 ns in the trace, so the
        # two sums differ by at most 1 ns per visit and per callee visit (random, ~100 ns
        # here; 1 call ~1 us). f, ping and pong call one function per visit; work calls
        # several once (a CI run saw 2.2 ns on its one visit).
        callee_visits = sum(sum(tree.visits[c.id]) for n in tree.nodes
                            if n.region.name == "__main__:" + name and not n.params
                            for c in n.children)
        rounding = 1e-9 * max(2 * p.visits, p.visits + callee_visits)
        assert abs(p.excl - t.excl) <= rounding, (name, p.excl, t.excl)
        assert abs(p.incl - t.incl) <= rounding, (name, p.incl, t.incl)
    assert profile["__main__:f"].visits == 50012
    # Every function's visits, and the calls in all (the program root aside: the trace
    # gives each thread a visit of it, the profile the one run).
    assert {k: s.visits for k, s in profile.items() if not s.region.is_program} == \
        {k: s.visits for k, s in trace.items() if not s.region.is_program}
    assert tree.total_visits() == sum(s.visits for s in trace.values()) - 1
    funcs, _ = call_stats(tree)
    ids = {s.region.name: s.region.id for s in tree.flat()}
    assert funcs[ids["__main__:ping"]][:2] == [1, 10001]
    top = [s.region.name for s in top_regions(tree, "visits", 3)]
    assert top == ["__main__:f", "__main__:ping", "__main__:pong"]


def test_terminal_report_and_score_rows(measured):
    exp, _ = measured
    env = scorep_env()
    text = run([sys.executable, "-m", "scorep.report", exp], env=env).stdout
    rows = {line.split()[-1]: line.split() for line in text.splitlines()
            if line.split() and line.split()[-1].startswith("__main__:")}
    assert rows["__main__:f"][-4] == "50,012"
    assert rows["__main__:ping"][-4] == "10,001"
    assert rows["__main__:pong"][-4] == "10,000"
    # The per-function tables; the call-tree section keeps COLLAPSE.
    tables = [part.split("\n\n")[0] for part in text.split("Top 15 regions by")[1:]]
    assert len(tables) == 2 and all("__main__:f" in t for t in tables)
    assert not any("COLLAPSE" in t for t in tables)
    out = run([sys.executable, "-m", "scorep.score", "-r", exp], env=env)
    assert out.returncode == 0, out.stderr
    visits = {line.split()[-1]: line.split()[2] for line in out.stdout.splitlines()
              if line.split() and line.split()[-1].startswith("__main__:")}
    assert (visits["__main__:f"], visits["__main__:ping"], visits["__main__:pong"]) == \
        ("50,012", "10,001", "10,000")
    assert "COLLAPSE" not in out.stdout


def test_folded_member_leaves_the_cube_readable(measured):
    """An extra archive member, as remapping.spec: CUBE readers look members up by name."""
    exp, _ = measured
    with tarfile.open(exp / "profile.cubex") as tar:
        names = tar.getnames()
    assert names[0] == "remapping.spec" and names[-1] == "anchor.xml"
    assert "folded_calls.json" in names
    profile = cube.read(exp)
    folded = profile.folded()
    collapse = [c for c in profile.cnodes if c.region.name == "COLLAPSE"]
    assert sorted(folded) == sorted(c.id for c in collapse)


def test_damaged_member_is_one_line(measured, tmp_path):
    exp, _ = measured
    broken = tmp_path / "broken.cubex"
    with tarfile.open(exp / "profile.cubex") as src, tarfile.open(broken, "w") as dst:
        for info in src:
            data = src.extractfile(info).read()
            if info.name == "folded_calls.json":
                data = data[:len(data) // 2]
                info.size = len(data)
            import io
            dst.addfile(info, io.BytesIO(data))
    out = run([sys.executable, "-m", "scorep.report", broken], env=scorep_env())
    assert out.returncode != 0
    assert out.stderr.count("\n") == 1 and "folded_calls.json is damaged" in out.stderr
    assert "Traceback" not in out.stderr
