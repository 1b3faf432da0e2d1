"""Python called back from C (a ctypes callback inside a long C call): the callbacks get
the samples of the time they take, with --sampling alone in both read modes and with
--native; and --native places the C frames between the two Python frames, as py-spy
--native shows them, naming a static function of a library from the library's .symtab."""
import subprocess

import pytest

from conftest import program, run_scorep
from scorep import cube


def run_callbacks(python, tmp_path, options, **env):
    """native_callback.py under `options`: (profile, hits of each call path containing
    __main__:callback, hits in the program's own frames, the share of the program's wall
    time that outer() took by its own clock)."""
    lib = tmp_path / "libcb.so"
    subprocess.run(["cc", "-O0", "-g", "-shared", "-fPIC", "-o", str(lib),
                    program("native_callback.c")], check=True)
    exp, times = tmp_path / "exp", tmp_path / "times.txt"
    out = run_scorep(python, options + [program("native_callback.py"), str(lib), "2000",
                                        str(times)], exp, cwd=tmp_path, timeout=180, **env)
    assert (out.returncode, out.stdout, out.stderr) == (0, "6003.0\n", "")
    program_s, outer_s = map(float, times.read_text().split())
    profile = cube.read(str(exp / "profile.cubex"))
    hits = profile.values(profile.metric("hits"), inclusive=False)
    in_callback, in_program = {}, 0
    for c in profile.cnodes:
        path, n = c.path(), sum(hits[c.id])
        if "__main__:<module>" in path:
            in_program += n
        if n and "__main__:callback" in path:
            in_callback[tuple(path)] = n
    return exp, in_callback, in_program, outer_s / program_s


def assert_callbacks_have_their_share(in_callback, in_program, outer_share):
    """The callbacks are nearly all of outer()'s time (the C code between them takes
    microseconds), and outer() most of the program's (its start imports ctypes and loads
    the library): their share of the program's samples is that of outer()'s time by the
    program's own clock, within what 2000 callbacks' worth of samples leaves to chance.
    A thread sampled only a few times, or not at all, while it runs callbacks from inside a
    long C call fails here: before, a sampler that waited for the GIL there was kept out
    by the callbacks (each takes the GIL and gives it up) for the rest of the call, and
    reading at safe points about 1 run in 5 had 12-200 samples and 0.3-1.1 s cut from a gap
    in MANIFEST.md (3.9-3.12); the GIL waiter lets the sampler's ticks go on meanwhile."""
    n = sum(in_callback.values())
    assert n >= 20, (n, in_program)
    assert n >= 0.8 * outer_share * in_program, (n, in_program, outer_share)


@pytest.mark.parametrize("read", ["async", "safepoint"])
def test_callbacks_from_c_get_their_share_of_the_samples(python, tmp_path, read):
    exp, in_callback, in_program, outer_share = run_callbacks(
        python, tmp_path, ["--sampling"], SCOREP_SAMPLING_READ=read)
    assert_callbacks_have_their_share(in_callback, in_program, outer_share)
    # Without --native only Python frames: the callback right under outer().
    for path in in_callback:
        assert path[path.index("__main__:outer") + 1] == "__main__:callback", path


def test_c_frames_between_python_frames_with_static_names(python, tmp_path):
    exp, in_callback, in_program, outer_share = run_callbacks(
        python, tmp_path, ["--sampling", "--native"])
    assert_callbacks_have_their_share(in_callback, in_program, outer_share)
    between = 0
    for path, n in in_callback.items():
        outer, inner = path.index("__main__:outer"), path.index("__main__:callback")
        # run_callbacks (exported) calls apply_all (static: only in .symtab), which calls
        # the Python function back, in that order between the two Python frames.
        middle = path[outer + 1:inner]
        if ("run_callbacks [libcb.so]" in middle and "apply_all [libcb.so]" in middle and
                middle.index("run_callbacks [libcb.so]") <
                middle.index("apply_all [libcb.so]")):
            between += n
    # The few others: native and Python stacks read at moments the thread moved between
    # (MANIFEST.md counts them).
    assert between >= 0.8 * sum(in_callback.values()), (between, in_callback)
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
