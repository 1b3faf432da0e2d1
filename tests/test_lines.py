"""Line-level profiles of chosen functions (--lines, scorep.user.lines): hits and time per
line as line_profiler counts them, on every interpreter, read back from lines.json, shown
by scorep-report --lines, exported as .lprof that line_profiler's own reader loads, in the
HTML report's source view, and per rank under mpirun; the profile and the trace of the same
run are unaffected."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, SRC, Trace, program, run, run_scorep, scorep_env

PROGRAM = program("lines_program.py")
PATTERNS = "__main__:loop,__main__:inner,__main__:numbers"


def source_line(text):
    """The line number of `text` in the test program."""
    with open(PROGRAM) as f:
        for number, line in enumerate(f, 1):
            if line.strip() == text:
                return number
    raise AssertionError(text)


def lines_of(exp):
    """{(thread, function name): {line: (hits, seconds)}} from lines.json."""
    with open(exp / "lines.json") as f:
        data = json.load(f)
    assert data["format"] == "scorep-lines 1"
    names = {int(k): v["name"] for k, v in data["functions"].items()}
    out = {}
    for loc in data["locations"]:
        for region, line, hits, seconds in loc["lines"]:
            out.setdefault((loc["thread"], names[region]), {})[line] = (hits, seconds)
    return out, data


def report(*args):
    return run([sys.executable, "-m", "scorep.report"] + [str(a) for a in args],
               env=scorep_env())


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """The test program measured with line profiles (Debian's python3), with tracing."""
    tmp = tmp_path_factory.mktemp("lines")
    exp = tmp / "exp"
    out = run_scorep(sys.executable, ["--lines=" + PATTERNS, PROGRAM], exp, cwd=tmp,
                     SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "4950 332833500 28 3\n"
    return exp


def test_hits_and_times_per_line_on_every_interpreter(python, tmp_path):
    exp = tmp_path / "exp"
    out = run_scorep(python, ["--lines=" + PATTERNS, PROGRAM], exp, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "4950 332833500 28 3\n"
    got, data = lines_of(exp)
    loop_body = source_line("total += i * i")
    loop_header = loop_body - 1
    # loop(1000): the header is hit once per iteration and once more at the end
    loop = got[("MainThread", "__main__:loop")]
    assert loop_header == loop_body - 1 or loop_header < loop_body
    assert loop[loop_body][0] == 1000
    assert loop[loop_body + 1][0] == 1  # return total
    assert {line for line in loop} == {loop_body - 2, loop_body - 1, loop_body, loop_body + 1}
    assert loop[loop_body - 1][0] == 1001
    # the thread's own call, loop(50), is its own location
    assert got[("worker", "__main__:loop")][loop_body][0] == 50
    # the decorated function (@scorep.user.lines over another decorator): its own lines
    decorated = got[("MainThread", "__main__:decorated")]
    pause = source_line("pause()")
    assert decorated[pause - 1][0] == 100  # total += i
    # the line calling a sleeping function gets the sleep
    assert decorated[pause][0] == 1 and decorated[pause][1] >= 0.05
    assert decorated[pause][1] == max(seconds for _, seconds in decorated.values())
    # a nested function chosen by its region name
    inner = got[("MainThread", "__main__:inner")]
    assert inner == {source_line("return k + 1"): (7, inner[source_line("return k + 1")][1])}
    # a generator's time while it is suspended (the consumer sleeps 3 x 30 ms) is not its
    numbers = got[("MainThread", "__main__:numbers")]
    assert numbers[source_line("yield i")][0] == 3
    assert sum(seconds for _, seconds in numbers.values()) < 0.02
    # functions not chosen have no lines; each function is described once
    assert {v["name"] for v in data["functions"].values()} == {
        "__main__:loop", "__main__:inner", "__main__:numbers", "__main__:decorated"}
    assert all(v["file"] == PROGRAM for v in data["functions"].values())
    first_lines = {v["name"]: v["first_line"] for v in data["functions"].values()}
    assert first_lines["__main__:decorated"] == source_line("@scorep.user.lines")
    assert first_lines["__main__:loop"] == source_line("def loop(n):")


def test_profile_and_trace_are_unaffected(measured, tmp_path):
    plain = tmp_path / "plain"
    out = run_scorep(sys.executable, [PROGRAM], plain, cwd=tmp_path,
                     SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    # without --lines only the function decorated with @scorep.user.lines has lines
    assert {name for _, name in lines_of(plain)[0]} == {"__main__:decorated"}
    from scorep import cube
    visits = {}
    for name, exp in (("lines", measured), ("plain", plain)):
        profile = cube.read(str(exp / "profile.cubex"))
        values = profile.values(profile.metric("visits"), inclusive=False)
        per_region = {}
        for c in profile.cnodes:
            per_region[c.region.name] = per_region.get(c.region.name, 0) + sum(values[c.id])
        visits[name] = per_region
        trace = Trace(exp)
        trace.check_nesting()
        assert trace.enters("__main__:loop") == 2 and trace.enters("__main__:inner") == 7
    assert visits["lines"] == visits["plain"]


def test_report_lines_in_line_profilers_layout(measured):
    out = report(measured, "--lines")
    assert out.returncode == 0, out.stderr
    text = out.stdout.splitlines()
    assert text[0] == "Timer unit: 1e-06 s"
    start = text.index("Function: loop at line %d" % source_line("def loop(n):"))
    assert text[start - 1] == "File: %s" % PROGRAM
    assert text[start + 2] == ("Line #      Hits         Time  Per Hit   % Time  "
                               "Line Contents")
    assert text[start + 3] == "=" * 62
    rows = text[start + 4:start + 9]  # def, total = 0, for, body, return
    body = source_line("total += i * i")
    assert rows[0].split() == [str(body - 3), "def", "loop(n):"]
    fields = rows[3].split()
    assert fields[0] == str(body) and fields[1] == "1050"  # both threads' calls
    assert rows[3].endswith("        total += i * i")
    # time and per hit agree (microseconds, one decimal)
    assert abs(float(fields[2]) / 1050 - float(fields[3])) <= 0.051
    # per thread on request
    out = report(measured, "--lines", "--by-location")
    assert out.returncode == 0, out.stderr
    assert "=== MainThread ===" in out.stdout and "=== worker ===" in out.stdout


@pytest.mark.skipif(not os.path.exists("/usr/lib/python3/dist-packages/line_profiler"),
                    reason="needs Debian's python3-line-profiler")
def test_lprof_export_loads_in_line_profiler(measured, tmp_path):
    lprof = tmp_path / "lines.lprof"
    out = report(measured, "-o", lprof)
    assert out.returncode == 0, out.stderr
    assert out.stdout == ("wrote %s: line profiles of 4 function(s) (python -m line_profiler "
                          "%s)\n" % (lprof, lprof))
    shown = run(["/usr/bin/python3", "-m", "line_profiler", str(lprof)])
    assert shown.returncode == 0, shown.stderr
    body = source_line("total += i * i")
    rows = [line.split() for line in shown.stdout.splitlines()]
    # MainThread's loop(1000) and the worker's loop(50), summed
    assert [str(body), "1050"] in [r[:2] for r in rows]
    assert "Function: inner at line %d" % source_line("def inner(k):") in shown.stdout
    loaded = run(["/usr/bin/python3", "-c", "import pickle,sys; s=pickle.load(open(sys.argv[1],"
                  "'rb')); print(s.unit, sorted(k[2] for k in s.timings))", str(lprof)])
    assert loaded.stdout == "1e-09 ['decorated', 'inner', 'loop', 'numbers']\n", loaded.stderr


def test_no_line_profiles_and_bad_patterns_say_so(tmp_path):
    exp = tmp_path / "exp"
    out = run_scorep(sys.executable, [program("calls.py")], exp, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    out = report(exp, "--lines")
    assert out.returncode == 1
    assert out.stderr.startswith("scorep-report: %s has no line profiles (lines.json): "
                                 "measure with --lines=PATTERNS" % exp)
    out = run_scorep(sys.executable, ["--lines=__main__:f,,x", program("calls.py")], exp,
                     cwd=tmp_path)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr == ("scorep: SCOREP_PYTHON_LINES='__main__:f,,x' has an empty pattern "
                          "(comma-separated region names such as mymod:hot_*,__main__:f)\n")


def test_decorator_without_measurement_changes_nothing(tmp_path):
    out = run([sys.executable, PROGRAM], env=scorep_env())
    assert out.returncode == 0 and out.stdout == "4950 332833500 28 3\n", out.stderr


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun is not installed")
def test_ranks_write_their_lines_into_one_experiment(tmp_path):
    script = tmp_path / "ranks.py"
    script.write_text("from mpi4py import MPI\n"
                      "def work(n):\n"
                      "    total = 0\n"
                      "    for i in range(n):\n"
                      "        total += i\n"
                      "    return total\n"
                      "rank = MPI.COMM_WORLD.Get_rank()\n"
                      "work(10 * (rank + 1))\n"
                      "MPI.COMM_WORLD.Barrier()\n")
    env = scorep_env(tmp_path / "exp")
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    out = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", sys.executable, "-m",
                          "scorep", "--mpp=mpi", "--lines=__main__:work", str(script)],
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    with open(tmp_path / "exp" / "lines.json") as f:
        data = json.load(f)
    body = {loc["rank"]: [hits for _, line, hits, _ in loc["lines"] if line == 5]
            for loc in data["locations"]}
    assert body == {0: [10], 1: [20]}


BROWSER = REPO / "src" / "scorep" / "report" / "js" / "node_modules" / "puppeteer-core"


@pytest.mark.skipif(not (os.path.exists("/usr/bin/chromium") and shutil.which("node") and
                         BROWSER.is_dir()), reason="needs chromium, node and puppeteer-core")
def test_html_source_view_has_a_heat_column(measured, tmp_path):
    from test_report_browser import drive
    page = tmp_path / "report.html"
    out = report(measured, "-o", page)
    assert out.returncode == 0, out.stderr
    got = drive(page, tmp_path, select="__main__:loop")
    heat = dict(got["steps"]["select"]["heat"])
    body = source_line("total += i * i")
    assert heat[str(body)] == "1050" and heat[str(body - 1)] == "1052"
    assert str(body - 3) not in heat  # the def line ran no line event


def test_dotted_spelling_and_a_pattern_that_matches_nothing(tmp_path):
    """cProfile's and line_profiler's users write pkg.mod.func: `__main__.loop` chooses
    `__main__:loop` (and a wildcard `__main__.numb*` chooses `__main__:numbers`), and the same
    functions get the same hits as with the colon spelling. A pattern that chose no function
    is said in one line (stderr and MANIFEST.md), never an empty result without a word."""
    exp = tmp_path / "exp"
    out = run_scorep(sys.executable, ["--lines=__main__.loop,__main__.numb*,nosuch.mod.f",
                                      PROGRAM], exp, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "4950 332833500 28 3\n"
    note = ("--lines: 'nosuch.mod.f' matched no function that ran (patterns match region "
            "names, module[.Class]:function or pkg.mod.func, with * ? [...])")
    assert out.stderr == "scorep: " + note + "\n"
    assert "- " + note in (exp / "MANIFEST.md").read_text()
    dotted, _ = lines_of(exp)
    assert sorted({name for _, name in dotted}) == ["__main__:decorated", "__main__:loop",
                                                     "__main__:numbers"]
    exp2 = tmp_path / "exp2"
    out = run_scorep(sys.executable, ["--lines=__main__:loop,__main__:numbers", PROGRAM], exp2,
                     cwd=tmp_path)
    assert (out.returncode, out.stderr) == (0, "")
    colon, _ = lines_of(exp2)
    assert {key: {line: hits for line, (hits, _) in per_line.items()}
            for key, per_line in dotted.items()} == \
        {key: {line: hits for line, (hits, _) in per_line.items()}
         for key, per_line in colon.items()}
