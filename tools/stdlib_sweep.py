"""CPython's own test modules under measurement against the same run without it, on several
interpreters and in several measurement modes: the outcome of every test (not only the exit
status), "environment changed", "env changed", "Unraisable exception" and "Exception ignored".

    python3 tools/stdlib_sweep.py --out DIR [-j 2] [--pythons P ...] [--modules M ...]
                                  [--modes MODE ...]

Each module's plain run is made once per interpreter and kept in DIR (a second call reuses
it); each measured run likewise. The table printed at the end says, per interpreter, mode and
module, "same" or what differs. tests/test_stdlib_under_measurement.py runs a fixed, cheap
selection of these cases on every test run; this tool is for the wide sweep after a change
to the event path (docs/benchmarks.md, "CPython's tests under measurement")."""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# SCOREP_SWEEP_SRC: a copy of src/ to measure with, so that a rebuild during a long sweep
# does not replace the extension under running programs.
SRC = os.environ.get("SCOREP_SWEEP_SRC", os.path.join(os.path.dirname(HERE), "src"))
REGRTEST_ENV = os.path.join(os.path.dirname(HERE), "tests", "programs", "regrtest_env.py")

OUTCOME = re.compile(r"^(test\w*) \(([\w.]+)\)(?:\n.*?)? \.\.\. "
                     r"(ok|FAIL|ERROR|skipped|expected failure|unexpected success)", re.M)
MARKERS = ("env changed", "Unraisable exception", "Exception ignored")

# mode -> (options, environment); "c-calls" is the non-default choice of each version.
MODES = {
    "profile": ([], {"SCOREP_ENABLE_TRACING": "false"}),
    "trace": ([], {"SCOREP_ENABLE_TRACING": "true"}),
    "c-calls": (None, {"SCOREP_ENABLE_TRACING": "false"}),
    "sampling": (["--sampling=5000"], {"SCOREP_ENABLE_TRACING": "true"}),
    "sampling-safepoint": (["--sampling=5000"], {"SCOREP_ENABLE_TRACING": "true",
                                                 "SCOREP_SAMPLING_READ": "safepoint"}),
    "native": (["--sampling", "--native"], {"SCOREP_ENABLE_TRACING": "false"}),
    "lines": (["--lines=*"], {"SCOREP_ENABLE_TRACING": "false"}),
    "metrics": (["--memory"], {"SCOREP_ENABLE_TRACING": "true",
                               "SCOREP_METRIC_RUSAGE": "ru_utime,ru_minflt",
                               "SCOREP_METRIC_PERF": "page-faults"}),
    "io": ([], {"SCOREP_ENABLE_TRACING": "true", "SCOREP_IO_POSIX": "true"}),
}


def outcomes(output):
    """(test, class, outcome) of every test unittest reported in verbose mode (also read by
    tests/test_stdlib_under_measurement.py)."""
    # 3.11+ prints "test_x (module.Class.test_x)"; older ones "test_x (module.Class)".
    result = []
    for name, where, outcome in OUTCOME.findall(output):
        where = where[:-len(name) - 1] if where.endswith("." + name) else where
        result.append((name, where, outcome))
    return sorted(result)


def default_pythons():
    found = ["/usr/bin/python3"]
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    for minor in range(9, 14):
        found += sorted(glob.glob("%s/versions/3.%d.*/bin/python3.%d" % (root, minor, minor)))
    return found


def version_of(python):
    out = subprocess.run([python, "-c", "import sys, test.test_generators;"
                          "print(*sys.version_info[:3])"], capture_output=True, text=True)
    return tuple(int(x) for x in out.stdout.split()) if out.returncode == 0 else None


def label(python, version):
    return "%d.%d.%d%s" % (version + (" debian" if python.startswith("/usr/") else "",))


def environment():
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOREP_")}
    env["PYTHONPATH"] = SRC
    env.pop("PYTHONHOME", None)
    return env


def run_one(out_dir, python, tag, module, mode, version, timeout):
    """One run (mode None: without measurement), kept as JSON in out_dir."""
    name = "%s-%s-%s.json" % (tag.replace(" ", "_"), module, mode or "plain")
    path = os.path.join(out_dir, name)
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    work = os.path.join(out_dir, "work", name[:-5])
    os.makedirs(work, exist_ok=True)
    env = environment()
    args = [python, REGRTEST_ENV, "-v", module]
    if mode:
        options, variables = MODES[mode]
        if options is None:
            options = ["--no-c-calls" if version >= (3, 12) else "--c-calls"]
        env.update(variables)
        env["SCOREP_EXPERIMENT_DIRECTORY"] = os.path.join(work, "exp")
        args = [python, "-m", "scorep"] + options + args[1:]
    start = time.monotonic()
    try:
        p = subprocess.run(args, env=env, cwd=work, capture_output=True, text=True,
                           timeout=timeout)
        rc, stdout, stderr = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, stdout, stderr = "timeout", str(e.stdout or ""), str(e.stderr or "")
    result = {"rc": rc, "seconds": round(time.monotonic() - start, 1),
              "outcomes": outcomes(stdout),
              "env": re.findall(r"^environment changed: (.*)$", stderr, re.M),
              "markers": [m for m in MARKERS if m in stdout or m in stderr],
              "tail": (stdout[-4000:], stderr[-4000:])}
    with open(path, "w") as f:
        json.dump(result, f)
    return result


def compare(plain, measured):
    """'same', or what differs."""
    why = []
    if measured["rc"] != plain["rc"]:
        why.append("rc %s (plain %s)" % (measured["rc"], plain["rc"]))
    expected = {(n, w): o for n, w, o in map(tuple, plain["outcomes"])}
    got = {(n, w): o for n, w, o in map(tuple, measured["outcomes"])}
    for key in sorted(set(expected) | set(got)):
        if expected.get(key) != got.get(key):
            why.append("%s.%s: %s (plain %s)" % (key[1].split(".")[-1], key[0],
                                                 got.get(key, "-"), expected.get(key, "-")))
    if measured["env"] != plain["env"]:
        why.append("environment changed %s (plain %s)" % (measured["env"], plain["env"]))
    extra = [m for m in measured["markers"] if m not in plain["markers"]]
    if extra:
        why.append("printed " + ", ".join(extra))
    return "same" if not why else "; ".join(why)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("-j", type=int, default=2)
    parser.add_argument("--pythons", nargs="*", default=None)
    parser.add_argument("--modules", nargs="*", required=True)
    parser.add_argument("--modes", nargs="*", default=list(MODES))
    parser.add_argument("--timeout", type=int, default=900)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    pythons = []
    for python in args.pythons or default_pythons():
        version = version_of(python)
        if version:
            pythons.append((python, version, label(python, version)))
        else:
            print("skipped %s: no test package" % python, file=sys.stderr)
    # Newest interpreters first: the event path changes most there (sys.monitoring).
    pythons.sort(key=lambda p: p[1], reverse=True)
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        for python, version, tag in pythons:
            for module in args.modules:
                if module == "test_monitoring" and version < (3, 12):
                    continue
                for mode in [None] + args.modes:
                    jobs[(tag, module, mode)] = pool.submit(run_one, args.out, python, tag,
                                                            module, mode, version[:2],
                                                            args.timeout)
        results = {key: job.result() for key, job in jobs.items()}
    for (tag, module, mode), measured in sorted(results.items(), key=lambda kv: (
            kv[0][0], kv[0][1], kv[0][2] or "")):
        if mode is None:
            continue
        plain = results[(tag, module, None)]
        verdict = compare(plain, measured)
        print("%-18s %-9s %-28s %5.0fs/%4.0fs  %s" % (tag, mode, module, measured["seconds"],
                                                   plain["seconds"], verdict[:400]))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
