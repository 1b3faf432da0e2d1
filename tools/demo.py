"""The demo of `make demo`: measures examples/demo_app.py with profiling and tracing, then
shows what came out: the score, the terminal report, an HTML report and the trace.

Run by the interpreter of the project's virtual environment (.venv/bin/python, where `make
install` put scorep): the commands it shows are the ones a user types next."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def show(command, display, lines=None):
    print("\n$ " + display)
    sys.stdout.flush()
    if lines is None:
        status = subprocess.call(command, cwd=REPO)
    else:
        out = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
        print("\n".join(out.stdout.splitlines()[:lines]))
        status = out.returncode
    if status != 0:
        sys.exit("demo: `%s` failed with exit status %d" % (display, status))


def main():
    bin_dir = os.path.dirname(sys.executable)
    shown_bin = os.path.relpath(bin_dir, REPO) if bin_dir.startswith(REPO + os.sep) else bin_dir
    shown_python = os.path.join(shown_bin, "python")
    experiment = os.path.join(REPO, "scorep-demo")
    env = dict(os.environ, SCOREP_EXPERIMENT_DIRECTORY=experiment, SCOREP_ENABLE_TRACING="true",
               SCOREP_ENABLE_PROFILING="true")
    command = [sys.executable, "-m", "scorep", os.path.join(REPO, "examples", "demo_app.py"), "30"]
    print("$ SCOREP_ENABLE_TRACING=true SCOREP_EXPERIMENT_DIRECTORY=scorep-demo "
          "%s -m scorep examples/demo_app.py 30" % shown_python)
    sys.stdout.flush()
    status = subprocess.call(command, env=env, cwd=REPO)
    if status != 0:
        sys.exit(status)
    print("\n$ ls scorep-demo")
    print("  ".join(sorted(os.listdir(experiment))))
    score, report = (os.path.join(bin_dir, name) for name in ("scorep-score", "scorep-report"))
    show([score, experiment], "%s scorep-demo" % os.path.join(shown_bin, "scorep-score"))
    show([report, experiment], "%s scorep-demo" % os.path.join(shown_bin, "scorep-report"))
    html = os.path.join(experiment, "report.html")
    show([report, experiment, "-o", html],
         "%s scorep-demo -o scorep-demo/report.html" % os.path.join(shown_bin, "scorep-report"))
    show(["otf2-print", os.path.join(experiment, "traces.otf2")],
         "otf2-print scorep-demo/traces.otf2 | head -12", lines=12)
    print("\nOpen %s in a browser (it works offline), or scorep-demo/traces.otf2 in Vampir."
          % html)


if __name__ == "__main__":
    main()
