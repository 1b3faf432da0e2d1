"""The build step of the Python package (pyproject.toml has the metadata).

The C parts are compiled by the Makefile, the one description of how they are built: this
step runs `make native` for the interpreter that builds the package, with the output and
object directories in setuptools' build tree (`--inplace`/editable installs: in src/scorep,
as `make build` does). It builds libscorep_core.so, scorep._bindings, scorep._reader, the MPI
wrappers libscorep_mpi.so where mpicc is found, and fetches the HTML report's npm packages;
the JavaScript files the report inlines are then copied into the package, so an installed
scorep needs neither the checkout nor npm.
"""

import ast
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext
from setuptools.command.install import install
from setuptools.errors import ExecError

HERE = os.path.dirname(os.path.abspath(__file__))
SRC_PACKAGE = os.path.join(HERE, "src", "scorep")
JS_DIR = os.path.join(SRC_PACKAGE, "report", "js")


def report_npm_files():
    """The npm files the HTML report inlines: html.py's NPM_FILES (paths under node_modules),
    read without importing the package."""
    path = os.path.join(SRC_PACKAGE, "report", "html.py")
    with open(path, encoding="utf-8") as source:
        tree = ast.parse(source.read(), path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and \
                any(isinstance(t, ast.Name) and t.id == "NPM_FILES" for t in node.targets):
            return ast.literal_eval(node.value)
    raise ExecError("%s defines no NPM_FILES: cannot tell which JavaScript files the HTML "
                    "report needs" % path)


class CleanBuild(build):
    """Starts from an empty build_lib: a file deleted from the sources, or libscorep_mpi.so of
    a build when mpicc was there, must not ride along into the next wheel. The C objects
    (in build_temp) stay, so rebuilding is incremental."""

    def run(self):
        shutil.rmtree(self.build_lib, ignore_errors=True)
        super().run()


class Install(install):
    """Debian's setuptools (also its wheel in python3-setuptools-whl, which pip uses for
    interpreters without setuptools, such as pyenv's) asks the install command for the
    options install_layout and prefix_option that only Debian's own distutils defines;
    elsewhere building a wheel fails in install_lib without these defaults."""

    install_layout = None
    prefix_option = None


class BuildNative(build_ext):
    """build_ext through the Makefile instead of setuptools' compiler driver."""

    def run(self):
        inplace = self.inplace or self.editable_mode
        if inplace:  # where `make build` puts them, so the two share their objects
            pkg_dir, obj_dir = SRC_PACKAGE, os.path.join(HERE, "build")
        else:
            pkg_dir = os.path.join(os.path.abspath(self.build_lib), "scorep")
            obj_dir = os.path.join(os.path.abspath(self.build_temp), "native")
        os.makedirs(pkg_dir, exist_ok=True)
        command = [os.environ.get("MAKE", "make"), "-C", HERE, "--no-print-directory",
                   "native", "PYTHON=" + sys.executable, "PKG_DIR=" + pkg_dir,
                   "OBJ_DIR=" + obj_dir]
        print(" ".join(command), flush=True)
        # An outer make (make install -> pip -> here) must not hand its command-line
        # variables or job server to this one.
        env = {k: v for k, v in os.environ.items()
               if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
        if subprocess.call(command, env=env) != 0:
            raise ExecError("`%s` failed: it builds scorep's C parts and fetches the HTML "
                            "report's JavaScript (its output above says what went wrong)"
                            % " ".join(command))
        self._outputs = []
        if not inplace:
            self._outputs = self._native_files(pkg_dir) + self._copy_report_js(
                os.path.join(pkg_dir, "report", "js"))

    @staticmethod
    def _native_files(pkg_dir):
        import sysconfig
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        files = [os.path.join(pkg_dir, name) for name in
                 ("libscorep_core.so", "libscorep_mpi.so", "_bindings" + suffix,
                  "_reader" + suffix)]
        return [f for f in files if os.path.exists(f)]

    @staticmethod
    def _copy_report_js(target):
        """The npm files the report inlines, with each npm package's licence."""
        modules = os.path.join(JS_DIR, "node_modules")
        copied = []
        packages = set()
        for rel in report_npm_files():
            source = os.path.join(modules, rel)
            if not os.path.isfile(source):
                raise ExecError("%s is missing after `npm ci` in %s" % (rel, JS_DIR))
            packages.add(rel.split("/")[0])
            copied.append((source, rel))
        for package in sorted(packages):
            for licence in glob.glob(os.path.join(modules, package, "LICEN[CS]E*")):
                copied.append((licence, os.path.relpath(licence, modules)))
        outputs = []
        for source, rel in copied:
            destination = os.path.join(target, "node_modules", rel)
            os.makedirs(os.path.dirname(destination), exist_ok=True)
            shutil.copyfile(source, destination)
            outputs.append(destination)
        return outputs

    def get_outputs(self):
        return list(getattr(self, "_outputs", []))

    def get_output_mapping(self):
        return {}


setup(
    # One entry stands for all native parts: it makes the wheel platform- and
    # interpreter-specific and has setuptools run BuildNative.
    ext_modules=[Extension("scorep._bindings", sources=[])],
    cmdclass={"build": CleanBuild, "build_ext": BuildNative, "install": Install},
)
