"""Bounded, seeded fuzzing of what reads files users hand us: damaged traces and profiles
given to scorep-report and scorep-score, mutated filter files given to the filter parser.
Whatever the damage: no traceback, no crash, and either a result or one error line.
About 300 cases in well under a minute (the readers run in-process, the damage is random
but reproducible from the seed)."""

import io
import os
import random
import shutil
import subprocess
import sys
import tarfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from conftest import program, run_scorep

SEED = 20261124


@pytest.fixture(scope="module")
def experiment(tmp_path_factory):
    exp = tmp_path_factory.mktemp("fuzz") / "exp"
    out = run_scorep(sys.executable, [program("threads.py")], exp,
                     SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    return exp


def mutate(data, rng):
    data = bytearray(data)
    kind = rng.randrange(4)
    if kind == 0 and data:  # flipped bytes
        for _ in range(rng.randint(1, 16)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif kind == 1 and data:  # cut short
        del data[rng.randrange(len(data)):]
    elif kind == 2 and data:  # a slice repeated elsewhere
        start = rng.randrange(len(data))
        piece = data[start:start + rng.randint(1, 64)]
        at = rng.randrange(len(data))
        data[at:at] = piece
    else:  # zeroed run
        if data:
            start = rng.randrange(len(data))
            data[start:start + rng.randint(1, 256)] = bytes(min(256, len(data) - start))
    return bytes(data)


def call_main(main, args):
    """A command line's main() in-process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            status = main(args)
        except SystemExit as exit:
            status = exit.code
    return status or 0, out.getvalue(), err.getvalue()


def assert_clean(status, stderr, tool, case):
    assert "Traceback" not in stderr, "%s: %s" % (case, stderr)
    assert status in (0, 1, 2), "%s: status %r, %s" % (case, status, stderr)
    if status:
        lines = [line for line in stderr.splitlines() if line.strip()]
        assert lines and lines[-1].startswith(tool + ":"), "%s: %s" % (case, stderr)


def trace_files(exp):
    return [p for p in exp.rglob("*") if p.is_file() and
            (p.suffix in (".evt", ".def", ".otf2"))]


@pytest.mark.parametrize("batch", range(4))
def test_damaged_traces_give_one_error_line(experiment, tmp_path, batch):
    from scorep.report.cli import main
    rng = random.Random(SEED + batch)
    files = sorted(trace_files(experiment))
    for case in range(40):
        damaged = tmp_path / ("case%d" % case)
        shutil.copytree(experiment, damaged)
        (damaged / "profile.cubex").unlink()  # the trace alone: nothing to fall back on
        victim = damaged / rng.choice(files).relative_to(experiment)
        victim.write_bytes(mutate(victim.read_bytes(), rng))
        status, _, stderr = call_main(main, [str(damaged)])
        assert_clean(status, stderr, "scorep-report", "batch %d case %d %s" % (batch, case,
                                                                                victim.name))
        shutil.rmtree(damaged)


@pytest.mark.parametrize("batch", range(2))
def test_damaged_profiles_give_one_error_line(experiment, tmp_path, batch):
    from scorep.report.cli import main as report_main
    from scorep.score import main as score_main
    rng = random.Random(SEED * 7 + batch)
    with tarfile.open(experiment / "profile.cubex") as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers() if m.isfile()]
    for case in range(40):
        path = tmp_path / ("case%d.cubex" % case)
        if case % 4 == 0:  # the archive itself damaged
            path.write_bytes(mutate((experiment / "profile.cubex").read_bytes(), rng))
        else:  # one member damaged inside an intact archive
            victim = rng.randrange(len(members))
            with tarfile.open(path, "w") as tar:
                for i, (member, data) in enumerate(members):
                    data = mutate(data, rng) if i == victim else data
                    info = tarfile.TarInfo(member.name)
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
        for tool, main in (("scorep-report", report_main), ("scorep-score", score_main)):
            status, _, stderr = call_main(main, [str(path)])
            assert_clean(status, stderr, tool, "batch %d case %d" % (batch, case))


FILTER_WORDS = ["SCOREP_REGION_NAMES_BEGIN", "SCOREP_REGION_NAMES_END", "SCOREP_FILE_NAMES_BEGIN",
                "SCOREP_FILE_NAMES_END", "EXCLUDE", "INCLUDE", "MANGLED", "DEMANGLED", "*", "foo*",
                "__main__:f", "#", "\\", "bar?", "[", "\n", " ", "\t", "\udcff", "\x00"]


def test_mutated_filter_files_give_one_error_line(tmp_path):
    rng = random.Random(SEED * 13)
    script = tmp_path / "tiny.py"
    script.write_text("def f():\n    pass\nf()\nprint('ok')\n")
    for case in range(60):
        text = " ".join(rng.choice(FILTER_WORDS) for _ in range(rng.randint(0, 24)))
        filter_file = tmp_path / ("case%d.filter" % case)
        filter_file.write_bytes(text.encode("utf-8", "surrogateescape"))
        out = subprocess.run([sys.executable, "-m", "scorep", "--filter=%s" % filter_file,
                              str(script)], capture_output=True, text=True, cwd=tmp_path,
                             env=dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1] / "src"),
                                      SCOREP_EXPERIMENT_DIRECTORY=str(tmp_path / "exp")),
                             timeout=60)
        case_text = "case %d: %r" % (case, text)
        assert "Traceback" not in out.stderr, case_text + out.stderr
        if out.returncode == 0:
            assert out.stdout == "ok\n", case_text
        else:
            assert out.returncode == 1 and out.stdout == "", case_text + out.stderr
            assert out.stderr.startswith("scorep: ") and out.stderr.count("\n") == 1, \
                case_text + out.stderr
        shutil.rmtree(tmp_path / "exp", ignore_errors=True)
