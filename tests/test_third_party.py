"""Programs nobody here wrote, as a user runs them, on Debian's python3: networkx (pure
Python, the library whose Graph.__getitem__ issue 30 found counted 7 times of 110 000),
pandas (Python around compiled code), sympy (deep recursion, caches, operator overloading) and
dask (task graphs of closures run by its synchronous scheduler). The program's output is the plain run's; every function
of the library and of the program is visited as often as cProfile counts its calls in a run
of its own; the measured run's wall time is printed next to the plain run's and cProfile's
(no timed assertion). Skipped with the reason where the library is not installed."""

import os
import sys
import time

import pytest

from conftest import cprofile_stats, run, run_scorep, scorep_env
from scorep import cube

PYTHON = "/usr/bin/python3"

NETWORKX_APP = '''\
import sys
import networkx as nx

graph = nx.connected_watts_strogatz_graph(300, 6, 0.2, seed=7)
for u, v in graph.edges:
    graph[u][v]["weight"] = (u * 31 + v * 17) % 11 + 1
lengths = dict(nx.all_pairs_dijkstra_path_length(graph, cutoff=12))
ranks = nx.pagerank(graph, max_iter=200)
clustering = nx.average_clustering(graph)
neighbours = sum(len(graph[n]) for n in graph)
paths = sum(len(p) for p in nx.single_source_shortest_path(graph, 0).values())
print(sum(len(d) for d in lengths.values()), round(max(ranks.values()), 6),
      round(clustering, 6), neighbours, paths)
'''

PANDAS_APP = '''\
import pandas as pd
frame = pd.DataFrame({"group": [i % 7 for i in range(5000)],
                      "value": [i * 0.5 for i in range(5000)]})
frame["double"] = frame["value"].map(lambda v: v * 2)
summary = frame.groupby("group").agg({"value": "sum", "double": "mean"})
rows = sum(1 for _ in frame.itertuples())
print(round(summary["value"].sum(), 3), rows, len(frame.query("value > 100")))
'''

SYMPY_APP = '''\
import sympy as sp
x, y = sp.symbols("x y")
expr = sp.expand((x + y + 1) ** 6)
second = sp.diff(expr, x, 2)
simplified = sp.simplify(sp.sin(x) ** 2 + sp.cos(x) ** 2 + second.subs(y, 0).coeff(x, 2))
roots = sp.solve(x ** 2 - 5 * x + 6, x)
print(len(expr.args), simplified, sorted(roots), sp.integrate(x * sp.exp(x), x))
'''

# The synchronous scheduler runs every task in the main thread, where cProfile sees it (its
# threaded default would run them on threads cProfile does not profile).
DASK_APP = '''\
import dask
import dask.array as da
import dask.bag as db
dask.config.set(scheduler="synchronous")
squares = ((da.arange(200_000, chunks=20_000) * 2 + 1) ** 2).sum().compute()
bag = db.from_sequence(range(5000), npartitions=8)
evens = bag.filter(lambda v: v % 2 == 0) \\
           .map(lambda v: v * 3).sum().compute()
print(int(squares), evens)
'''


def skip_without(library):
    if not os.path.exists(PYTHON) or \
            run([PYTHON, "-c", "import " + library], env=scorep_env()).returncode != 0:
        pytest.skip("%s is not installed for %s (Debian: python3-%s)" % (library, PYTHON, library))


def visits_by_function(exp, library):
    p = cube.read(str(exp / "profile.cubex"))
    visits = p.values(p.metric("visits"), inclusive=False)
    found = {}
    for node in p.cnodes:
        region = node.region
        assert region.name != "COLLAPSE"  # every call path within the depth limit
        if region.file and region.file.endswith(".py") and \
                ("/%s/" % library in region.file or region.file.endswith("app.py")):
            function = region.name.rsplit(":", 1)[-1].rsplit(".", 1)[-1]
            key = "%s:%d:%s" % (os.path.realpath(region.file), region.begin_line, function)
            found[key] = found.get(key, 0) + sum(visits[node.id])
    return found


def compare_with_cprofile(tmp_path, library, program, deterministic=True):
    """Runs `program` plain, measured and under cProfile; returns (visits, cProfile's ncalls)
    of the library's and the program's functions, after checking output and completeness:
    equal counts, or for a library whose call counts vary from run to run by themselves
    (deterministic=False) counts within that variation."""
    skip_without(library)
    app = tmp_path / "app.py"
    app.write_text(program)
    started = time.perf_counter()
    # One hash seed for the three runs: sympy's sets (and any library's) iterate in the same
    # order, so the same code paths run in each.
    seed = {"PYTHONHASHSEED": "0"}
    plain = run([PYTHON, app], env=scorep_env(**seed), cwd=tmp_path)
    plain_s = time.perf_counter() - started
    assert plain.returncode == 0, plain.stderr

    started = time.perf_counter()
    out = run_scorep(PYTHON, [app], tmp_path / "exp", cwd=tmp_path, **seed)
    measured_s = time.perf_counter() - started
    assert (out.returncode, out.stdout, out.stderr) == (0, plain.stdout, "")

    started = time.perf_counter()
    stats = cprofile_stats(PYTHON, str(app), [], tmp_path, cwd=tmp_path, **seed)
    cprofile_s = time.perf_counter() - started
    # cProfile's ncalls per (file, first line, name) of the library's and the program's
    # functions (what visits count: recursive calls included).
    expected = {"%s:%d:%s" % (os.path.realpath(f.file), f.line, f.name): f.ncalls
                for f in stats if f.file.endswith(".py")
                and ("/%s/" % library in f.file or f.file == str(app))}

    visits = visits_by_function(tmp_path / "exp", library)
    # cProfile names a function by its code's name; scorep by module[.Class]:function, whose
    # last part is the same name: keys of both are (file, first line, function name).
    if deterministic:
        missing = {k: v for k, v in expected.items()
                   if k not in visits and not k.endswith(":<module>")}
        assert not missing, sorted(missing.items())[:10]
        differ = {k: (visits[k], n) for k, n in expected.items() if k in visits and visits[k] != n}
        assert not differ, sorted(differ.items())[:10]
    else:
        # Two cProfile runs of the sympy program with one hash seed differ in 179 of 4 128
        # functions (id()-ordered sets, unseeded random in factorisation): up to 30% for a
        # function called 150 times, 1.2% for one called 32 000 times. An undercount such as
        # issue 30's (7 of 110 000) is far outside that.
        missing = {k: v for k, v in expected.items() if k not in visits and v >= 100}
        assert not missing, sorted(missing.items())[:10]
        differ = {k: (visits.get(k, 0), n) for k, n in expected.items()
                  if n >= 1000 and abs(visits.get(k, 0) - n) > 0.1 * n}
        assert not differ, sorted(differ.items())[:10]
        assert abs(sum(visits.values()) - sum(expected.values())) < 0.03 * sum(expected.values())
    sys.stderr.write("%s: plain %.2f s, scorep %.2f s, cProfile %.2f s\n"
                     % (library, plain_s, measured_s, cprofile_s))
    return visits, expected


def test_networkx_visits_equal_cprofile_and_output_is_the_plain_runs(tmp_path):
    _visits, expected = compare_with_cprofile(tmp_path, "networkx", NETWORKX_APP)
    getitem = sum(n for k, n in expected.items()
                  if "networkx/classes/graph.py:" in k and k.endswith(":__getitem__"))
    assert getitem > 1000  # Graph.__getitem__, counted 7 times on 3.11.2 before issue 30


def test_pandas_visits_equal_cprofile_and_output_is_the_plain_runs(tmp_path):
    visits, expected = compare_with_cprofile(tmp_path, "pandas", PANDAS_APP)
    assert len(expected) > 500  # pandas' Python layer, function by function
    assert sum(n for k, n in visits.items() if "/app.py:" in k and k.endswith(":<lambda>")) \
        == 5000  # the program's own lambda, called by Series.map


def test_sympy_visits_equal_cprofile_and_output_is_the_plain_runs(tmp_path):
    _visits, expected = compare_with_cprofile(tmp_path, "sympy", SYMPY_APP, deterministic=False)
    assert len(expected) > 1000  # sympy's own functions, each compared
    # Basic.__hash__-style dunders called through operators, counted one by one.
    assert max(expected.values()) > 10_000


def test_dask_visits_equal_cprofile_and_output_is_the_plain_runs(tmp_path):
    visits, expected = compare_with_cprofile(tmp_path, "dask", DASK_APP)
    assert len(expected) > 300
    # The program's two lambdas, run as tasks by dask's scheduler: 5000 and 2500 calls.
    lambdas = sorted(n for k, n in visits.items() if "/app.py:" in k and k.endswith(":<lambda>"))
    assert lambdas == [2500, 5000]
