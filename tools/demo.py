"""The demo of `make demo`: measures examples/demo_app.py with profiling and tracing and
shows what came out."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    experiment = os.path.join(REPO, "scorep-demo")
    env = dict(os.environ, SCOREP_EXPERIMENT_DIRECTORY=experiment, SCOREP_ENABLE_TRACING="true",
               SCOREP_ENABLE_PROFILING="true")
    command = [sys.executable, "-m", "scorep", os.path.join(REPO, "examples", "demo_app.py"), "30"]
    print("$ SCOREP_ENABLE_TRACING=true SCOREP_EXPERIMENT_DIRECTORY=scorep-demo "
          "python -m scorep examples/demo_app.py 30")
    status = subprocess.call(command, env=env, cwd=REPO)
    if status != 0:
        sys.exit(status)
    print("\n$ ls scorep-demo")
    print("  ".join(sorted(os.listdir(experiment))))
    for tool in ([sys.executable, "-m", "scorep.score", experiment],
                 [sys.executable, "-m", "scorep.report", experiment]):
        module = tool[2].split(".")[1]
        if os.path.exists(os.path.join(REPO, "src", "scorep", module + ".py")) or \
                os.path.isdir(os.path.join(REPO, "src", "scorep", module)):
            print("\n$ python -m scorep.%s scorep-demo" % module)
            sys.stdout.flush()
            subprocess.call(tool, cwd=REPO)
    print("\n$ otf2-print scorep-demo/traces.otf2 | head -12")
    sys.stdout.flush()
    out = subprocess.run(["otf2-print", os.path.join(experiment, "traces.otf2")],
                         capture_output=True, text=True).stdout
    print("\n".join(out.splitlines()[:12]))


if __name__ == "__main__":
    main()
