"""Native allocations per region (--memory, SCOREP_NATIVE_MEMORY): malloc & co. of extension
modules and C libraries, interposed through their global offset tables, as the metrics
native_allocated, native_freed and native_peak in profile.cubex (read back with our CUBE
reader).

The program (tests/programs/native_memory_app.py) calls a C library compiled here
(tests/programs/native_alloc.c) through ctypes, on the main thread and on a thread, and
makes two 80 MB numpy arrays (np.ones(10_000_000) and a * 2.0) where numpy is installed;
tracemalloc's view of the same arrays (numpy reports its data buffers to it) is the
reference."""

import os
import subprocess
import sys

import pytest

from conftest import PROGRAMS, program, run, run_scorep
from scorep import cube

PYTHON = sys.executable
APP = program("native_memory_app.py")
MB = 1000 * 1000
NATIVE = ["native_allocated", "native_freed", "native_peak"]


@pytest.fixture(scope="module")
def native_lib(tmp_path_factory):
    path = tmp_path_factory.mktemp("native") / "libnative_alloc.so"
    out = subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", str(path),
                          str(PROGRAMS / "native_alloc.c")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return path


def has_numpy(python):
    return run([python, "-c", "import numpy"]).returncode == 0


def value(profile, metric, name, thread="MainThread", inclusive=True):
    """The metric of the first call path of region `name` on `thread`."""
    location = next(l.id for l in profile.locations if l.name == thread)
    for c in profile.cnodes:
        if c.region.name == name and not c.parameters and \
                profile.value("visits", c.id, location, inclusive=False):
            return profile.value(metric, c.id, location, inclusive=inclusive)
    raise AssertionError("no call path of %s on %s" % (name, thread))


def measure(python, lib, tmp_path, *args, options=("--memory",), **env):
    exp = tmp_path / "exp"
    out = run_scorep(python, list(options) + [APP, lib] + list(args), exp, **env)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "done\n"
    assert out.stderr == ""
    return cube.read(os.path.join(str(exp), "profile.cubex"))


def test_metric_definitions(native_lib, tmp_path):
    p = measure(PYTHON, native_lib, tmp_path)
    metrics = {m.uniq_name: m for m in p.metrics}
    names = [m.uniq_name for m in p.metrics]
    assert names[names.index("python_freed") + 1:][:3] == NATIVE
    for name in NATIVE:
        m = metrics[name]
        assert (m.disp_name, m.uom, m.dtype, m.type) == (name, "Bytes", "UINT64", "INCLUSIVE")
    assert metrics["native_peak"].descr.startswith("rise of the process's peak")


def test_every_allocator_of_a_c_library_and_frees_balance(python, native_lib, tmp_path):
    """churn() calls malloc, realloc, calloc, posix_memalign and aligned_alloc and frees
    each block: 6 x 10 MB allocated and as much freed, exactly; the peak rose by at most
    the 20 MB live at once (less what was live below the process's earlier peak)."""
    p = measure(python, native_lib, tmp_path)
    assert value(p, "native_allocated", "__main__:churn") == 60 * MB
    assert value(p, "native_freed", "__main__:churn") == 60 * MB
    rise = value(p, "native_peak", "__main__:churn")
    assert 19 * MB <= rise <= 20 * MB, rise
    # A block kept by one function and freed by another.
    assert value(p, "native_allocated", "__main__:keep") == 12 * MB
    assert value(p, "native_freed", "__main__:keep") == 0
    assert value(p, "native_freed", "__main__:release") == 12 * MB
    assert value(p, "native_allocated", "__main__:release") == 0


def test_a_thread_counts_its_own(python, native_lib, tmp_path):
    p = measure(python, native_lib, tmp_path)
    assert value(p, "native_allocated", "__main__:worker", thread="worker") == 8 * MB
    assert value(p, "native_freed", "__main__:worker", thread="worker") == 8 * MB
    main_total = value(p, "native_allocated", "__main__:main")
    assert 72 * MB <= main_total < 73 * MB, main_total  # churn and keep, not the thread's


def test_python_memory_alone_patches_nothing(native_lib, tmp_path):
    p = measure(PYTHON, native_lib, tmp_path, options=(), SCOREP_PYTHON_MEMORY="true")
    names = [m.uniq_name for m in p.metrics]
    assert "python_allocated" in names and not set(NATIVE) & set(names)


def test_native_memory_alone(native_lib, tmp_path):
    p = measure(PYTHON, native_lib, tmp_path, options=(), SCOREP_NATIVE_MEMORY="true")
    names = [m.uniq_name for m in p.metrics]
    assert names[-3:] == NATIVE and "python_allocated" not in names
    assert value(p, "native_allocated", "__main__:churn") == 60 * MB


def test_numpy_arrays_against_tracemalloc(python, native_lib, tmp_path):
    """np.ones(10_000_000) and a * 2.0: 160 MB allocated by make_arrays (80 MB in numpy's
    ones, 80 MB in make_arrays itself), freed by drop_arrays, and the peak rose by as much,
    within 2% of what tracemalloc sees of the same arrays."""
    if not has_numpy(python):
        pytest.skip("numpy is not installed for %s" % python)
    out = run([python, APP, native_lib, "tracemalloc"])
    assert out.returncode == 0, out.stderr
    word, numpy_bytes, traced_peak = out.stdout.split()
    numpy_bytes, traced_peak = int(numpy_bytes), int(traced_peak)
    assert word == "numpy" and numpy_bytes >= 160 * MB
    p = measure(python, native_lib, tmp_path, "numpy")
    allocated = value(p, "native_allocated", "__main__:make_arrays")
    assert abs(allocated - numpy_bytes) <= 0.02 * numpy_bytes, (allocated, numpy_bytes)
    # a * 2.0 is no call: the function itself allocated it.
    own = value(p, "native_allocated", "__main__:make_arrays", inclusive=False)
    assert abs(own - numpy_bytes / 2) <= 0.02 * numpy_bytes / 2, (own, numpy_bytes)
    assert value(p, "python_allocated", "__main__:make_arrays") < 1 * MB
    freed = value(p, "native_freed", "__main__:drop_arrays")
    assert abs(freed - allocated) <= 0.02 * allocated, (freed, allocated)
    rise = value(p, "native_peak", "__main__:make_arrays")
    assert abs(rise - traced_peak) <= 0.02 * traced_peak, (rise, traced_peak)
    # The process's peak came later by nobody: churn's 20 MB stayed below it.
    assert value(p, "native_peak", "__main__:churn") == 0
    root = next(c for c in p.cnodes if c.parent is None)
    location = next(l.id for l in p.locations if l.name == "MainThread")
    total = p.value("native_peak", root.id, location)
    assert rise <= total <= rise + 1 * MB, (rise, total)
