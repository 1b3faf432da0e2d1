"""Measuring IPython cells in the running process, and the `%load_ext scorep` magics.

    %load_ext scorep
    %%scorep [binding arguments]      measure this cell
    %scorep [binding arguments] stmt  measure one statement
    %scorep --help

The cell runs in the shell's own namespace; nothing is copied or pickled. Automatic
instrumentation is switched on only while the cell's own code runs, and the shell's machinery
(IPython, ipykernel, traitlets, zmq, tornado, ...) lives in directories that the measurement
excludes, so what is recorded is the cell's code and what it calls.
"""

import builtins
import os
import sys
import threading
import time

from scorep import _errors, _native

# `import scorep` re-exports load_ipython_extension from here: everything else this module
# needs (IPython above all) is imported when it is used, so that importing it costs nothing.

__all__ = ["Settings", "CellMeasurement", "magics_class", "load_ipython_extension",
           "machinery_dirs", "results_line", "finish"]

# Packages of the interactive machinery: their code is never part of what a cell measures.
MACHINERY_PACKAGES = (
    "IPython", "ipykernel", "ipython_genutils", "traitlets", "zmq", "tornado",
    "jupyter_client", "jupyter_core", "comm", "debugpy", "matplotlib_inline", "stack_data",
    "executing", "pure_eval", "asttokens", "prompt_toolkit", "pexpect", "ptyprocess",
    "nest_asyncio", "backcall", "pickleshare", "jedi", "parso", "decorator",
)

_machinery_dirs = None


def machinery_dirs():
    global _machinery_dirs
    if _machinery_dirs is None:
        dirs = []
        for name in MACHINERY_PACKAGES:
            module = sys.modules.get(name)
            origin = getattr(module, "__file__", None) if module is not None else None
            if origin is None:
                import importlib.util
                try:
                    spec = importlib.util.find_spec(name)
                except (ImportError, ValueError):
                    spec = None
                origin = spec.origin if spec is not None else None
            if not origin or not origin.endswith(".py"):
                continue
            # A package's directory; a single-module package its file (its directory is
            # all of site-packages).
            if os.path.basename(origin) == "__init__.py":
                origin = os.path.dirname(origin)
            # Code objects carry the path they were imported by, which may be a symlink.
            for path in (os.path.abspath(origin), os.path.realpath(origin)):
                if path not in dirs:
                    dirs.append(path)
        _machinery_dirs = dirs
    return list(_machinery_dirs)


class SettingsError(_errors.UsageError, ValueError):
    """Binding arguments or environment lines that cannot be used."""


def parse_binding_args(args):
    """The binding arguments as the command line parses them (without a script)."""
    from scorep.measure import cli as _cli
    for arg in args:
        if arg in ("-h", "--help", "--version"):
            raise SettingsError("%s is not a binding argument here" % arg)
    try:
        opts = _cli.parse_args(list(args) + ["-c", ""])
    except _cli.UsageError as error:
        raise SettingsError(str(error)) from None
    if opts.mode != "code" or opts.target != "" or opts.args:
        raise SettingsError("binding arguments may not name a script, -m or -c: %s"
                            % " ".join(args))
    from scorep.measure import config as _config, session as _measurement
    try:  # an instrumenter this Python lacks is said now, not at the next measured cell
        _measurement.Measurement(_config.Config({}), opts.instrumenter)
    except _measurement.MeasurementError as error:
        raise SettingsError(str(error)) from None
    if opts.filter_file is not None:  # a filter that cannot be used: said now too
        try:
            _config.parse_filter_file("--filter", opts.filter_file)
        except _config.ConfigError as error:
            raise SettingsError(str(error)) from None
    return opts


def parse_env_lines(lines):
    """KEY=VALUE lines (an optional `export ` prefix, optional quotes; blank lines and
    # comments skipped) as a list of (key, value)."""
    pairs = []
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].strip()
        key, sep, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not key.replace("_", "a").isalnum() or key[0].isdigit():
            raise SettingsError("not a KEY=VALUE line: %r" % raw)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        pairs.append((key, value))
    return pairs


class Settings:
    """Binding arguments and environment for the measured cells of one shell.

    `%%scorep_env` values live here, not in os.environ, so that they do not leak into
    processes the notebook starts outside measured cells. `%env SCOREP_...` sets os.environ
    as IPython always does; whichever was set last wins."""

    def __init__(self):
        self.binding_args = []
        self._env = {}  # key -> (value, os.environ's value when it was set)
        self.said = set()  # SCOREP_JUPYTER_ names told about (results.kernel_notices)

    def set_binding_args(self, args):
        parse_binding_args(args)
        self.binding_args = list(args)

    def set_env(self, pairs):
        for key, value in pairs:
            self._env[key] = (value, os.environ.get(key))

    @property
    def env(self):
        """The %%scorep_env values still in force (not overridden by a later %env)."""
        return {key: value for key, (value, seen) in self._env.items()
                if os.environ.get(key) == seen}

    def environ(self):
        environ = {k: v for k, v in os.environ.items() if k.startswith("SCOREP_")}
        environ.update(self.env)
        return environ

    def tell_notices(self, environ=None):
        """One stderr line for each SCOREP_JUPYTER_ name without effect in `environ` (the
        settings in force by default), the first time it is seen in this shell."""
        from scorep.jupyter.results import kernel_notices
        for line in kernel_notices(self.environ() if environ is None else environ, self.said):
            sys.stderr.write("scorep: %s\n" % line)
        sys.stderr.flush()


class _Output:
    """Calls into the shell's output machinery with automatic instrumentation switched off:
    what a print or a display does inside ipykernel is no part of the cell."""

    def __init__(self, run, function):
        self._run = run
        self._function = function

    def __call__(self, *args, **kwargs):
        run = self._run
        # The switch is process-wide: while threads the cell started run, switching off
        # would lose their calls, so the output machinery's are recorded then instead.
        if not run.live or threading.get_ident() != run.thread or run.cell_threads_alive():
            return self._function(*args, **kwargs)
        run.switch_off()
        try:
            return self._function(*args, **kwargs)
        finally:
            run.switch_on()


# Seconds a measured cell's end waits for child processes still running (unless the cell's
# environment sets SCOREP_CHILDREN_TIMEOUT).
CELL_CHILDREN_TIMEOUT = 2


class CellMeasurement:
    """One measurement around the execution of one or more cells in an IPython shell.

    start() / finalize() bracket it; in between, every code object the shell executes (each
    run_code) runs with automatic instrumentation on (unless --noinstrumenter), everything
    else the shell does with it off."""

    def __init__(self, shell, settings, binding_args=None, program_args=(), notebook=None,
                 execution_count=None):
        from scorep.measure import cli as _cli, config as _config, session as _measurement
        from scorep.jupyter import monitor
        from scorep.jupyter.results import kernel_options
        self.shell = shell
        args = settings.binding_args if binding_args is None else binding_args
        self.options = parse_binding_args(args)
        self.environ = settings.environ()
        self.env = settings.env
        # The binding arguments configure as on the command line (--filter, --verbose, ...).
        overrides = _cli.config_overrides(self.options)
        if "SCOREP_CHILDREN_TIMEOUT" not in self.environ:
            # A cell's end is not the kernel's: processes that outlive the cell (a pool
            # kept for later cells) are waited for briefly, then write their own parts.
            overrides["SCOREP_CHILDREN_TIMEOUT"] = str(CELL_CHILDREN_TIMEOUT)
        self.config = _config.from_environ(self.environ, overrides)  # ConfigError if bad
        self.kernel_options = kernel_options(self.environ)  # ConfigError if bad
        settings.tell_notices(self.environ)
        self.execution_count = shell.execution_count if execution_count is None \
            else execution_count
        # Without SCOREP_EXPERIMENT_DIRECTORY a cell's experiment goes into the notebook's
        # folder (scorep.jupyter.results.Notebook.cell_dir), not the working directory.
        self.named_dir = self.config["SCOREP_EXPERIMENT_DIRECTORY"]
        if not self.named_dir and notebook is not None:
            self.config.values["SCOREP_EXPERIMENT_DIRECTORY"] = notebook.cell_dir(
                self.kernel_options, self.execution_count)
        self.monitor = None
        if self.kernel_options["SCOREP_JUPYTER_MONITORING"]:
            self.monitor = monitor.ResourceMonitor(
                self.kernel_options["SCOREP_JUPYTER_MONITORING_INTERVAL"])
        self.samples = None
        self.seconds = None
        self._started_at = None
        self.measurement = _measurement.Measurement(
            self.config, self.options.instrumenter, program_name="scorep_jupyter",
            program_args=list(args) + list(program_args), all_threads=False,
            exclude_dirs=machinery_dirs())
        # Whether the cell's code wants instrumentation on: --noinstrumenter starts off, and
        # register()/unregister() in a cell carry over to its later statements.
        self.wanted = self.options.instrument
        self.live = False  # the cell's own code is running now
        self.thread = None
        self._native = None
        self._saved = []
        self._environ_saved = {}
        self._merger = None
        self._displayhook = None
        self._threads_before = set()

    # ---- the switch -------------------------------------------------------------------------

    def switch_on(self):
        native = self._native
        if native is not None and native.running():
            if self.wanted:
                native.register()
            else:
                native.unregister()
        self.live = True

    def switch_off(self):
        native = self._native
        if not self.live:
            return
        self.live = False
        if native is not None and native.running():
            self.wanted = native.registered()
            native.unregister()

    def cell_threads_alive(self):
        # sys._current_frames is C: asking costs no recorded calls (threading.enumerate
        # would be recorded, being Python).
        return not self._threads_before.issuperset(sys._current_frames())

    # ---- start / finish -----------------------------------------------------------------------

    @property
    def experiment_dir(self):
        return self.measurement.experiment_dir

    @property
    def display_dir(self):
        """The experiment directory as the user named it, else the absolute generated one."""
        return self.named_dir or self.measurement.experiment_dir

    def start(self):
        self._apply_environ()
        # The monitor's thread starts before the measurement: no thread of the cell's, it is
        # never measured.
        if self.monitor is not None:
            self.monitor.start()
        self._started_at = time.perf_counter()
        try:
            self.measurement.start(register=False)
        except BaseException:
            self._stop_monitor()
            self._restore_environ()
            raise
        self._native = _native.load()
        self.thread = threading.get_ident()
        self._threads_before = set(sys._current_frames())
        try:
            if self.options.instrumenter_file:
                self._run_instrumenter_file(self.options.instrumenter_file)
            self._install()
        except BaseException:
            self.finalize(1)
            raise
        return self

    def finalize(self, exit_status=0):
        try:
            self.switch_off()
            self._uninstall()
        finally:
            self.seconds = time.perf_counter() - self._started_at
            self._restore_environ()
            self._stop_monitor()
            self._write_samples()
            self._trace_samples()
            results = self.measurement.finalize(exit_status, report_errors=True)
        return results

    def _stop_monitor(self):
        if self.monitor is not None and self.samples is None:
            self.samples = self.monitor.stop()

    def _write_samples(self):
        """monitoring.csv into the experiment (before MANIFEST.md is written, which lists
        it). A sample file that cannot be written costs the samples, not the experiment."""
        from scorep.jupyter import monitor
        path = self.measurement.experiment_dir
        if not self.samples or not path or not os.path.isdir(path):
            return
        try:
            self.samples.write_csv(os.path.join(path, monitor.MONITORING_FILE))
        except OSError as error:
            sys.stderr.write("scorep: cannot write %s: %s\n" % (monitor.MONITORING_FILE,
                                                                error.strerror or error))

    def _trace_samples(self):
        """With tracing on, the samples go into the trace too, as OTF2 Metric records of an
        asynchronous metric class on the cell's first thread (their CLOCK_MONOTONIC times
        are the trace's clock)."""
        native = getattr(self.measurement, "_native", None)
        if not self.samples or native is None or not self.measurement.config.tracing or \
                not native.running():
            return
        try:
            columns, rows = self.samples.metric_samples()
            if columns and rows:
                native.metric_samples(columns, rows)
        except (RuntimeError, ValueError, OverflowError) as error:
            sys.stderr.write("scorep: the resource samples are not in the trace: %s\n" % error)

    def _run_instrumenter_file(self, path):
        with open(path, "rb") as source:
            code = compile(source.read(), os.path.abspath(path), "exec", dont_inherit=True)
        namespace = {"__name__": "__scorep_instrumenter__", "__file__": os.path.abspath(path),
                     "__builtins__": builtins}
        exec(code, namespace)

    def _apply_environ(self):
        # The measured cells see the environment they were configured with, as the
        # original kernel's measured subprocess did; it is put back afterwards.
        for key, value in self.env.items():
            self._environ_saved[key] = (os.environ.get(key), value)
            os.environ[key] = value

    def _restore_environ(self):
        for key, (old, ours) in self._environ_saved.items():
            if os.environ.get(key) != ours:
                continue  # the cell set it itself: keep the cell's value
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old
        self._environ_saved = {}

    # ---- hooks into the shell ----------------------------------------------------------------

    def _patch(self, owner, name, value):
        """Sets an instance attribute that _uninstall removes again (the class's method
        shows through then, as before)."""
        had = name in vars(owner)
        self._saved.append((owner, name, had, vars(owner).get(name) if had else None))
        setattr(owner, name, value)

    def _patch_value(self, owner, name, value):
        """Sets an attribute (a trait, say) that _uninstall sets back to its old value."""
        self._saved.append((owner, name, True, getattr(owner, name)))
        setattr(owner, name, value)

    def _install(self):
        shell = self.shell
        original_run_code = shell.run_code

        async def run_code(code_obj, result=None, *, async_=False):
            if self.live:  # a cell run from inside the cell's code: already switched on
                return await original_run_code(code_obj, result, async_=async_)
            # The cell's top-level code is the notebook's, not a function: its calls are
            # recorded, it itself is not (each statement would show as a <module> region).
            if self._native.running():
                self._native.exclude_code(code_obj)
            self.switch_on()
            try:
                return await original_run_code(code_obj, result, async_=async_)
            finally:
                self.switch_off()

        self._patch(shell, "run_code", run_code)
        for name in ("showtraceback", "CustomTB"):
            self._patch(shell, name, self._off_during(getattr(shell, name)))
        formatter = getattr(shell, "display_formatter", None)
        if formatter is not None and hasattr(formatter, "__dict__"):
            self._patch(formatter, "format", _Output(self, formatter.format))
        display_pub = getattr(shell, "display_pub", None)
        if display_pub is not None and hasattr(display_pub, "__dict__"):
            self._patch(display_pub, "publish", _Output(self, display_pub.publish))
        for stream in {id(s): s for s in (sys.stdout, sys.stderr)}.values():
            if hasattr(stream, "__dict__"):
                for name in ("write", "writelines", "flush"):
                    if hasattr(stream, name):
                        self._patch(stream, name, _Output(self, getattr(stream, name)))
        kernel = getattr(shell, "kernel", None)
        if kernel is not None:
            for name in ("raw_input", "getpass"):
                if hasattr(kernel, name):
                    self._patch(kernel, name, _Output(self, getattr(kernel, name)))
        # IPython installs its display hook for each cell (display_trap), after this.
        display_trap = getattr(shell, "display_trap", None)
        if display_trap is not None and getattr(display_trap, "hook", None) is not None:
            self._patch_value(display_trap, "hook", _Output(self, display_trap.hook))
        self._displayhook = sys.displayhook
        sys.displayhook = _Output(self, sys.displayhook)
        if shell.ast_node_interactivity in ("last_expr", "last_expr_or_assign"):
            self._merger = merge_statements_transformer()
            shell.ast_transformers.append(self._merger)
        else:
            self._merger = None

    def _off_during(self, function):
        def call(*args, **kwargs):
            self.switch_off()
            return function(*args, **kwargs)
        return call

    def _uninstall(self):
        if self._merger is not None and self._merger in self.shell.ast_transformers:
            self.shell.ast_transformers.remove(self._merger)
        self._merger = None
        if isinstance(sys.displayhook, _Output) and sys.displayhook._run is self:
            sys.displayhook = self._displayhook
        for owner, name, had, value in reversed(self._saved):
            if had:
                setattr(owner, name, value)
            else:
                try:
                    delattr(owner, name)
                except AttributeError:
                    pass
        self._saved = []


_MERGE_CLASS = None


def merge_statements_transformer():
    global _MERGE_CLASS
    if _MERGE_CLASS is None:
        import ast

        class MergeStatements(ast.NodeTransformer):
            """All statements of a cell but the last as one `if True:` block.

            IPython executes every top-level statement as its own code object; in between,
            its own machinery runs (compilation, standard-library context managers) with
            the instrumentation off, and threads the cell started would miss their calls in
            those gaps. One block keeps the cell's code in one piece; the last statement
            stays separate so that its value is displayed as IPython does."""

            def visit_Module(self, node):
                body = node.body
                first = 0
                while first < len(body) and isinstance(body[first], ast.ImportFrom) and \
                        body[first].module == "__future__":
                    first += 1
                block = body[first:-1]
                if len(block) < 2:
                    return node
                merged = ast.If(test=ast.Constant(True), body=block, orelse=[])
                ast.copy_location(merged, block[0])
                merged.end_lineno = block[-1].end_lineno
                merged.end_col_offset = block[-1].end_col_offset
                node.body = body[:first] + [merged, body[-1]]
                return node

        _MERGE_CLASS = MergeStatements
    return _MERGE_CLASS()


def results_line(run):
    return "Instrumentation results can be found in %s" % run.display_dir


def finish(run, ok, notebook, vampir=None):
    """After a measurement: the results line (as the original kernel prints it), Vampir
    on the trace when asked (scorep.jupyter.vampir), then the cell's result in the notebook
    (scorep.jupyter.results). A result that cannot be shown is one line on stderr; the
    experiment is written either way."""
    sys.stdout.write(results_line(run) + "\n")
    sys.stdout.flush()
    if vampir is not None:
        vampir.after(run)
    if run.measurement.experiment_dir is None:
        return None
    try:
        return notebook.publish(run, ok)
    except Exception as error:  # the cell's own outcome stands whatever goes wrong here
        sys.stderr.write("scorep: no inline result for %s: %s: %s\n" % (
            run.display_dir, type(error).__name__, error))
        sys.stderr.flush()
        return None


# ---- %load_ext scorep ------------------------------------------------------------------------

HELP = """Measure IPython code with scorep, in this process and namespace.

  %%scorep [binding arguments]       (first line of a cell) measure the rest of the cell
  %scorep [binding arguments] stmt   measure one statement; its value is the result
  %scorep --help                     this help
  %scorep_report [N | DIR]           show the result of measured cell N (default: the last)
  %scorep_diff N M                   compare measured cells N (A) and M (B)
  %scorep_clean [--keep K]           remove this notebook's cell experiments but the newest K

After each measured cell: a one-line summary that opens to the HTML report (flame graph,
top regions, timeline when traced, resources sampled during the cell), and `_scorep`
holding the experiment's path and its regions. Without SCOREP_EXPERIMENT_DIRECTORY the
experiment goes to scorep-notebook/<notebook>/cell-<N>-<time>/ (SCOREP_JUPYTER_EXPERIMENTS
names another folder); SCOREP_JUPYTER_INLINE=false leaves the result out,
SCOREP_JUPYTER_INLINE=summary keeps only the summary and the top regions,
SCOREP_JUPYTER_MONITORING=false the resource sampling,
SCOREP_JUPYTER_MONITORING_INTERVAL=S samples every S seconds (default 0.1).

Binding arguments are those of `python -m scorep`, e.g. --noinstrumenter or
--instrumenter-type=cProfile. The configuration comes from the SCOREP_* environment
variables (set them with %env, e.g. %env SCOREP_ENABLE_TRACING=true). Every measurement
writes one experiment directory and ends with the line

  Instrumentation results can be found in <experiment directory>
"""


def _split_options(line):
    """Leading --options of a magic line, and the rest."""
    import shlex
    try:
        words = shlex.split(line)
    except ValueError as error:
        raise SettingsError("cannot split the arguments: %s" % error) from None
    options = []
    rest = line.strip()
    for word in words:
        if not word.startswith("-"):
            break
        options.append(word)
        index = rest.find(word)
        rest = rest[index + len(word):].lstrip() if index >= 0 else rest
    return options, rest


_MAGICS_CLASS = None


def magics_class():
    """The IPython Magics class (built on first use: importing this module must stay cheap,
    `import scorep` re-exports load_ipython_extension)."""
    global _MAGICS_CLASS
    if _MAGICS_CLASS is None:
        _MAGICS_CLASS = _build_magics_class()
    return _MAGICS_CLASS


def _build_magics_class():
    import ast

    from IPython.core.error import UsageError
    from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class

    from scorep.measure import config as _config, session as _measurement
    from scorep.jupyter import results, vampir

    @magics_class
    class ScorepMagics(Magics):
        """%%scorep / %scorep: measure a cell or a statement in place; %scorep_report,
        %scorep_diff, %scorep_clean: the measured cells' results."""

        def __init__(self, shell, settings=None):
            super().__init__(shell)
            self.settings = settings if settings is not None else Settings()
            self.notebook = results.Notebook(shell, self.settings)
            # The Score-P kernel's Vampir magics switch it on; off elsewhere.
            self.vampir = vampir.VampirLaunch()

        @line_magic
        def scorep_report(self, line):
            """%scorep_report [N | DIR]: the result of measured cell N (In [N]) again, the
            last one without N, or of an experiment directory."""
            try:
                self.notebook.show_report(line)
            except results.UsageProblem as error:
                raise UsageError(str(error)) from None

        @line_magic
        def scorep_diff(self, line):
            """%scorep_diff N M: the diff report of measured cells N (A) and M (B)."""
            import shlex
            try:
                words = shlex.split(line)
            except ValueError as error:
                raise UsageError("%scorep_diff: " + str(error)) from None
            if len(words) != 2:
                raise UsageError("%scorep_diff takes two measured cells: %scorep_diff N M")
            try:
                self.notebook.show_diff(words[0], words[1])
            except results.UsageProblem as error:
                raise UsageError(str(error)) from None

        @line_magic
        def scorep_clean(self, line):
            """%scorep_clean [--keep K]: removes this notebook's cell experiments (its
            folder under SCOREP_JUPYTER_EXPERIMENTS) but the newest K (default 0)."""
            words = line.split()
            keep = 0
            if words:
                value = None
                if len(words) == 2 and words[0] == "--keep":
                    value = words[1]
                elif len(words) == 1 and words[0].startswith("--keep="):
                    value = words[0][len("--keep="):]
                if value is None or not value.isdigit():
                    raise UsageError("usage: %%scorep_clean [--keep K] (K: how many of the "
                                     "newest experiments stay), not %r" % line.strip())
                keep = int(value)
            try:
                options = results.kernel_options(self.settings.environ())
            except _config.ConfigError as error:
                raise UsageError("scorep: %s" % error) from None
            self.notebook.clean(keep, options)

        @line_cell_magic
        def scorep(self, line, cell=None):
            __tracebackhide__ = True  # noqa: F841  (IPython leaves these frames out)
            try:
                options, rest = _split_options(line)
            except SettingsError as error:
                raise UsageError(str(error)) from None
            if any(o in ("-h", "--help") for o in options):
                sys.stdout.write(HELP)
                return None
            if cell is None:
                source = rest
            else:
                if rest:
                    raise UsageError("%%scorep takes only binding arguments on its line, "
                                     "not %r" % rest)
                source = cell
            if not source.strip():
                raise UsageError("nothing to measure (see %scorep --help)")
            return self._measure(source, options or None)

        def _measure(self, source, options):
            __tracebackhide__ = True  # noqa: F841
            shell = self.shell
            transformed = shell.transform_cell(source)
            filename = shell.compile.cache(transformed, shell.execution_count, raw_code=source)
            tree = shell.compile.ast_parse(transformed, filename=filename)
            tree = shell.transform_ast(tree)
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            block = shell.compile(tree, filename, "exec")
            value_code = shell.compile(last, filename, "eval") if last is not None else None
            try:
                run = CellMeasurement(shell, self.settings, options,
                                      program_args=["In [%d]" % shell.execution_count],
                                      notebook=self.notebook)
                run.start()
            except (SettingsError, _config.ConfigError, _measurement.MeasurementError,
                    OSError) as error:
                raise UsageError("scorep: %s" % error) from None
            status = 1
            try:
                value = self._run(run, block, value_code)
                status = 0
            except BaseException as error:
                self.shell._scorep_cell_error = error  # shown without the magic's frames
                raise
            finally:
                run.finalize(status)
                finish(run, status == 0, self.notebook, self.vampir)
            return value

        def _run(self, run, block, value_code):
            __tracebackhide__ = True  # noqa: F841
            ns_globals, ns_locals = self.shell.user_global_ns, self.shell.user_ns
            run._native.exclude_code(block)
            run.switch_on()
            try:
                exec(block, ns_globals, ns_locals)
                if value_code is None:
                    return None
                run._native.exclude_code(value_code)
                return eval(value_code, ns_globals, ns_locals)
            finally:
                run.switch_off()

    return ScorepMagics


def _cell_frames(tb, run_code):
    """The traceback from the frame of `run_code` (the magic's exec of the cell) on, or
    `tb` itself where there is none. IPython leaves out the first frame of what it shows
    of a cell's error (its own exec of the cell), so here the exec's frame stands first."""
    entry = tb
    while entry is not None:
        if entry.tb_frame.f_code is run_code:
            return entry
        entry = entry.tb_next
    return tb


def _show_cell_errors_plainly(ipython, run_code):
    """An error in a %%scorep cell shows as in a plain cell: the cell's frames only, not
    IPython's run_cell_magic and the magic's own (hidden, yet announced as "skipping hidden
    N frame"). The Score-P kernel runs measured cells itself; under %load_ext they come
    through run_cell_magic, so the traceback shown is trimmed here."""
    if getattr(ipython, "_scorep_cell_error", False) is not False:
        return  # installed before
    ipython._scorep_cell_error = None
    original = ipython.showtraceback

    def showtraceback(exc_tuple=None, *args, **kwargs):
        error = ipython._scorep_cell_error
        ipython._scorep_cell_error = None
        etype, value, tb = exc_tuple if exc_tuple is not None else sys.exc_info()
        if error is not None and value is error and tb is not None:
            exc_tuple = (etype, value, _cell_frames(tb, run_code))
        return original(exc_tuple, *args, **kwargs)

    ipython.showtraceback = showtraceback


def load_ipython_extension(ipython, settings=None):
    """`%load_ext scorep`: registers %%scorep and %scorep."""
    cls = magics_class()
    loaded = ipython.magics_manager.registry.get(cls.__name__)
    if loaded is not None and settings is None:
        return loaded  # loaded before (the Score-P kernel does at start): keep its settings
    magics = cls(ipython, settings)
    ipython.register_magics(magics)
    _show_cell_errors_plainly(ipython, cls._run.__code__)
    return magics
