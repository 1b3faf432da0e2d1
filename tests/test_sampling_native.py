"""--sampling --native: each sample carries the thread's C stack (libunwind in a signal
handler), merged after its Python frames, and threads that never run Python are sampled as
locations of their own. Profiles read with scorep.cube; BLAS is Debian's reference BLAS
(numpy's default here) and a private copy of OpenBLAS (`make openblas-private`), never the
system's."""
import os
import sys

import pytest

from conftest import REPO, program, run, run_scorep, scorep_env
from scorep import cube

OPENBLAS = os.environ.get("SCOREP_TEST_OPENBLAS_DIR") or str(
    REPO / "build" / "openblas" / "usr" / "lib" / "x86_64-linux-gnu" / "openblas-pthread")


def measured(python, tmp_path, args, **env):
    exp = tmp_path / "exp"
    out = run_scorep(python, ["--sampling", "--native"] + args, exp, cwd=tmp_path,
                     timeout=300, **env)
    assert out.returncode == 0, out.stderr
    return out, exp, cube.read(str(exp / "profile.cubex"))


def gemm_share(profile, caller="__main__:multiply"):
    """Of the caller's estimated time, the share in frames named *gemm* below it (the
    outermost such frame of each path, so nothing counts twice)."""
    incl = profile.values(profile.metric("time"), inclusive=True)
    total = sum(sum(incl[c.id]) for c in profile.cnodes if c.region.name == caller)
    gemm = 0.0
    for c in profile.cnodes:
        path = c.path()
        if "gemm" in c.region.name and caller in path and not any(
                "gemm" in name for name in path[:-1]):
            gemm += sum(incl[c.id])
    return gemm / total if total else 0.0, total


def numpy_python():
    """Debian's interpreter: the one Debian's numpy is built for."""
    python = "/usr/bin/python3"
    probe = run([python, "-c", "import numpy"])
    if probe.returncode != 0:
        pytest.skip("numpy is not importable by %s: %s" % (python, probe.stderr.strip()))
    return python


def test_gemm_under_the_python_function_that_multiplies_reference_blas(tmp_path):
    python = numpy_python()
    out, exp, profile = measured(python, tmp_path, [program("native_matmul.py"), "40"])
    assert out.stdout == "done\n" and out.stderr == ""
    share, total = gemm_share(profile)
    assert total > 0
    assert share >= 0.5, share
    names = {r.name for r in profile.regions}
    assert "dgemm_ [libblas.so.3]" in names, sorted(names)
    # The interpreter's evaluation frames stand for the Python functions: none is a region.
    assert not any("_PyEval_EvalFrame" in n for n in names)
    native = [r for r in profile.regions if r.name == "dgemm_ [libblas.so.3]"][0]
    assert native.paradigm == "compiler:native" and native.file.endswith("libblas.so.3")
    # The Python function that calls ndarray.dot is the gemm frame's ancestor.
    paths = [c.path() for c in profile.cnodes if c.region.name == "dgemm_ [libblas.so.3]"]
    assert paths and all("__main__:multiply" in p for p in paths), paths
    manifest = (exp / "MANIFEST.md").read_text()
    assert "native stacks (--native): " in manifest


def test_gemm_under_the_python_function_that_multiplies_openblas(tmp_path):
    python = numpy_python()
    if not os.path.exists(os.path.join(OPENBLAS, "libblas.so.3")):
        pytest.skip("no private OpenBLAS in %s (make openblas-private downloads Debian's "
                    "libopenblas0-pthread there without installing it)" % OPENBLAS)
    env = {"LD_LIBRARY_PATH": OPENBLAS, "OPENBLAS_NUM_THREADS": "2"}
    probe = run([python, "-c", "import numpy, sys; numpy.ones((2, 2)).dot(numpy.ones((2, 2)));"
                 "print(open('/proc/self/maps').read())"], env=dict(os.environ, **env))
    assert "openblas" in probe.stdout, probe.stderr
    out, exp, profile = measured(python, tmp_path, [program("native_matmul.py"), "40"], **env)
    assert out.stdout == "done\n"
    share, total = gemm_share(profile)
    assert share >= 0.5, share
    assert any("libopenblas" in r.file for r in profile.regions)
    # OpenBLAS's worker thread never runs Python: a location of its own, in gemm kernels.
    workers = [i for i, loc in enumerate(profile.locations)
               if loc.name.startswith("native thread ")]
    assert workers, [loc.name for loc in profile.locations]
    hits = profile.values(profile.metric("hits"), inclusive=False)
    worker_regions = {c.region.name for c in profile.cnodes
                      if any(hits[c.id][i] for i in workers)}
    assert any("libopenblas" in name for name in worker_regions), worker_regions


def test_a_thread_that_never_runs_python_is_a_location_with_its_c_frames(python, tmp_path):
    out, exp, profile = measured(python, tmp_path, [program("native_c_thread.py"), "0.6"])
    assert out.stdout == "joined\n" and out.stderr == ""
    names = [loc.name for loc in profile.locations]
    native = [i for i, name in enumerate(names) if name.startswith("native thread ")]
    assert len(native) == 1, names
    hits = profile.values(profile.metric("hits"), inclusive=False)
    paths = [c.path() for c in profile.cnodes if hits[c.id][native[0]]]
    # A few: a machine busier than its cores makes each pass wait for the handlers.
    assert sum(hits[c.id][native[0]] for c in profile.cnodes) >= 5, paths
    # It waits in libc's pthread_mutex_lock (what it was started on) the whole time, but
    # for a tick that may find it starting (libc's clone and start_thread, both unnamed:
    # the start of the path to pthread_mutex_lock), as on main before the blocked-thread
    # change (3 of 25 runs).
    waiting = [p for p in paths if "pthread_mutex_lock [libc.so.6]" in p]
    assert waiting, paths
    for p in paths:
        if p not in waiting:
            assert any(w[:len(p)] == p for w in waiting), paths
            assert sum(hits[c.id][native[0]] for c in profile.cnodes if c.path() == p) <= 2
    # No Python frame on it, and no native frame on the Python thread's own location
    # beyond what its Python functions call.
    assert not any(":" in n for p in paths for n in p[1:]), paths


def test_native_needs_sampling_and_async_reads(tmp_path):
    python = sys.executable
    bad = run_scorep(python, ["--native", program("calls.py")], tmp_path / "a")
    assert bad.returncode == 1, bad.stderr
    assert bad.stderr.startswith("scorep: ") and "need sampling (--sampling" in bad.stderr
    assert bad.stderr.count("\n") == 1
    safe = run_scorep(python, ["--sampling", "--native", program("calls.py")], tmp_path / "b",
                      SCOREP_SAMPLING_READ="safepoint")
    assert safe.returncode == 1 and "SCOREP_SAMPLING_READ=async only" in safe.stderr
    assert safe.stderr.count("\n") == 1
    env = run_scorep(python, [program("calls.py")], tmp_path / "c",
                     SCOREP_SAMPLING_NATIVE="true")
    assert env.returncode == 1 and "need sampling" in env.stderr


def test_scorep_score_and_the_report_show_native_frames(tmp_path):
    python = numpy_python()
    out, exp, profile = measured(python, tmp_path, [program("native_matmul.py"), "20"])
    env = scorep_env()
    report = run([python, "-m", "scorep.report", str(exp)], env=env)
    assert report.returncode == 0, report.stderr
    assert "dgemm_ [libblas.so.3]" in report.stdout
    score = run([python, "-m", "scorep.score", "-r", str(exp)], env=env)
    assert score.returncode == 0, score.stderr
    assert "dgemm_ [libblas.so.3]" in score.stdout
