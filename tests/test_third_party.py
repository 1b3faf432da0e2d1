"""Programs nobody here wrote, as a user runs them, on Debian's python3: networkx (pure
Python, the library whose Graph.__getitem__ issue 30 found counted 7 times of 110 000) and
pandas (Python around compiled code). The program's output is the plain run's; every function
of the library and of the program is visited as often as cProfile counts its calls in a run
of its own; the measured run's wall time is printed next to the plain run's and cProfile's
(no timed assertion). Skipped with the reason where the library is not installed."""

import json
import os
import sys
import time

import pytest

from conftest import run, run_scorep, scorep_env
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

# Run by the interpreter itself: cProfile's ncalls per (file, first line, name) of networkx's
# and the program's functions (what visits count: recursive calls included).
CPROFILE = """
import cProfile, json, os, pstats, runpy, sys
script, out = sys.argv[1], sys.argv[2]
profiler = cProfile.Profile()
profiler.enable()
try:
    runpy.run_path(script, run_name="__main__")
finally:
    profiler.disable()
stats = pstats.Stats(profiler).stats
with open(out, "w") as f:
    json.dump({"%s:%d:%s" % (os.path.realpath(fn), line, name): nc
               for (fn, line, name), (cc, nc, tt, ct, callers) in stats.items()
               if fn.endswith(".py") and ("/%s/" % sys.argv[3] in fn or fn == script)}, f)
"""


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


def compare_with_cprofile(tmp_path, library, program):
    """Runs `program` plain, measured and under cProfile; returns (visits, cProfile's ncalls)
    of the library's and the program's functions, after checking output and completeness."""
    skip_without(library)
    app = tmp_path / "app.py"
    app.write_text(program)
    started = time.perf_counter()
    plain = run([PYTHON, app], env=scorep_env(), cwd=tmp_path)
    plain_s = time.perf_counter() - started
    assert plain.returncode == 0, plain.stderr

    started = time.perf_counter()
    out = run_scorep(PYTHON, [app], tmp_path / "exp", cwd=tmp_path)
    measured_s = time.perf_counter() - started
    assert (out.returncode, out.stdout, out.stderr) == (0, plain.stdout, "")

    counts = tmp_path / "cprofile.json"
    started = time.perf_counter()
    profiled = run([PYTHON, "-c", CPROFILE, str(app), counts, library], env=scorep_env(),
                   cwd=tmp_path)
    cprofile_s = time.perf_counter() - started
    assert profiled.returncode == 0, profiled.stderr
    expected = json.loads(counts.read_text())

    visits = visits_by_function(tmp_path / "exp", library)
    # cProfile names a function by its code's name; scorep by module[.Class]:function, whose
    # last part is the same name: keys of both are (file, first line, function name).
    missing = {k: v for k, v in expected.items() if k not in visits and not k.endswith(":<module>")}
    assert not missing, sorted(missing.items())[:10]
    differ = {k: (visits[k], n) for k, n in expected.items() if k in visits and visits[k] != n}
    assert not differ, sorted(differ.items())[:10]
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
