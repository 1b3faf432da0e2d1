"""I/O recording (--io=runtime:posix, SCOREP_IO_POSIX=true): POSIX and ISO C calls of Python
and of C libraries, as Score-P records them.

Real files with known sizes, read back with the real consumers: the OTF2 library's reader
(python3-otf2) and otf2-print for the trace, our CUBE reader for the profile's io_bytes
metrics, scorep-score and scorep-report. The original bindings' test_io expectations (their
test/test_scorep.py at tag v4.5.1) are checked on otf2-print's output with their regular
expressions."""

import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import PROGRAMS, otf2_print, program, python_version, run, run_scorep, scorep_env
from scorep import cube, score

PYTHON = sys.executable
UNKNOWN = 2**64 - 1  # OTF2's undefined bytes: the operation failed


@pytest.fixture(scope="module")
def native_lib(tmp_path_factory):
    """The C library the programs call through ctypes, compiled for this run."""
    path = tmp_path_factory.mktemp("native") / "libio_native.so"
    out = subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(path),
                          str(PROGRAMS / "io_native.c")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return path


class IoTrace:
    """The I/O events of a trace, read with the OTF2 library's reader."""

    def __init__(self, experiment):
        import otf2
        # (location, kind, handle's file or name, paradigm, fields, regions around it,
        # location group)
        self.events = []
        with otf2.reader.open(str(Path(experiment) / "traces.otf2")) as reader:
            defs = reader.definitions
            self.handles = list(defs.io_handles)
            self.files = [f.name for f in defs.io_files]
            self.paradigms = [(p.identification, p.name, str(p.io_paradigm_class))
                              for p in defs.io_paradigms]
            self.regions = {r.name: r for r in defs.regions}
            stacks = {}
            for location, event in reader.events:
                kind = type(event).__name__
                stack = stacks.setdefault(location.name, [])
                if kind == "Enter":
                    stack.append(event.region.name)
                elif kind == "Leave":
                    stack.pop()
                elif kind.startswith("Io"):
                    handle = getattr(event, "handle", None) or getattr(event, "new_handle", None)
                    target = handle.file.name if handle is not None and handle.file else \
                        handle.name if handle is not None else None
                    paradigm = handle.io_paradigm.name if handle is not None else None
                    fields = {name: getattr(event, name) for name in
                              ("bytes_request", "bytes_result", "mode", "offset_request",
                               "offset_result", "whence") if hasattr(event, name)}
                    self.events.append((location.name, kind, target, paradigm, fields,
                                        tuple(stack), location.group.name))

    def of(self, kind=None, target=None, function=None, caller=None):
        return [e for e in self.events if (kind is None or e[1] == kind) and
                (target is None or e[2] == target) and
                (function is None or (e[5] and e[5][-1] == function)) and
                (caller is None or caller in e[5])]

    def bytes(self, target, mode):
        """Bytes the completed operations of `mode` moved on `target` (failed ones: 0)."""
        total = 0
        pending = {}
        for location, kind, t, _paradigm, fields, _stack, _group in self.events:
            if t != target:
                continue
            if kind == "IoOperationBegin":
                pending[location] = str(fields["mode"])
            elif kind == "IoOperationComplete" and pending.pop(location, "").endswith(mode):
                total += fields["bytes_result"] if fields["bytes_result"] != UNKNOWN else 0
        return total


def profile_bytes(experiment):
    """{(calling region, I/O function): (bytes read, bytes written)} from the profile's
    io_bytes metrics, summed over call paths and locations. The calling region is the nearest
    Python function: C functions between it and the I/O call (3.12+ records them, e.g.
    `_io.FileIO:write` under the function that wrote) pass its I/O on."""
    p = cube.read(str(Path(experiment) / "profile.cubex"))
    read = p.values("io_bytes_read", inclusive=False)
    written = p.values("io_bytes_written", inclusive=False)
    out = {}
    for c in p.cnodes:
        r, w = sum(read[c.id]), sum(written[c.id])
        if r or w:
            caller = c.parent
            while caller is not None and caller.region.paradigm.startswith("compiler"):
                caller = caller.parent
            key = (caller.region.name if caller else None, c.region.name)
            old = out.get(key, (0, 0))
            out[key] = (old[0] + r, old[1] + w)
    return out


def caller_bytes(per_call, caller):
    """(read, written) of all I/O functions called from `caller`."""
    r = sum(v[0] for (c, _f), v in per_call.items() if c == caller)
    w = sum(v[1] for (c, _f), v in per_call.items() if c == caller)
    return r, w


def has_numpy(python):
    return run([python, "-c", "import numpy"]).returncode == 0


# ---- the original bindings' test_io ---------------------------------------------------------

FILE_REGEX = r"\[POSIX I\/O\][ \w:/]*test\.txt"
ORIGINAL_OPS = {
    "open": {"ENTER": "open64", "IO_CREATE_HANDLE": FILE_REGEX, "LEAVE": "open64"},
    "seek": {"ENTER": "lseek64", "IO_SEEK": FILE_REGEX, "LEAVE": "lseek64"},
    "write": {"ENTER": "write", "IO_OPERATION_BEGIN": FILE_REGEX,
              "IO_OPERATION_COMPLETE": FILE_REGEX, "LEAVE": "write"},
    "read": {"ENTER": "read", "IO_OPERATION_BEGIN": FILE_REGEX,
             "IO_OPERATION_COMPLETE": FILE_REGEX, "LEAVE": "read"},
    "close": {"ENTER": "close", "IO_DESTROY_HANDLE": FILE_REGEX, "LEAVE": "close"},
}


def original_io_section(trace_text):
    """otf2-print's lines between the enter and the leave of "expect io", as the original
    test cuts them out."""
    lines, inside = [], False
    for line in trace_text.split("\n"):
        if "user_instrumenter:expect io" in line:
            inside = not inside
        if inside:
            lines.append(line)
    return "\n".join(lines) + "\n"


INSTRUMENTERS = [None, "cProfile", "cTrace", "profile", "trace"]


@pytest.mark.parametrize("instrumenter", INSTRUMENTERS,
                         ids=["default"] + INSTRUMENTERS[1:])
def test_original_bindings_test_io(python, tmp_path, instrumenter, request):
    if instrumenter is not None and python != PYTHON:
        pytest.skip("the original's instrumenter names are run on the suite's interpreter")
    # The directory name matters: the original's pattern allows letters, digits, _ : / and
    # blanks in the path of test.txt (pytest's tmp_path has a '-').
    work = Path(tempfile.mkdtemp(prefix="scorep_io_", dir="/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(work, ignore_errors=True))
    shutil.copy(PROGRAMS / "io_original.py", work / "file_io.py")
    flags = ["--nocompiler", "--noinstrumenter", "--io=runtime:posix"]
    if instrumenter:
        flags.insert(1, "--instrumenter-type=" + instrumenter)
    out = run_scorep(python, flags + ["file_io.py"], tmp_path / "exp", cwd=work,
                     SCOREP_ENABLE_PROFILING="false", SCOREP_ENABLE_TRACING="true",
                     SCOREP_PROFILING_MAX_CALLPATH_DEPTH="98", SCOREP_TOTAL_MEMORY="3G")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert "test\n" in out.stdout
    io_trace = original_io_section(otf2_print(str(tmp_path / "exp" / "traces.otf2")))
    for _op, details in ORIGINAL_OPS.items():
        for event, data in details.items():
            pattern = '{}[ ]*[0-9 ]*[0-9 ]*(Region|Handle): "{}"'.format(event, data)
            assert re.search(pattern, io_trace), pattern
    assert not (work / "test.txt").exists()


# ---- everything the measurement records ------------------------------------------------------

def test_python_and_native_io_is_recorded(python, tmp_path, native_lib):
    files = tmp_path / "files"
    files.mkdir()
    plain_files = tmp_path / "plain"
    plain_files.mkdir()
    plain = run([python, program("io_mix.py"), native_lib, plain_files],
                env=scorep_env(), cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    exp = tmp_path / "exp"
    out = run_scorep(python, ["--io=runtime:posix", program("io_mix.py"), native_lib, files],
                     exp, cwd=tmp_path, SCOREP_ENABLE_TRACING="true")
    # The program is unharmed: the same output, failures and all, and the same files.
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert out.stdout == plain.stdout
    assert "failures [9, 9, 9]" in out.stdout
    sizes = {p.name: p.stat().st_size for p in files.iterdir()}
    assert sizes == {p.name: p.stat().st_size for p in plain_files.iterdir()}

    def path(name):
        return str(files / name)

    # -- the profile: bytes per calling region equal what the program moved
    per_call = profile_bytes(exp)
    assert caller_bytes(per_call, "__main__:python_write") == (0, sizes["big.bin"])
    assert caller_bytes(per_call, "__main__:python_read") == (sizes["big.bin"], 0)
    assert caller_bytes(per_call, "__main__:os_calls") == (0, sizes["os.bin"])
    # The C library: stdio (fwrite, fread) and POSIX (write + pwrite, read + a 10-byte
    # pread), all below the Python function that called it through ctypes.
    assert caller_bytes(per_call, "__main__:native") == (
        sizes["stdio.bin"] + sizes["posix.bin"] + 10, sizes["stdio.bin"] + sizes["posix.bin"])
    assert per_call[("__main__:native", "fwrite")] == (0, sizes["stdio.bin"])
    assert per_call[("__main__:native", "fread")] == (sizes["stdio.bin"], 0)
    assert per_call[("__main__:native", "pwrite")][1] + \
        per_call[("__main__:native", "write")][1] == sizes["posix.bin"]
    assert caller_bytes(per_call, "__main__:threaded_read") == (3 * sizes["big.bin"], 0)
    assert caller_bytes(per_call, "__main__:database")[1] >= sizes["db.sqlite"]
    if has_numpy(python):
        # numpy's tofile/fromfile: fdopen + fwrite / fread on a duplicate of the descriptor
        assert per_call[("__main__:numpy_io", "fwrite")] == (0, sizes["numpy.bin"])
        assert per_call[("__main__:numpy_io", "fread")] == (sizes["numpy.bin"], 0)
    # CUBE's metric tree: the totals with a child per I/O paradigm (Score-P's names).
    p = cube.read(str(exp / "profile.cubex"))
    tree = {m.uniq_name: [c.uniq_name for c in m.children] for m in p.metrics}
    assert tree["io_bytes_read"] == ["io_bytes_read::POSIX_I_O", "io_bytes_read::ISO_C_I_O"]
    assert tree["io_bytes_written"] == ["io_bytes_written::POSIX_I_O",
                                        "io_bytes_written::ISO_C_I_O"]
    assert p.metric("io_bytes_written::ISO_C_I_O").disp_name == "ISO C I/O"
    regions = {r.name: r for r in p.regions}
    assert (regions["write"].paradigm, regions["write"].role) == ("io", "file_io")
    assert (regions["open64"].paradigm, regions["open64"].role) == ("io", "file_io metadata")

    # -- the trace: handles, files and operations
    trace = IoTrace(exp)
    assert ("POSIX", "POSIX I/O", "IoParadigmClass.SERIAL") in trace.paradigms
    assert ("ISOC", "ISO C I/O", "IoParadigmClass.SERIAL") in trace.paradigms
    # Standard streams are handles open from the start.
    names = {h.name for h in trace.handles}
    assert {"STDIN_FILENO", "STDOUT_FILENO", "STDERR_FILENO", "stdin", "stdout",
            "stderr"} <= names
    stdout = [h for h in trace.handles if h.name == "STDOUT_FILENO"][0]
    assert "PRE_CREATED" in str(stdout.io_handle_flags)
    for name, mode in (("big.bin", "WRITE"), ("stdio.bin", "WRITE"), ("stdio.bin", "READ"),
                       ("posix.bin", "WRITE"), ("os.bin", "WRITE")):
        assert trace.bytes(path(name), mode) == sizes[name], (name, mode)
    assert trace.bytes(path("big.bin"), "READ") == 4 * sizes["big.bin"]
    assert trace.bytes(path("posix.bin"), "READ") == sizes["posix.bin"] + 10
    # os.write and print() reach STDOUT_FILENO; ctypes' libc.write too.
    assert trace.bytes("STDOUT_FILENO", "WRITE") == len(out.stdout)
    # open / close, the stream's descriptor a child of the stream, dup, fsync, seeks
    created = trace.of("IoCreateHandle", path("stdio.bin"))
    assert sorted(e[3] for e in created) == ["ISO C I/O", "POSIX I/O"]
    assert [e[5][-1] for e in created] == ["fopen", "fopen"]
    stream_child = [h for h in trace.handles if h.file and h.file.name == path("stdio.bin")
                    and h.io_paradigm.name == "POSIX I/O"][0]
    assert stream_child.parent is not None and stream_child.parent.io_paradigm.name == "ISO C I/O"
    assert [e[5][-1] for e in trace.of("IoDestroyHandle", path("stdio.bin"))] == ["fclose"] * 2
    assert len(trace.of("IoDuplicateHandle", path("posix.bin"), function="dup")) == 1
    assert len(trace.of("IoDuplicateHandle", path("os.bin"), caller="__main__:os_calls")) == 1
    assert len(trace.of("IoOperationBegin", path("posix.bin"), function="fsync")) == 1
    assert len(trace.of("IoOperationBegin", path("os.bin"), function="fsync")) == 1
    assert trace.of("IoSeek", path("stdio.bin"), function="fseek")
    assert trace.of("IoSeek", path("big.bin"), caller="__main__:python_read")
    # The threads read on their own locations.
    readers = {e[0] for e in trace.of("IoOperationComplete", path("big.bin"),
                                      caller="__main__:threaded_read")}
    assert readers == {"reader-0", "reader-1", "reader-2"}
    if has_numpy(python):
        assert trace.of("IoCreateHandle", path("numpy.bin"), function="fdopen")
    # Failures: the write on a read-only descriptor completes without bytes; the second
    # close and the read on a closed descriptor have no handle (calls only).
    failing = trace.of("IoOperationComplete", path("failing.txt"))
    assert [e[4]["bytes_result"] for e in failing] == [UNKNOWN]
    assert len(trace.of("IoDestroyHandle", path("failing.txt"))) == 2
    assert "IO_PARADIGM" in otf2_print(str(exp / "traces.otf2"), "-G")  # no complaints
    otf2_print(str(exp / "traces.otf2"))

    # -- scorep-score: an IO group, and the trace's size estimated as for other regions
    est = score.estimate(cube.read(str(exp / "profile.cubex")))
    groups = {g.type for g in est.groups()[1]}
    assert {"IO", "COM", "USR"} <= groups
    real = sum(f.stat().st_size for f in (exp / "traces").glob("*.evt"))
    assert est.scenario.total_bytes == pytest.approx(real, rel=0.03)

    # -- scorep-report: the I/O section per file, with the regions doing it
    env = scorep_env()
    report = run([PYTHON, "-m", "scorep.report", exp], env=env, cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    section = report.stdout.split("I/O (POSIX and ISO C calls)", 1)[1].split("\nMeasurement", 1)[0]
    assert path("big.bin") in section and "__main__:threaded_read (300.0 kB read)" in section
    assert path("failing.txt") + " [1 failed]" in section
    assert "operation(s) failed" in section
    html = tmp_path / "report.html"
    report = run([PYTHON, "-m", "scorep.report", exp, "-o", html], env=env, cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    page = html.read_text()
    assert 'id="io-files"' in page and path("stdio.bin") in page and '<a href="#io">' in page


def test_io_recording_is_off_by_default_and_undone_at_the_end(python, tmp_path):
    """Without --io nothing is patched: a libc function found by dlsym is libc's own. With it,
    the wrapper (in the core library) until the measurement ends, then libc's again."""
    exp = tmp_path / "exp"
    out = run_scorep(python, [program("io_probe.py")], exp, cwd=tmp_path,
                     SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["during libc.so.6", "after libc.so.6"]
    names = IoTrace(exp)
    assert names.events == [] and names.handles == []
    est = score.estimate(cube.read(str(exp / "profile.cubex")))
    assert "IO" not in {g.type for g in est.groups()[1]}
    assert not any(m.uniq_name.startswith("io_bytes") for m in cube.read(
        str(exp / "profile.cubex")).metrics)

    out = run_scorep(python, ["--io=runtime:posix", program("io_probe.py")], exp, cwd=tmp_path,
                     SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["during libscorep_core.so", "after libc.so.6"]
    # The probe read /proc/self/maps while recording (once: the second time the
    # measurement had ended).
    trace = IoTrace(exp)
    maps = [e for e in trace.events if e[2] and e[2].endswith("/maps")]
    assert len([e for e in maps if e[1] == "IoCreateHandle"]) == 1
    assert len([e for e in maps if e[1] == "IoDestroyHandle"]) == 1


def test_the_tool_s_own_files_and_messages_are_never_recorded(tmp_path):
    """Trace buffers spilled to disk during the run (a small SCOREP_TOTAL_MEMORY), the
    verbose messages on stderr, the results written at the end: none is an I/O event."""
    exp = tmp_path / "exp"
    out = run_scorep(PYTHON, ["--io=runtime:posix", program("many_calls.py")], exp,
                     cwd=tmp_path, SCOREP_ENABLE_TRACING="true", SCOREP_TOTAL_MEMORY="1M",
                     SCOREP_VERBOSE="true")
    assert out.returncode == 0
    assert out.stdout == "done\n"
    assert "scorep: measuring into" in out.stderr
    assert "flushed to disk" in out.stderr  # spills happened during the run
    trace = IoTrace(exp)
    assert not [f for f in trace.files if f.startswith(str(exp))]
    assert trace.bytes("STDERR_FILENO", "WRITE") == 0
    assert trace.bytes("STDOUT_FILENO", "WRITE") == len("done\n")


def test_measurements_one_after_the_other_in_one_process(tmp_path):
    """As the Jupyter kernel measures cell after cell: each measurement patches, records
    its own I/O and undoes the patching at its end."""
    out = run([PYTHON, program("io_twice.py"), tmp_path], env=scorep_env(), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    for i in (1, 2):
        per_call = profile_bytes(tmp_path / ("exp%d" % i))
        assert caller_bytes(per_call, "__main__:save") == (0, 1000 * i)
    assert out.stdout.splitlines()[-1] == "between libc.so.6"


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun is not installed")
def test_mpi_ranks_record_their_own_io(tmp_path):
    env = scorep_env(tmp_path / "exp", SCOREP_ENABLE_TRACING="true")
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    out = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", PYTHON, "-m", "scorep",
                          "--mpp=mpi", "--io=runtime:posix", program("io_mpi.py")],
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    exp = tmp_path / "exp"
    trace = IoTrace(exp)
    for rank in (0, 1):
        name = str(tmp_path / ("rank%d.bin" % rank))
        assert trace.bytes(name, "WRITE") == 1000 * (rank + 1)
        # Each rank's file on that rank's location only.
        assert {(e[6], e[0]) for e in trace.of(target=name)} == {
            ("MPI Rank %d" % rank, "MainThread")}
    # The standard streams of all ranks are one handle each, as in Score-P.
    assert [h.name for h in trace.handles].count("STDOUT_FILENO") == 1
    per_call = profile_bytes(exp)
    assert caller_bytes(per_call, "__main__:save") == (0, 3000)
    otf2_print(str(exp / "traces.otf2"))


def _load_span(path):
    """The bytes from an object's base to the end of its last PT_LOAD, in whole pages: how
    much address space the loader reserves for it."""
    data = Path(path).read_bytes()
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    end = 0
    for i in range(phnum):
        p_type, _flags, _offset, vaddr, _paddr, _filesz, memsz = struct.unpack_from(
            "<IIQQQQQ", data, phoff + i * phentsize)
        if p_type == 1:  # PT_LOAD
            end = max(end, vaddr + memsz)
    return -(-end // 4096) * 4096


@pytest.fixture(scope="module")
def reload_libs(tmp_path_factory):
    """libgot_a.so, whose GOT slot of write lies at the end of a large RELRO table, and
    libgot_b.so, of the same size, whose writable data lies there (tests/programs/got_reload.c)."""
    where = tmp_path_factory.mktemp("reload")
    source = str(PROGRAMS / "got_reload.c")

    def build(name, *flags):
        out = subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(where / name)] +
                             list(flags) + [source], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr

    build("libgot_a.so", "-DWIDE_RELRO", "-Wl,-z,now")
    build("libgot_b.so", "-DPAD=0")
    missing = _load_span(where / "libgot_a.so") - _load_span(where / "libgot_b.so")
    if missing > 0:
        build("libgot_b.so", "-DPAD=%d" % missing)
    if _load_span(where / "libgot_a.so") != _load_span(where / "libgot_b.so"):
        pytest.skip("this toolchain made libgot_b.so larger than libgot_a.so: the loader "
                    "would not put it where libgot_a.so was")
    return where


@pytest.mark.parametrize("second", ["other", "other-bare", "again", "again-bare"])
def test_an_object_loaded_where_an_unloaded_one_was_is_patched_as_itself(tmp_path,
                                                                        reload_libs, second):
    """An object patched, unloaded (dlclose), and another loaded at its base: libgot_b.so,
    whose layout differs, or libgot_a.so again; by path (scanned right after the dlopen) or
    by bare name (scanned at the next dlsym). The second is patched (its write recorded,
    its GOT pointing at the wrapper), and at the end gets its own slots back, nothing of
    the first's. Before 44beccc libgot_b.so was taken for libgot_a.so: not patched, and at
    the end libgot_a.so's RELRO pages were made read-only again in it, over its data (a
    crash as it wrote there: Open MPI's MPI_Finalize did, in test_mpi_ranks_record_their_own_io
    once). libgot_a.so loaded again was taken for itself until the unloaded objects were
    forgotten at each scan."""
    name = "libgot_b.so" if second.startswith("other") else "libgot_a.so"
    target = name if second.endswith("bare") else str(reload_libs / name)
    env = scorep_env(LD_LIBRARY_PATH=str(reload_libs))
    out = run([PYTHON, program("got_reload.py"), reload_libs / "libgot_a.so", target,
               tmp_path], env=env, cwd=tmp_path)
    if "same base False" in out.stdout:
        pytest.skip("the loader put the second object elsewhere than the first")
    assert (out.returncode, out.stderr) == (0, ""), out.stdout
    assert out.stdout.splitlines() == [
        "first during libscorep_core.so", "same base True",
        "second during libscorep_core.so",
        "second after libc.so.6", "second works 7"]
    # Both objects' writes while measured: 3 bytes, then 5.
    assert IoTrace(tmp_path / "exp").bytes(str(tmp_path / "out.bin"), "WRITE") == 8
    assert (tmp_path / "out.bin").read_bytes() == b"ddd" + b"fffff" + b"hhhhhhh"


SQLITE_APP = '''\
import os, socket, sqlite3
db = sqlite3.connect("app.db")
db.execute("create table t (x)")
for i in range(20):
    db.execute("insert into t values (?)", (i,))
    db.commit()
db.close()
a, b = socket.socketpair()
os.write(a.fileno(), b"ping")
print(os.read(b.fileno(), 4).decode(), os.path.getsize("app.db"))
'''


def test_sqlite_lock_calls_are_not_taken_for_unknown_descriptors(tmp_path):
    """sqlite locks its database file with fcntl (F_SETLK) at every transaction: calls on a
    descriptor the measurement knows, which have no I/O event by design (as in Score-P, fcntl
    is a region; only F_DUPFD has an event). The report names the file's I/O and counts as
    unknown only the socket's two calls."""
    (tmp_path / "app.py").write_text(SQLITE_APP)
    exp = tmp_path / "exp"
    out = run_scorep(PYTHON, ["--io=runtime:posix", "app.py"], exp, cwd=tmp_path,
                     SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "ping"
    trace = IoTrace(exp)
    assert "fcntl64" in trace.regions or "fcntl" in trace.regions
    report = run([PYTHON, "-m", "scorep.report", exp], env=scorep_env(), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    section = report.stdout.split("I/O (POSIX and ISO C calls)", 1)[1].split("\nMeasurement")[0]
    fcntl_calls = int(re.search(r"^\s+([\d,]+) .* fcntl(?:64)?$", section, re.M)
                      .group(1).replace(",", ""))
    assert fcntl_calls >= 40  # at least a lock and an unlock per transaction
    unknown = re.search(r"([\d,]+) call\(s\) on descriptors the measurement does not know",
                        " ".join(section.split()))
    assert unknown is not None and int(unknown.group(1)) == 2, section  # the socket's write, read
    assert str(tmp_path / "app.db") in section
