"""Programs nobody here wrote, as a user runs them: networkx (Debian's python3-networkx, pure
Python, the library whose Graph.__getitem__ issue 30 found counted 7 times of 110 000) on
Debian's python3. The program's output is the plain run's; every function of networkx and of
the program is visited as often as cProfile counts its calls in a run of its own; the
measured run's wall time is printed next to the plain run's and cProfile's (no timed
assertion). Skipped with the reason where networkx is not installed."""

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
               if fn.endswith(".py") and ("networkx" in fn or fn == script)}, f)
"""


def _has_networkx():
    out = run([PYTHON, "-c", "import networkx"], env=scorep_env())
    return out.returncode == 0


pytestmark = pytest.mark.skipif(
    not os.path.exists(PYTHON) or not _has_networkx(),
    reason="networkx is not installed for %s (Debian: python3-networkx)" % PYTHON)


def visits_by_function(exp):
    p = cube.read(str(exp / "profile.cubex"))
    visits = p.values(p.metric("visits"), inclusive=False)
    found = {}
    for node in p.cnodes:
        region = node.region
        assert region.name != "COLLAPSE"  # every call path within the depth limit
        if region.file and region.file.endswith(".py") and \
                ("networkx" in region.file or region.file.endswith("app.py")):
            function = region.name.rsplit(":", 1)[-1].rsplit(".", 1)[-1]
            key = "%s:%d:%s" % (os.path.realpath(region.file), region.begin_line, function)
            found[key] = found.get(key, 0) + sum(visits[node.id])
    return found


def test_networkx_visits_equal_cprofile_and_output_is_the_plain_runs(tmp_path):
    app = tmp_path / "app.py"
    app.write_text(NETWORKX_APP)
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
    profiled = run([PYTHON, "-c", CPROFILE, str(app), counts], env=scorep_env(), cwd=tmp_path)
    cprofile_s = time.perf_counter() - started
    assert profiled.returncode == 0, profiled.stderr
    expected = json.loads(counts.read_text())

    visits = visits_by_function(tmp_path / "exp")
    # cProfile names a function by its code's name; scorep by module[.Class]:function, whose
    # last part is the same name: keys of both are (file, first line, function name).
    missing = {k: v for k, v in expected.items() if k not in visits and not k.endswith(":<module>")}
    assert not missing, sorted(missing.items())[:10]
    differ = {k: (visits[k], n) for k, n in expected.items() if k in visits and visits[k] != n}
    assert not differ, sorted(differ.items())[:10]
    getitem = sum(n for k, n in expected.items()
                  if "networkx/classes/graph.py:" in k and k.endswith(":__getitem__"))
    assert getitem > 1000  # Graph.__getitem__, counted 7 times on 3.11.2 before issue 30
    sys.stderr.write("networkx: plain %.2f s, scorep %.2f s, cProfile %.2f s\n"
                     % (plain_s, measured_s, cprofile_s))
