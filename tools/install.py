"""Makes this checkout's scorep importable by the interpreter running this script (a .pth
file in its site-packages) and installs the console scripts. Run by `make install`."""

import argparse
import os
import site
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(REPO, "src")
SCRIPTS = {"scorep-score": "scorep.score", "scorep-report": "scorep.report"}


def writable_site_packages():
    candidates = list(site.getsitepackages()) + [site.getusersitepackages()]
    for path in candidates:
        try:
            os.makedirs(path, exist_ok=True)
        except OSError:
            continue
        if os.access(path, os.W_OK):
            return path
    raise SystemExit("install: no writable site-packages directory for %s" % sys.executable)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bindir", default="/usr/local/bin")
    parser.add_argument("--no-scripts", action="store_true",
                        help="only the .pth file (for further interpreters)")
    args = parser.parse_args()
    target = writable_site_packages()
    with open(os.path.join(target, "scorep.pth"), "w") as out:
        out.write(SRC + "\n")
    print("scorep: %s now imports scorep from %s (via %s/scorep.pth)" % (sys.executable, SRC,
                                                                          target))
    if args.no_scripts:
        return
    bindir = args.bindir
    if not os.access(bindir, os.W_OK):
        bindir = os.path.join(site.getuserbase(), "bin")
        os.makedirs(bindir, exist_ok=True)
    for name, module in SCRIPTS.items():
        if not os.path.exists(os.path.join(SRC, *module.split(".")) + ".py") and \
                not os.path.isdir(os.path.join(SRC, *module.split("."))):
            continue
        path = os.path.join(bindir, name)
        with open(path, "w") as out:
            out.write("#!%s\nimport sys\nfrom %s import main\nsys.exit(main())\n"
                      % (sys.executable, module))
        os.chmod(path, 0o755)
        print("scorep: installed %s" % path)


if __name__ == "__main__":
    main()
