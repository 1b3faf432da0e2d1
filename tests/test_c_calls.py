"""C functions called from Python are regions (issue 31, part 1): what cProfile records as C
calls (builtins, methods of C types) is recorded under its Python caller with cProfile's
counts, named module[.Type]:function, of paradigm compiler, spelled as cProfile spells it in
the .prof export; a C function that raises leaves the stack balanced; C functions that call
back into Python nest; filters apply; --no-c-calls switches it off. Compared with the
measured interpreter's own cProfile on every interpreter."""

import json
import marshal
import os

import pytest

from conftest import Trace, program, python_version, run, run_scorep, scorep_env
from scorep import cube

N = 40
SCRIPT = os.path.abspath(program("c_calls.py"))

# The measured interpreter's cProfile: calls of each C function per calling function of the
# program, as {"<caller first line> <caller name> <cProfile's spelling>": ncalls}.
CPROFILE_C_CALLS = """
import cProfile, json, os, pstats, runpy, sys
script, n, out = sys.argv[1], sys.argv[2], sys.argv[3]
sys.argv = [script, n]
profiler = cProfile.Profile()
profiler.enable()
try:
    runpy.run_path(script, run_name="__main__")
finally:
    profiler.disable()
counts = {}
for (fn, line, name), (cc, nc, tt, ct, callers) in pstats.Stats(profiler).stats.items():
    if fn != "~" or name.startswith("<method 'disable'"):
        continue
    for (cfn, cline, cname), value in callers.items():
        if os.path.abspath(cfn) == os.path.abspath(script):
            key = "%d %s %s" % (cline, cname, name)
            counts[key] = counts.get(key, 0) + value[0]
json.dump(counts, open(out, "w"))
"""


def cprofile_c_calls(python, tmp_path, script=SCRIPT, n=N):
    out_file = tmp_path / "cprofile.json"
    out = run([python, "-c", CPROFILE_C_CALLS, script, n, out_file], env=scorep_env())
    assert out.returncode == 0, out.stderr
    return json.loads(out_file.read_text())


def c_calls_by_caller(exp, script=SCRIPT):
    """The same from our profile: visits of each C region (paradigm compiler, its mangled
    name cProfile's spelling) per calling function of the program."""
    p = cube.read(str(exp / "profile.cubex"))
    visits = p.values(p.metric("visits"), inclusive=False)
    counts = {}
    for node in p.cnodes:
        region, parent = node.region, node.parent
        if not region.paradigm.startswith("compiler") or parent is None:
            continue
        caller = parent.region
        if caller.file and os.path.abspath(caller.file) == script:
            key = "%d %s %s" % (caller.begin_line, caller.name.rsplit(":", 1)[-1],
                                region.mangled_name)
            counts[key] = counts.get(key, 0) + sum(visits[node.id])
    return p, counts


def measure(python, tmp_path, *options, **env):
    tmp_path.mkdir(exist_ok=True)
    exp = tmp_path / "exp"
    out = run_scorep(python, list(options) + [SCRIPT, N], exp, cwd=tmp_path, **env)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    plain = run([python, SCRIPT, N], env=scorep_env())
    assert out.stdout == plain.stdout
    return exp


def test_c_calls_equal_cprofile(python, tmp_path):
    exp = measure(python, tmp_path, "--c-calls")
    p, ours = c_calls_by_caller(exp)
    expected = cprofile_c_calls(python, tmp_path)
    assert ours == expected
    # The profile hook as the instrumenter (its c_call events) records the same.
    exp_hook = measure(python, tmp_path / "hook", "--c-calls", "--instrumenter-type=cProfile")
    assert c_calls_by_caller(exp_hook)[1] == expected
    # What the program does, spelled out (N iterations; 100 elements sorted with a key).
    assert ours["10 key <built-in method builtins.abs>"] == N * 105
    assert ours["27 work <built-in method builtins.sorted>"] == N
    assert ours["27 work <method 'sort' of 'list' objects>"] == N
    assert ours["27 work <built-in method time.sleep>"] == N
    assert ours["27 work <built-in method zlib.compress>"] == N
    assert ours["27 work <method 'acquire' of '_thread.lock' objects>"] == N
    assert ours["27 work <method 'release' of '_thread.lock' objects>"] == N
    assert ours["14 bad_data <built-in method zlib.decompress>"] == N
    # Names by our rule, paradigm compiler with the module as region group (CUBE's
    # "compiler:<group>"), no source file.
    regions = {r.name: r for r in p.regions}
    for name, group in (("time:sleep", "time"), ("builtins:sorted", "builtins"),
                        ("builtins.list:sort", "builtins"), ("_thread.lock:acquire", "_thread"),
                        ("zlib:decompress", "zlib")):
        assert regions[name].paradigm == "compiler:" + group
        assert regions[name].file == ""
    # Calling a class is no C region (__main__:Box is its body, run once at its definition):
    # Box's __init__ is the Python function it runs.
    assert [r for r in regions if r.endswith(":Box")] == ["__main__:Box"]
    assert regions["__main__:Box"].paradigm == "user:__main__"
    assert "__main__.Box:__init__" in regions


def test_callbacks_nest_and_raising_c_function_leaves(python, tmp_path):
    exp = measure(python, tmp_path, "--c-calls", SCOREP_ENABLE_TRACING="true")
    p = cube.read(str(exp / "profile.cubex"))
    paths = {tuple(n.path()) for n in p.cnodes}
    work = ("c_calls.py", "__main__:<module>", "__main__:work")
    # sorted calls key, which calls abs: C -> Python -> C.
    assert work + ("builtins:sorted", "__main__:key", "builtins:abs") in paths
    # map's callbacks run inside sum, which drives the iterator; map itself is a class.
    assert work + ("builtins:sum", "__main__:key", "builtins:abs") in paths
    # The raising C function is a leaf under its caller; nothing after it is nested in it.
    assert work + ("__main__:bad_data", "zlib:decompress") in paths
    assert not [path for path in paths if "zlib:decompress" in path[:-1]]
    # The trace: every enter of zlib:decompress has its leave, and every location's stack
    # ends empty.
    trace = Trace(exp)
    depth = {}
    decompress = 0
    for e in trace.events:
        if e.kind == "Enter":
            depth[e.location] = depth.get(e.location, 0) + 1
            decompress += e.region == "zlib:decompress"
        elif e.kind == "Leave":
            depth[e.location] -= 1
            decompress -= e.region == "zlib:decompress"
            assert depth[e.location] >= 0
        assert decompress in (0, 1)
    assert decompress == 0 and set(depth.values()) == {0}
    assert len([e for e in trace.events if e.region == "zlib:decompress"]) == 2 * N


def test_filter_applies_to_c_regions(python, tmp_path):
    filter_file = tmp_path / "c.filter"
    filter_file.write_text("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE builtins:sorted time:*\n"
                           "  EXCLUDE MANGLED <method?'sort'?of?'list'?objects>\n"
                           "SCOREP_REGION_NAMES_END\n")
    exp = measure(python, tmp_path, "--filter=%s" % filter_file, SCOREP_PYTHON_C_CALLS="true")
    p, ours = c_calls_by_caller(exp)
    names = {r.name for r in p.regions}
    assert not {"builtins:sorted", "time:sleep", "builtins.list:sort"} & names
    # key, called by the filtered sorted, is under work now; the others are unchanged.
    paths = {tuple(n.path()) for n in p.cnodes}
    assert ("c_calls.py", "__main__:<module>", "__main__:work", "__main__:key",
            "builtins:abs") in paths
    assert ours["27 work <built-in method zlib.compress>"] == N
    assert ours["10 key <built-in method builtins.abs>"] == N * 105


def test_on_by_default_from_312(python, tmp_path):
    """On by default where sys.monitoring reports C calls; before 3.12 only the profile hook
    does, at about cProfile's cost (README, Benchmarks), so there it is asked for."""
    exp = measure(python, tmp_path)
    p = cube.read(str(exp / "profile.cubex"))
    c_regions = {r.name for r in p.regions if r.paradigm.startswith("compiler")}
    if python_version(python) >= (3, 12):
        assert {"builtins:sorted", "time:sleep", "zlib:decompress"} <= c_regions
    else:
        assert c_regions == set()
    assert "__main__:key" in {r.name for r in p.regions}


def test_no_c_calls(python, tmp_path):
    for how, options, env in (("option", ["--no-c-calls"], {}),
                              ("variable", [], {"SCOREP_PYTHON_C_CALLS": "false"})):
        exp = measure(python, tmp_path / how, *options, **env)
        p = cube.read(str(exp / "profile.cubex"))
        assert [r.name for r in p.regions if r.paradigm.startswith("compiler")] == [], how
        assert "__main__:key" in {r.name for r in p.regions}


def test_pstats_export_spells_c_functions_as_cprofile(python, tmp_path):
    exp = measure(python, tmp_path, "--c-calls")
    prof = tmp_path / "out.prof"
    out = run([python, "-m", "scorep.report", exp, "-o", prof], env=scorep_env())
    assert out.returncode == 0, out.stderr
    stats = marshal.loads(prof.read_bytes())
    ours = {name: nc for (fn, line, name), (cc, nc, tt, ct, callers) in stats.items()
            if fn == "~" and name.startswith("<")}
    assert ours["<built-in method time.sleep>"] == N
    assert ours["<method 'acquire' of '_thread.lock' objects>"] == N
    assert ours["<built-in method builtins.abs>"] == N * 105
    # What pstats prints for them: cProfile's braces.
    shown = run([python, "-c", "import pstats,sys; pstats.Stats(sys.argv[1]).print_stats()",
                 prof], env=scorep_env())
    assert "{built-in method time.sleep}" in shown.stdout
    assert "{method 'sort' of 'list' objects}" in shown.stdout


NUMPY_PROGRAM = """
import numpy as np

def compute(n):
    a = np.ones((40, 40))
    total = 0.0
    for _ in range(n):
        total += float(np.exp(a).sum()) + float(a.dot(a)[0, 0])
        total += float(np.add(a, a)[0, 0])
    return total

print(compute(5))
"""


def test_numpy_ufuncs_and_ndarray_methods(tmp_path):
    python = "/usr/bin/python3"
    if run([python, "-c", "import numpy"]).returncode != 0:
        pytest.skip("numpy is not installed for %s" % python)
    script = tmp_path / "np_prog.py"
    script.write_text(NUMPY_PROGRAM)
    exp = tmp_path / "exp"
    out = run_scorep(python, ["--c-calls", script], exp, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    p = cube.read(str(exp / "profile.cubex"))
    visits = p.values(p.metric("visits"), inclusive=False)
    by_path = {}
    for n in p.cnodes:
        by_path[tuple(n.path()[-2:])] = by_path.get(tuple(n.path()[-2:]), 0) + sum(visits[n.id])
    assert by_path[("__main__:compute", "numpy.ndarray:dot")] == 5
    assert by_path[("__main__:compute", "numpy.ndarray:sum")] == 5
    regions = {r.name: r for r in p.regions}
    assert regions["numpy.ndarray:dot"].mangled_name == \
        "<method 'dot' of 'numpy.ndarray' objects>"
    assert regions["numpy.ndarray:dot"].paradigm == "compiler:numpy"
    if python_version(python) >= (3, 12):
        assert by_path[("__main__:compute", "numpy:exp")] == 5
        assert by_path[("__main__:compute", "numpy:add")] == 5
        assert regions["numpy:exp"].mangled_name == "<ufunc 'exp'>"
    else:
        # Before 3.12 the profile hook reports calls of builtin functions only: a ufunc's
        # time is its caller's, as in cProfile.
        assert "numpy:exp" not in regions and "numpy:add" not in regions


# A program that installs profilers of its own while C calls are watched: the pure-Python
# profile module (whose "Bad return" assertion fails on a return it did not see called), a
# hook that lists its events, one for all threads (3.12+), a profiler replaced by another,
# cProfile, and an audit hook that refuses sys.setprofile.
OWN_PROFILERS = """
import cProfile, io, profile, pstats, sys, threading

def work():
    return sorted([3, 1, 2], key=abs) + [len("ab")]

p = profile.Profile()
p.runcall(work)
s = io.StringIO()
pstats.Stats(p, stream=s).sort_stats("name").print_stats()
print(sorted(name for (fn, line, name) in p.stats if fn == "~"))

events = []
def hook(frame, event, arg):
    events.append((event, frame.f_code.co_name, getattr(arg, "__name__", None)))
sys.setprofile(hook)
work()
sys.setprofile(hook)
sys.setprofile(None)
print(events)

if hasattr(threading, "setprofile_all_threads"):
    events.clear()
    threading.setprofile_all_threads(hook)
    work()
    threading.setprofile_all_threads(None)
    print(events)

c = cProfile.Profile()
c.runcall(work)
print(sorted(name for (fn, line, name) in pstats.Stats(c).stats if fn == "~"))

print(sys.setprofile.__name__, sys.setprofile.__module__, sys.setprofile.__doc__.split("\\n")[0])

def audit(event, args):
    if event == "sys.setprofile":
        raise RuntimeError("no profilers here")
sys.addaudithook(audit)
try:
    sys.setprofile(hook)
except RuntimeError as e:
    print("refused:", e, sys.getprofile())
"""


def test_program_profilers_see_what_they_see_without_us(python, tmp_path):
    """On 3.12+ sys.setprofile is a sys.monitoring tool too: with our CALL events on, the call
    site of sys.setprofile reported the return of that very call to the profiler it had just
    installed (and the profile module failed its "Bad return" assertion, CPython's
    test_cprofile). Before 3.12 our profile hook, which records the C calls, made the
    interpreter report the return of that call to the profile function installed by it
    (CPython's test_profile). The program's profilers see exactly the events they see
    without us."""
    script = tmp_path / "own_profilers.py"
    script.write_text(OWN_PROFILERS)
    plain = run([python, script], env=scorep_env())
    assert plain.returncode == 0, plain.stderr
    assert "('c_call', 'work', 'sorted')" in plain.stdout
    out = run_scorep(python, ["--c-calls", script], tmp_path / "exp", cwd=tmp_path)
    assert out.stderr == ""
    assert out.returncode == 0
    assert out.stdout == plain.stdout
    # and ours recorded the C calls, sys.setprofile among them
    p = cube.read(str(tmp_path / "exp" / "profile.cubex"))
    names = {r.name for r in p.regions if r.paradigm.startswith("compiler")}
    assert {"builtins:sorted", "sys:setprofile"} <= names
