"""python -m scorep.jupyter install [...] | python -m scorep.jupyter -f <connection file>"""

import argparse
import json
import os
import shutil
import site
import sys
import tempfile

from scorep.jupyter import DISPLAY_NAME, KERNEL_NAME, source_dir

_UNSET_PYTHONPATH = "${PYTHONPATH}"


def _source_dir():
    return os.path.realpath(source_dir())


def _importable_without_pythonpath(directory):
    """Whether the interpreter finds packages in `directory` on its own (site-packages)."""
    site_dirs = list(site.getsitepackages()) + [site.getusersitepackages()]
    site_dirs += [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    return os.path.realpath(directory) in {os.path.realpath(d) for d in site_dirs}


def kernel_spec(name=KERNEL_NAME, display_name=DISPLAY_NAME):
    spec = {
        "argv": [sys.executable, "-m", "scorep.jupyter", "-f", "{connection_file}"],
        "display_name": display_name,
        "language": "python",
        "metadata": {"debugger": False},
    }
    src = _source_dir()
    if not _importable_without_pythonpath(src):
        # Jupyter fills ${PYTHONPATH} from its own environment; where that has none, the
        # kernel drops the unfilled placeholder again (see _clean_pythonpath).
        spec["env"] = {"PYTHONPATH": src + os.pathsep + _UNSET_PYTHONPATH}
    return spec


def install(argv):
    parser = argparse.ArgumentParser(
        prog="python -m scorep.jupyter install",
        description="Install the Score-P Python kernelspec (%s) for this interpreter (%s)."
        % (KERNEL_NAME, sys.executable))
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true",
                       help="install for the current user instead of system-wide")
    where.add_argument("--sys-prefix", action="store_true",
                       help="install into sys.prefix (%s), e.g. a virtualenv" % sys.prefix)
    where.add_argument("--prefix", metavar="P", help="install into P/share/jupyter/kernels")
    parser.add_argument("--name", default=KERNEL_NAME,
                        help="kernelspec name (default %(default)s)")
    parser.add_argument("--display-name", default=DISPLAY_NAME,
                        help="name shown in Jupyter (default %(default)r)")
    opts = parser.parse_args(argv)
    from jupyter_client.kernelspec import KernelSpecManager

    prefix = sys.prefix if opts.sys_prefix else opts.prefix
    tmp = tempfile.mkdtemp(prefix="scorep_kernelspec_")
    try:
        with open(os.path.join(tmp, "kernel.json"), "w") as out:
            json.dump(kernel_spec(opts.name, opts.display_name), out, indent=1)
            out.write("\n")
        try:
            destination = KernelSpecManager().install_kernel_spec(
                tmp, opts.name, user=opts.user, prefix=prefix)
        except OSError as error:
            sys.stderr.write("scorep.jupyter: cannot install the kernelspec: %s%s\n" % (
                error, "" if opts.user or prefix else " (use --user or --sys-prefix)"))
            return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.stdout.write("Installed kernelspec %s in %s\n" % (opts.name, destination))
    return 0


def _clean_pythonpath():
    """Drops the kernelspec's ${PYTHONPATH} where Jupyter had nothing to fill in, and the
    repetition where it filled in the same directory."""
    value = os.environ.get("PYTHONPATH")
    if value is None:
        return
    parts = []
    for part in value.split(os.pathsep):
        if part and part != _UNSET_PYTHONPATH and part not in parts:
            parts.append(part)
    if parts:
        os.environ["PYTHONPATH"] = os.pathsep.join(parts)
    else:
        del os.environ["PYTHONPATH"]
    sys.path[:] = [p for p in sys.path if not p.endswith(_UNSET_PYTHONPATH)]


def launch(argv):
    _clean_pythonpath()
    from ipykernel.kernelapp import IPKernelApp

    from scorep.jupyter.kernel import ScorePKernel

    IPKernelApp.launch_instance(argv=argv, kernel_class=ScorePKernel)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "install":
        return install(argv[1:])
    if argv and argv[0] in ("-h", "--help"):
        sys.stdout.write(__doc__.strip() + "\n\n"
                         "install [--user | --sys-prefix | --prefix P]: install the kernelspec "
                         "%r\n-f FILE: run the kernel (Jupyter does this)\n" % KERNEL_NAME)
        return 0
    return launch(argv)


if __name__ == "__main__":
    sys.exit(main())
