"""--sampling --native: the C frames between two Python frames (Python called back from C)
are placed between them, as py-spy --native shows them, and a static function of a library
is named from the library's .symtab."""
import subprocess

import pytest

from conftest import program, run_scorep
from scorep import cube


def test_c_frames_between_python_frames_with_static_names(python, tmp_path):
    lib = tmp_path / "libcb.so"
    subprocess.run(["cc", "-O0", "-g", "-shared", "-fPIC", "-o", str(lib),
                    program("native_callback.c")], check=True)
    exp = tmp_path / "exp"
    out = run_scorep(python, ["--sampling", "--native", program("native_callback.py"),
                              str(lib), "2000"], exp, cwd=tmp_path, timeout=180)
    assert (out.returncode, out.stdout, out.stderr) == (0, "6003.0\n", "")
    profile = cube.read(str(exp / "profile.cubex"))
    hits = profile.values(profile.metric("hits"), inclusive=False)
    in_callback = between = 0
    for c in profile.cnodes:
        path, n = c.path(), sum(hits[c.id])
        if not n or "__main__:callback" not in path:
            continue
        in_callback += n
        outer, inner = path.index("__main__:outer"), path.index("__main__:callback")
        # run_callbacks (exported) calls apply_all (static: only in .symtab), which calls
        # the Python function back, in that order between the two Python frames.
        middle = path[outer + 1:inner]
        if ("run_callbacks [libcb.so]" in middle and "apply_all [libcb.so]" in middle and
                middle.index("run_callbacks [libcb.so]") <
                middle.index("apply_all [libcb.so]")):
            between += n
    if in_callback < 20:
        # A known defect of the sampler, with or without --native and in either read mode:
        # a thread that runs Python callbacks from inside a long ctypes call is sometimes
        # sampled only a few times, or not at all (docs/limitations.md). The merge below is
        # still checked whenever it was sampled.
        pytest.xfail("the sampler took %d samples in the callbacks (known defect)" % in_callback)
    # The few others: native and Python stacks read at moments the thread moved between
    # (MANIFEST.md counts them).
    assert between >= 0.8 * in_callback, (between, in_callback)
    manifest = (exp / "MANIFEST.md").read_text()
    assert "native frames between Python frames (--native): " in manifest, manifest


def test_blas_through_ctypes_under_the_calling_function_on_every_interpreter(python, tmp_path):
    # Debian's numpy is built for 3.11 only: the reference BLAS called through ctypes shows
    # the native frames under the Python function on 3.9-3.13 alike.
    exp = tmp_path / "exp"
    out = run_scorep(python, ["--sampling", "--native", program("native_ctypes_dgemm.py"),
                              "150"], exp, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    profile = cube.read(str(exp / "profile.cubex"))
    hits = profile.values(profile.metric("hits"), inclusive=False)
    under = gemm = 0
    for c in profile.cnodes:
        path, n = c.path(), sum(hits[c.id])
        if "__main__:multiply" in path:
            under += n
            if any(name.startswith("dgemm_ [libblas") for name in path):
                gemm += n
    assert under >= 20, under
    assert gemm >= 0.5 * under, (gemm, under)
