"""One set of aggregates (scorep.report.analysis) behind the terminal report, the
end-of-run summary and the Jupyter kernel's table of top regions: a function called 10
times that records a parameter inside shows 10 visits in all three, read from the profile
that SCOREP_PROFILING_BASE_NAME named; and the pstats export counts calls exactly as
cProfile does, recursion included."""

import os
import pstats
import subprocess
import sys

from conftest import SRC, program, run_scorep, scorep_env
from test_report_support import report

sys.path.insert(0, str(SRC))
from scorep.jupyter import results  # noqa: E402
from scorep.report.analysis import call_stats, callers_and_callees, experiment_tree  # noqa: E402


def test_parameter_nodes_are_not_visits_anywhere(tmp_path):
    exp = tmp_path / "exp"
    out = run_scorep(sys.executable, ["--summary", program("parameter_calls.py")], exp,
                     cwd=tmp_path, SCOREP_PROFILING_BASE_NAME="custom")
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in exp.iterdir()) == ["MANIFEST.md", "custom.cubex", "scorep.cfg"]
    # the profile really splits work() by the parameter: 3 nodes under its call path
    tree = experiment_tree(exp)
    work = [n for n in tree.nodes if n.region.name == "__main__:work"]
    assert sorted(sum(tree.visits[n.id]) for n in work if n.params) == [3, 3, 4]
    # 1. the end-of-run summary (stderr)
    rows = [line.split() for line in out.stderr.splitlines() if line.endswith("__main__:work")]
    assert len(rows) == 1 and rows[0][2] == "10", out.stderr
    # 2. the terminal report, which finds custom.cubex through scorep.cfg
    text = report(exp).stdout
    assert "profile custom.cubex" in text
    work_rows = [line.split() for line in text.splitlines()
                 if line.endswith("  __main__:work")]
    assert work_rows and all(r[6] == "10" for r in work_rows), text
    # 3. the Jupyter kernel's table of regions (_scorep.rows), read as its inline result is
    loaded, problem = results.load_tree(str(exp))
    assert problem is None
    kernel = {row["region"]: row["visits"] for row in results.region_rows(loaded.tree)}
    assert kernel["__main__:work"] == 10
    # and the pstats view: 10 calls, all primitive, from <module>
    funcs, edges = call_stats(tree)
    rid = work[0].region.id
    assert funcs[rid][:2] == [10, 10]
    sandwich = callers_and_callees(tree, rid)
    assert [(r.name, calls) for r, calls, _, _ in sandwich["callers"]] == [("__main__:<module>", 10)]
    # a directory without a profile or trace: a reason, not an exception
    none, problem = results.load_tree(str(tmp_path))
    assert none is None and "neither a profile" in problem


def _by_line(stats, filename):
    """{first line: (cc, nc, {caller line: (nc, cc)}, tt, ct)} of one file's functions."""
    out = {}
    for (file, line, name), (cc, nc, tt, ct, callers) in stats.items():
        if os.path.basename(file) == filename:
            out[line] = (cc, nc, {k[1]: v[:2] for k, v in callers.items()
                                  if os.path.basename(k[0]) == filename}, tt, ct)
    return out


def test_pstats_counts_recursion_as_cprofile_does(tmp_path):
    """Direct and mutual recursion: every function's calls, primitive calls and
    per-caller counts equal those of cProfile's own .prof of the same program, and no
    cumulative time exceeds the run (the bug: fib's 12.5 s in a 0.71 s run)."""
    script = program("recursion_mix.py")
    cprof = tmp_path / "cprofile.prof"
    out = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(cprof), script],
                         capture_output=True, text=True, env=scorep_env())
    assert out.returncode == 0, out.stderr
    exp = tmp_path / "exp"
    assert run_scorep(sys.executable, [script], exp, cwd=tmp_path).returncode == 0
    ours = tmp_path / "scorep.prof"
    assert report(exp, "-o", ours).returncode == 0
    theirs = _by_line(pstats.Stats(str(cprof)).stats, "recursion_mix.py")
    mine = _by_line(pstats.Stats(str(ours)).stats, "recursion_mix.py")
    assert sorted(mine) == sorted(theirs) == [1, 6, 10, 14, 18, 22]
    for line in theirs:
        assert mine[line][:3] == theirs[line][:3], (line, mine[line], theirs[line])
    # the numbers themselves, as pstats prints them: fib 465/1, its self-calls 464/2
    assert mine[10][:2] == (1, 465) and mine[10][2][10] == (464, 2)
    assert mine[14][:2] == (10, 30) and mine[18][:2] == (9, 25)
    st = pstats.Stats(str(ours))
    run = max(v[3] for v in st.stats.values())
    for key, (cc, nc, tt, ct, callers) in st.stats.items():
        assert tt <= ct + 1e-9 and ct <= run + 1e-9, key
        for caller, (cnc, ccc, ctt, cct) in callers.items():
            # gprof2dot's "ratio greater than one": a caller's share of a function's
            # time can not exceed the function's time
            assert cct <= ct + 1e-9 and ccc <= cnc, (key, caller)
    main = [v for k, v in st.stats.items() if k[2] == "__main__:main"][0]
    fib = [v for k, v in st.stats.items() if k[2] == "__main__:fib"][0]
    assert fib[3] <= main[3]
