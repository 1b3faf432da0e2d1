"""`make install`: pip installs this checkout for one interpreter, then the Jupyter kernelspec
for that interpreter. A thin wrapper: it only chooses pip's options and says which command
it runs; `pip uninstall scorep` undoes the installation.

Where it goes:
  --venv DIR          into the virtual environment DIR (created with --system-site-packages,
                      for Debian's numpy, mpi4py and OTF2 reader, when it does not exist)
  an active venv      into it (the interpreter running this script is the venv's)
  root                system-wide (Debian's python3: /usr/local/lib/python3.X/dist-packages,
                      scripts in /usr/local/bin)
  otherwise           for the user (~/.local)

Debian marks its python3 "externally managed" (PEP 668), so pip needs
--break-system-packages for the last two; it then still writes only below /usr/local or
~/.local, never into Debian's own directories. The build backend is setuptools: the
interpreter's own (Debian's python3-setuptools and python3-wheel) when it has them, else
Debian's wheels of them (--wheels, python3-setuptools-whl and python3-wheel-whl) in pip's
isolated build environment. PyPI is never asked.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = r"""
import json, os, sys, sysconfig
try:
    import setuptools, wheel
    backend = int(setuptools.__version__.split(".")[0]) >= 61
except Exception:
    backend = False
try:
    import jupyter_client
    jupyter = True
except Exception:
    jupyter = False
print(json.dumps({
    "venv": sys.prefix != sys.base_prefix,
    "externally_managed": os.path.exists(
        os.path.join(sysconfig.get_paths()["stdlib"], "EXTERNALLY-MANAGED")),
    "backend": backend,
    "jupyter": jupyter,
}))
"""


def fail(message):
    sys.stderr.write("install: %s\n" % message)
    sys.exit(1)


def run(command, dry_run):
    print("$ " + " ".join(shlex.quote(part) for part in command), flush=True)
    if not dry_run and subprocess.call(command, cwd="/") != 0:
        fail("`%s` failed" % " ".join(command))


def pip_command(python, facts, wheels, editable):
    command = [python, "-m", "pip", "install", "--no-index"]
    if facts["backend"]:
        command.append("--no-build-isolation")
    elif os.path.isdir(wheels):
        command += ["--find-links", wheels]
    else:
        fail("%s has no setuptools (>= 61) and wheel, and %s has no wheels of them "
             "(Debian: apt-get install python3-setuptools-whl python3-wheel-whl)"
             % (python, wheels))
    if facts["venv"]:
        kernel_where = ["--sys-prefix"]
    elif os.getuid() == 0:
        command.append("--root-user-action=ignore")  # system-wide is what root asked for
        kernel_where = []
    else:
        command.append("--user")
        kernel_where = ["--user"]
    if not facts["venv"] and facts["externally_managed"]:
        command.append("--break-system-packages")
    command += ["-e", REPO] if editable else [REPO]
    return command, kernel_where


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", metavar="DIR",
                        help="install into the virtual environment DIR (created when missing)")
    parser.add_argument("--wheels", default="/usr/share/python-wheels",
                        help="where Debian's setuptools and wheel wheels are "
                             "(default %(default)s)")
    parser.add_argument("--editable", action="store_true",
                        help="an editable installation (pip install -e) of this checkout")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the commands without running them")
    args = parser.parse_args()

    python = probed = sys.executable
    if args.venv:
        # Absolute before anything runs: the commands run in / (so that pip never picks up
        # the checkout as the current directory), where a relative .venv would land.
        args.venv = os.path.abspath(args.venv)
        python = probed = os.path.join(args.venv, "bin", "python")
        if not os.path.exists(python):
            run([sys.executable, "-m", "venv", "--system-site-packages", args.venv],
                args.dry_run)
            if args.dry_run:  # the new venv's facts are this interpreter's
                probed = sys.executable
    try:
        probe = subprocess.run([probed, "-c", PROBE], capture_output=True, text=True)
    except OSError as error:
        fail("cannot run %s: %s" % (probed, error.strerror))
    if probe.returncode != 0:
        fail("cannot run %s: %s" % (probed, " ".join(probe.stderr.strip().splitlines()[-1:])))
    facts = json.loads(probe.stdout)
    if args.venv:
        facts["venv"] = True
    command, kernel_where = pip_command(python, facts, args.wheels, args.editable)
    run(command, args.dry_run)
    if facts["jupyter"]:
        run([python, "-m", "scorep.jupyter", "install"] + kernel_where, args.dry_run)
    else:
        print("install: no jupyter_client for %s: the Jupyter kernelspec is not installed "
              "(later: %s)" % (python, " ".join([python, "-m", "scorep.jupyter", "install"] +
                                                kernel_where)))


if __name__ == "__main__":
    main()
