"""Folded imports in the reports (scorep.report.imports): importlib's frames become one
`import NAME` node per imported module, totals unchanged; --show-imports shows them as
recorded; the load balance ranks the program's own functions first.

A trace written with python3-otf2 gives exact times (2 ranks, an import of the program's
package, mpi4py's extension import holding MPI_Init_thread, compute twice as long on rank
0); real runs check the names CPython's importlib has on every interpreter and a real
2-rank MPI run."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import run_scorep, scorep_env
from test_report_support import report

sys.path.insert(0, str(__import__("conftest").SRC))
from scorep.report.analysis import load_balance  # noqa: E402
from scorep.report.imports import is_import_machinery  # noqa: E402
from scorep.report.readers import Experiment  # noqa: E402

US = 1000  # ns
MPI_INIT_END = (60000, 90000)  # us, per rank: MPI_Init_thread varies more than compute
COMPUTE = (40000, 20000)       # us, per rank: the 2x imbalance


def write_import_trace(path):
    """Per rank r (us): <module> 10..; _find_and_load 20..5500 > _load_unlocked 30..5400 >
    exec_module 40..5300 > shapes:<module> 100..5200 > shapes:setup 110..5110; then
    _handle_fromlist 5600.. > _call_with_frames_removed > _find_and_load >
    ExtensionFileLoader:exec_module > MPI_Init_thread 5800..MPI_INIT_END[r]; compute for
    COMPUTE[r]; MPI_Barrier until 200000; <module> ends 200100, the program 200200."""
    import otf2
    from otf2.enums import LocationGroupType, LocationType, Paradigm, RegionRole
    with otf2.writer.open(str(path), timer_resolution=1_000_000_000) as trace:
        d = trace.definitions
        machine = d.system_tree_node("machine Linux")
        node = d.system_tree_node("node n1", parent=machine)
        groups = [d.location_group("MPI Rank %d" % r, location_group_type=LocationGroupType.PROCESS,
                                   system_tree_parent=node) for r in range(2)]
        locs = [d.location("Master thread", type=LocationType.CPU_THREAD, group=g) for g in groups]
        program = d.region("app.py", region_role=RegionRole.ARTIFICIAL,
                           paradigm=Paradigm.MEASUREMENT_SYSTEM)

        def py(name, file, line):
            return d.region(name, source_file=file, begin_line_number=line,
                            paradigm=Paradigm.USER)
        boot = "<frozen importlib._bootstrap>"
        ext = "<frozen importlib._bootstrap_external>"
        module = py("__main__:<module>", "/app/app.py", 1)
        compute = py("__main__:compute", "/app/app.py", 5)
        find_and_load = py("importlib._bootstrap:_find_and_load", boot, 1165)
        load_unlocked = py("importlib._bootstrap:_load_unlocked", boot, 666)
        exec_module = py("importlib._bootstrap_external._LoaderBasics:exec_module", ext, 934)
        shapes = py("shapes:<module>", "/app/shapes/__init__.py", 1)
        setup = py("shapes:setup", "/app/shapes/__init__.py", 3)
        fromlist = py("importlib._bootstrap:_handle_fromlist", boot, 1207)
        removed = py("importlib._bootstrap:_call_with_frames_removed", boot, 233)
        ext_exec = py("importlib._bootstrap_external.ExtensionFileLoader:exec_module", ext, 1241)
        init = d.region("MPI_Init_thread", region_role=RegionRole.FUNCTION, paradigm=Paradigm.MPI)
        barrier = d.region("MPI_Barrier", region_role=RegionRole.BARRIER, paradigm=Paradigm.MPI)
        for r in range(2):
            w = trace.event_writer_from_location(locs[r])
            t = lambda us: int(us * US)  # noqa: E731
            w.program_begin(t(0), program_name=program.name, program_arguments=[])
            w.enter(t(10), module)
            w.enter(t(20), find_and_load)
            w.enter(t(30), load_unlocked)
            w.enter(t(40), exec_module)
            w.enter(t(100), shapes)
            w.enter(t(110), setup)
            w.leave(t(5110), setup)
            w.leave(t(5200), shapes)
            w.leave(t(5300), exec_module)
            w.leave(t(5400), load_unlocked)
            w.leave(t(5500), find_and_load)
            end = MPI_INIT_END[r]
            w.enter(t(5600), fromlist)
            w.enter(t(5610), removed)
            w.enter(t(5620), find_and_load)
            w.enter(t(5700), ext_exec)
            w.enter(t(5800), init)
            w.leave(t(end), init)
            w.leave(t(end + 10), ext_exec)
            w.leave(t(end + 20), find_and_load)
            w.leave(t(end + 30), removed)
            w.leave(t(end + 40), fromlist)
            w.enter(t(end + 100), compute)
            w.leave(t(end + 100 + COMPUTE[r]), compute)
            w.enter(t(end + 200 + COMPUTE[r]), barrier)
            w.leave(t(200000), barrier)
            w.leave(t(200100), module)
            w.program_end(t(200200), 0)
    return path


@pytest.fixture(scope="module")
def trace_exp(tmp_path_factory):
    return write_import_trace(tmp_path_factory.mktemp("imports") / "exp")


def us(seconds):
    return round(seconds * 1e6)


def by_path(tree):
    return {tuple(n.region.name for n in node.path()): node for node in tree.nodes}


def test_folded_tree_of_the_trace(trace_exp):
    exp = Experiment(trace_exp)
    tree, recorded = exp.tree, exp.recorded_tree
    assert not any(is_import_machinery(n.region) for n in tree.nodes)
    paths = by_path(tree)
    top = ("app.py", "__main__:<module>")
    assert sorted(p for p in paths if len(p) > 2) == sorted([
        top + ("import shapes",), top + ("import shapes", "shapes:setup"),
        top + ("(import system)",), top + ("(import system)", "MPI_Init_thread"),
        top + ("__main__:compute",), top + ("MPI_Barrier",)])
    incl = {p[-1]: [us(v) for v in tree.incl[n.id]] for p, n in paths.items()}
    # One import of one module: the import system's frames (20..5500) and the module's
    # body, one node; the extension module's import (no Python body): (import system)
    assert incl["import shapes"] == [5480, 5480]
    assert [us(v) for v in tree.excl[paths[top + ("import shapes",)].id]] == [480, 480]
    assert [sum(tree.visits[paths[top + ("import shapes",)].id])] == [2]
    assert incl["(import system)"] == [e + 40 - 5600 for e in MPI_INIT_END]
    assert incl["MPI_Init_thread"] == [e - 5800 for e in MPI_INIT_END]
    assert incl["__main__:compute"] == list(COMPUTE)
    # nothing is lost: the run, each rank, and the time per kind of region
    for l in range(2):
        assert tree.location_time(l) == pytest.approx(recorded.location_time(l), rel=1e-12)
    for kind in ("code", "mpi", "measurement"):
        assert sum(s.excl for s in tree.flat() if s.region.kind == kind) == pytest.approx(
            sum(s.excl for s in recorded.flat() if s.region.kind == kind), rel=1e-9)
    # the recorded tree is still there
    assert "importlib._bootstrap:_find_and_load" in {n.region.name for n in recorded.nodes}
    assert Experiment(trace_exp, show_imports=True).tree is not None
    assert "importlib._bootstrap:_find_and_load" in {
        n.region.name for n in Experiment(trace_exp, show_imports=True).tree.nodes}


def test_load_balance_ranks_the_programs_functions_first(trace_exp):
    lb = load_balance(Experiment(trace_exp).tree, top=10)
    names = [r["stat"].region.name for r in lb["regions"]]
    # compute's 2x (20 ms of its own time between the ranks) comes first, then the
    # program's other functions (its package's too); the import holding MPI_Init_thread
    # (30 ms between the ranks, all of it MPI's) after them
    assert names[0] == "__main__:compute"
    assert set(names[1:3]) == {"__main__:<module>", "shapes:setup"}
    assert lb["own"] == 3
    assert us(lb["regions"][0]["imbalance"]) == 10000
    assert "(import system)" in names and "MPI_Init_thread" in names


def test_terminal_report_folds_and_shows_imports(trace_exp):
    out = report(trace_exp)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "importlib" not in text.split("\nMeasurement\n")[0]
    assert "import shapes" in text and "(import system)" in text
    assert "imports folded: 7 call paths of importlib's frames" in text
    balance = text.split("Ranks: load balance")[1].splitlines()
    assert balance[2].split()[-1] == "__main__:compute", balance
    # compute: 20 ms on rank 1, 40 ms on rank 0
    assert balance[2].split()[:6] == ["20", "ms", "30", "ms", "40", "ms"]
    shown = report(trace_exp, "--show-imports")
    assert shown.returncode == 0, shown.stderr
    assert "importlib._bootstrap:_find_and_load" in shown.stdout
    assert "import shapes" not in shown.stdout and "imports folded" not in shown.stdout


def test_exports_fold_and_keep_totals(trace_exp, tmp_path):
    folded, recorded = tmp_path / "f.collapsed", tmp_path / "r.collapsed"
    assert report(trace_exp, "-o", folded).returncode == 0
    assert report(trace_exp, "--show-imports", "-o", recorded).returncode == 0

    def stacks(path):
        out = {}
        for line in path.read_text().splitlines():
            stack, _, ns = line.rpartition(" ")
            out[stack] = int(ns)
        return out
    f, r = stacks(folded), stacks(recorded)
    assert not any("importlib" in s for s in f)
    assert any("importlib._bootstrap:_handle_fromlist" in s for s in r)
    # per rank summed: 2 x (5480 - 5000) us of the shapes import, as one stack
    assert f["app.py;__main__:<module>;import shapes"] == 2 * 480 * US
    assert sum(f.values()) == sum(r.values())
    prof = tmp_path / "f.prof"
    assert report(trace_exp, "-o", prof).returncode == 0
    import pstats
    stats = pstats.Stats(str(prof)).stats
    names = {k[2]: v for k, v in stats.items()}
    assert "import shapes" in names and not any("importlib" in n for n in names)
    assert us(names["import shapes"][3]) == 2 * 5480  # cumulative, both ranks


def write_program(root):
    """A program with a package of its own that works at import time."""
    pkg = root / "shapes"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from shapes import tables\nfrom shapes import heavy\n")
    (pkg / "tables.py").write_text(
        "def build(n):\n    return [i * i for i in range(n)]\nTABLE = build(20000)\n")
    (pkg / "heavy.py").write_text(
        "def setup():\n    s = 0\n    for i in range(30000):\n        s += i\n    return s\n"
        "VALUE = setup()\n")
    (root / "single.py").write_text("def prepare():\n    return sum(range(10000))\nX = prepare()\n")
    (root / "app.py").write_text(
        "import shapes\n\n"
        "def load():\n    import single\n    return single.X\n\n"
        "def compute(n):\n    return sum(i % 7 for i in range(n))\n\n"
        "print(load(), compute(20000), len(shapes.tables.TABLE))\n")
    return root / "app.py"


def test_real_imports_fold_on_every_interpreter(python, tmp_path):
    app = write_program(tmp_path)
    out = run_scorep(python, [str(app)], tmp_path / "exp", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "49995000 59997 20000\n" and out.stderr == ""
    exp = Experiment(tmp_path / "exp")
    tree, recorded = exp.tree, exp.recorded_tree
    assert any(is_import_machinery(n.region) for n in recorded.nodes)
    assert not any(is_import_machinery(n.region) for n in tree.nodes)
    paths = by_path(tree)
    top = ("app.py", "__main__:<module>")
    assert top + ("import shapes", "import shapes.tables", "shapes.tables:build") in paths
    assert top + ("import shapes", "import shapes.heavy", "shapes.heavy:setup") in paths
    # one import from load(): the import system's frames and single's body, one node
    # with all of their time
    single = paths[top + ("__main__:load", "import single")]
    rec = by_path(recorded)
    [outer] = [n for p, n in rec.items() if p[:3] == top + ("__main__:load",) and len(p) == 4]
    assert is_import_machinery(outer.region)
    assert tree.incl[single.id] == pytest.approx(recorded.incl[outer.id], rel=1e-9)
    heavy = paths[top + ("import shapes", "import shapes.heavy")]
    [body] = [n for n in recorded.nodes if n.region.name == "shapes.heavy:<module>"]
    assert tree.incl[heavy.id] == pytest.approx(recorded.incl[body.id], rel=1e-9)
    assert tree.total_time() == pytest.approx(recorded.total_time(), rel=1e-12)
    assert sum(tree.visits[single.id]) == 1


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="needs mpirun")
def test_real_mpi_run_ranks_the_program_first(tmp_path):
    """2 ranks under mpirun, rank 0 calls compute twice, rank 1 once: the program's
    functions lead the load balance, above the imports (mpi4py's holds MPI_Init_thread)."""
    app = tmp_path / "mpi_app.py"
    app.write_text(
        "from mpi4py import MPI\nimport decimal\n\n"
        "def compute(n):\n    s = 0\n    for i in range(n):\n        s += i % 7\n    return s\n\n"
        "def main():\n    comm = MPI.COMM_WORLD\n"
        "    for _ in range(2 if comm.Get_rank() == 0 else 1):\n        compute(300000)\n"
        "    comm.Barrier()\n\nmain()\n")
    env = scorep_env(tmp_path / "exp")
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    out = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", sys.executable, "-m", "scorep",
                          "--mpp=mpi", str(app)], env=env, cwd=tmp_path, capture_output=True,
                         text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    text = report(tmp_path / "exp").stdout
    assert "importlib" not in text.split("\nMeasurement\n")[0]
    assert "MPI_Init_thread" in text
    tree = Experiment(tmp_path / "exp").tree
    [compute] = [s for s in tree.flat() if s.region.name == "__main__:compute"]
    assert compute.per_loc_visits == [2, 1]
    # The program's functions first, in the order of their own time's imbalance between
    # the ranks (what the ranks' times were is up to the machine: on two shared cores
    # rank 1's one call can take as long as rank 0's two); mpi4py's import after them.
    lb = load_balance(tree, top=10)
    names = [r["stat"].region.name for r in lb["regions"]]
    own = names[:lb["own"]]
    assert set(own) == {"__main__:<module>", "__main__:main", "__main__:compute"}
    imbalance = [r["imbalance"] for r in lb["regions"][:lb["own"]]]
    assert imbalance == sorted(imbalance, reverse=True)
    balance = text.split("Ranks: load balance")[1].splitlines()
    assert [l.split()[-1] for l in balance[2:5]] == own, text
    assert "MPI_Init_thread" in names[lb["own"]:] and "(import system)" in names[lb["own"]:]
    shown = report(tmp_path / "exp", "--show-imports").stdout
    assert "importlib._bootstrap" in shown


def test_html_has_both_trees(trace_exp, tmp_path):
    import json
    import re
    page = tmp_path / "r.html"
    out = report(trace_exp, "-o", page)
    assert out.returncode == 0, out.stderr
    text = page.read_text()
    data = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>',
                                text, re.S).group(1).replace("<\\/", "</"))
    regions = data["regions"]

    def names(flame):
        return {regions[r]["full"] for r in flame["region"]}
    assert "import shapes" in names(data["flame"])
    assert not any("importlib" in n for n in names(data["flame"]))
    assert "importlib._bootstrap:_handle_fromlist" in names(data["flame"]["recorded"])
    assert data["flame"]["incl"][0] == data["flame"]["recorded"]["incl"][0] == 2 * 200200 * US  # both ranks
    assert 'id="flame-imports"' in text
    assert [r["name"] for r in data["balance"]["regions"]][0] == "__main__:compute"
