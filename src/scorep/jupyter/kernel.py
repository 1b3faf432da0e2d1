"""The Score-P Python kernel: an IPython kernel that measures marked cells in-process.

The cell magics of the original Score-P Jupyter kernel keep their meaning and output:

    %%scorep_python_binding_arguments   binding arguments for later measured cells
    %%scorep_env                        KEY=VALUE lines: configuration for measured cells
    %%execute_with_scorep [ARGS]        measure this cell (ARGS: binding arguments for it)
    %%enable_multicellmode / %%finalize_multicellmode / %%abort_multicellmode
    %%marshalling_settings              accepted; nothing is marshalled in-process
    %%enable_vampir_launch_on_scorep_instrumented / %%disable_vampir_launch
                                        Vampir on each measured cell's trace
    %%start_writefile [name] / %%end_writefile / %%abort_writefile

Unlike the original, a measured cell runs in the kernel process and namespace like any other
cell (see scorep.jupyter.magics): no subprocess, no pickling, every object survives. After it
comes its result in the notebook (scorep.jupyter.results): an inline report, `_scorep`, and
the line magics %scorep_report, %scorep_diff and %scorep_clean.
"""

import io
import os
import re
import shlex
import sys
import tokenize

from ipykernel.ipkernel import IPythonKernel

from scorep.measure import config as _config, session as _measurement
from scorep._version import __version__
from scorep.jupyter import magics as _magics, source_dir
from scorep.jupyter.results import kernel_options

DEFAULT, MULTICELL, WRITEFILE = "default", "multicell", "writefile"

# The cell magics the kernel itself handles (before IPython sees the cell).
KERNEL_MAGICS = (
    "scorep_python_binding_arguments", "scorep_env", "execute_with_scorep",
    "enable_multicellmode", "abort_multicellmode", "finalize_multicellmode",
    "marshalling_settings", "start_writefile", "end_writefile", "abort_writefile",
    "enable_vampir_launch_on_scorep_instrumented", "disable_vampir_launch",
)
# First lines that mark a cell as measured.
MEASURED_MAGICS = ("execute_with_scorep", "scorep")

_MAGIC_LINE = re.compile(r"^%%(\w+)(?:[ \t]+(.*?))?[ \t]*$")
_ENV_LINE = re.compile(r"^%env[ \t]+(SCOREP_\w+)(?:[ \t]*=[ \t]*|[ \t]+)(.*?)[ \t]*$")


def split_cell_magic(code):
    """(magic name, rest of its line, the cell's other lines) or (None, None, code)."""
    lines = code.split("\n")
    first = 0
    while first < len(lines) and not lines[first].strip():
        first += 1
    if first < len(lines):
        match = _MAGIC_LINE.match(lines[first])
        if match:
            return match.group(1), match.group(2) or "", "\n".join(lines[first + 1:])
    return None, None, code


def comment_out_measured_magic(lines):
    """IPython cleanup transform for the cells the kernel measures: their first line
    (%%execute_with_scorep, or %%scorep in a multicell block) becomes a comment, so that
    IPython runs the rest as the cell, with line numbers and history as the user wrote it."""
    if lines:
        match = _MAGIC_LINE.match(lines[0].rstrip("\n"))
        if match and match.group(1) in MEASURED_MAGICS:
            lines = ["# " + lines[0]] + lines[1:]
    return lines


def indent_code(code, prefix="    "):
    """The code as the body of a block; lines that continue a multi-line string stay as
    they are (indenting them would change the string)."""
    lines = code.split("\n")
    inside_string = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                inside_string.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    out = []
    for number, line in enumerate(lines, 1):
        out.append(line if number in inside_string or not line.strip() else prefix + line)
    while out and not out[-1].strip():
        out.pop()
    if not any(line.strip() and not line.strip().startswith("#") for line in out):
        out.append(prefix + "pass")  # a block of comments alone is no block
    return "\n".join(out)


def multicell_banner(position, cell):
    """What the original kernel prints before each cell of a multicell block: its position,
    its code (without a %%execute_with_scorep line) and a rule as long as its longest
    line; after the cell's output comes an empty line."""
    magic, _line, body = split_cell_magic(cell)
    code = body if magic in MEASURED_MAGICS else cell
    width = max(len(line) for line in code.split("\n"))
    return "Executing cell %d\n%s\n%s" % (position, code, "-" * width)


class ScriptWriter:
    """Write mode: notebook cells recorded into <name>.py plus <name>_run.sh, which runs it
    under `python -m scorep` with the recorded variables and binding arguments."""

    HEADER = (
        "# Written by the Score-P Python kernel (scorep_jupyter) from notebook cells.\n"
        "# Cells that were not marked for measurement run inside\n"
        "# `with scorep.instrumenter.disable():`.\n"
        "# Run it with {runner}\n"
        "import scorep\n\n")

    def __init__(self, name):
        name = os.path.expanduser(name or "jupyter_to_script")
        if name.endswith(".py"):
            name = name[:-3]
        self.script = os.path.abspath(name + ".py")
        self.runner = os.path.abspath(name + "_run.sh")
        self.exports = []
        self.binding_args = []
        self.multicell = False

    def begin(self):
        os.makedirs(os.path.dirname(self.script), exist_ok=True)
        with open(self.script, "w") as out:
            out.write(self.HEADER.format(runner=self.runner))
        self._write_runner(complete=False)

    def _write_runner(self, complete):
        lines = ["#!/bin/bash",
                 "# Written by the Score-P Python kernel (scorep_jupyter): runs",
                 "# %s under measurement." % self.script]
        if complete:
            # The kernel's scorep, also where it is not installed into the interpreter.
            lines.append("export PYTHONPATH=%s\"${PYTHONPATH:+:$PYTHONPATH}\""
                         % shlex.quote(source_dir()))
            for key, value in self.exports:
                lines.append("export %s=%s" % (key, shlex.quote(value)))
            lines.append("exec %s -m scorep %s" % (
                shlex.quote(sys.executable),
                " ".join([shlex.quote(a) for a in self.binding_args] +
                         [shlex.quote(self.script), '"$@"'])))
        else:
            lines.append("# (incomplete: the notebook is still in write mode)")
        with open(self.runner, "w") as out:
            out.write("\n".join(lines) + "\n")
        os.chmod(self.runner, 0o755)

    def end(self):
        self._write_runner(complete=True)

    def abort(self):
        for path in (self.script, self.runner):
            try:
                os.remove(path)
            except FileNotFoundError:
                pass

    def take_exports(self, code):
        """Pulls `%env SCOREP_...` lines out of the code into the run script's exports;
        returns (rest of the code, whether there were any)."""
        rest, found = [], False
        for line in code.split("\n"):
            match = _ENV_LINE.match(line)
            if match:
                value = match.group(2)
                if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                    value = value[1:-1]
                self.exports.append((match.group(1), value))
                found = True
            else:
                rest.append(line)
        return "\n".join(rest), found

    @staticmethod
    def python_source(code):
        """The cell as plain Python: IPython-only lines (magics, shell escapes) become
        comments, since the script runs without IPython."""
        magic, _line, _body = split_cell_magic(code)
        if magic is not None:
            return "\n".join("# (IPython only) " + l for l in code.split("\n") if l.strip())
        out = []
        for line in code.split("\n"):
            if line.startswith(("%", "!")):
                out.append("# (IPython only) " + line)
            else:
                out.append(line)
        return "\n".join(out)

    def record(self, code, measured):
        code = self.python_source(code)
        with open(self.script, "a") as out:
            if measured:
                out.write(code.rstrip("\n") + "\n\n")
            else:
                out.write("with scorep.instrumenter.disable():\n%s\n\n" % indent_code(code))


class ScorePKernel(IPythonKernel):
    """IPython kernel whose marked cells run under scorep measurement, in-process."""

    implementation = "scorep_jupyter"
    implementation_version = __version__
    banner = ("Score-P Python kernel: IPython with cells measured by scorep "
              "(%%execute_with_scorep, %%scorep; see %scorep --help)")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.scorep_settings = _magics.Settings()
        self.mode = DEFAULT
        self.multicell_cells = []
        self.marshaller = "dill"
        self.marshalling_mode = "memory"
        self.writer = None
        # %%scorep, %scorep and the result magics work here too, with the kernel's settings.
        self.scorep_magics = _magics.load_ipython_extension(self.shell, self.scorep_settings)

    # ---- replies and output ----------------------------------------------------------------

    @staticmethod
    def _out(text):
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    @staticmethod
    def _err(text):
        sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def _warn_mode(self):
        self._err("KernelWarning: Currently in %s, command ignored." % self.mode)

    def _count(self, code, store_history):
        """The execution count of a cell the kernel answered itself (as IPython counts
        the cells it runs)."""
        shell = self.shell
        if store_history:
            try:
                shell.history_manager.store_inputs(shell.execution_count, code, code)
            except Exception:  # history is a convenience, never a reason to fail a cell
                pass
            shell.execution_count += 1
        return shell.execution_count - 1

    def _reply(self, code, store_history, user_expressions=None):
        return {"status": "ok", "execution_count": self._count(code, store_history),
                "payload": [], "user_expressions": self.shell.user_expressions(
                    user_expressions or {})}

    def _error_reply(self, code, store_history, ename, evalue):
        """An error of the kernel's own magics, shown as IPython shows a UsageError."""
        self._err("%s: %s" % (ename, evalue))
        return {"status": "error", "execution_count": self._count(code, store_history),
                "ename": ename, "evalue": evalue, "traceback": []}

    # ---- dispatch ----------------------------------------------------------------------------

    async def do_execute(self, code, silent, store_history=True, user_expressions=None,
                         allow_stdin=False, **kwargs):
        try:
            return await self._dispatch(code, silent, store_history, user_expressions,
                                        allow_stdin, kwargs)
        except Exception as error:
            # A cell must get a reply, whatever went wrong in the kernel's own code.
            import traceback
            self._err("".join(traceback.format_exception_only(type(error), error)).rstrip())
            return {"status": "error", "execution_count": self.shell.execution_count - 1,
                    "ename": type(error).__name__, "evalue": str(error), "traceback": []}

    async def _dispatch(self, code, silent, store_history, user_expressions, allow_stdin,
                        kwargs):
        magic, line, body = split_cell_magic(code)
        if magic not in KERNEL_MAGICS and magic not in MEASURED_MAGICS:
            magic = None
        if magic == "enable_vampir_launch_on_scorep_instrumented":
            # In every mode, as the original: a setting of the kernel, not a cell.
            self.scorep_magics.vampir.enable()
            return self._reply(code, store_history)
        if magic == "disable_vampir_launch":
            self.scorep_magics.vampir.disable()
            return self._reply(code, store_history)
        if self.mode == WRITEFILE:
            return self._writefile_cell(code, magic, line, body, store_history)
        if magic in ("scorep_python_binding_arguments", "scorep_env", "marshalling_settings",
                     "start_writefile", "enable_multicellmode"):
            if self.mode != DEFAULT:
                self._warn_mode()
                return self._reply(code, store_history)
            return getattr(self, "_magic_" + magic)(code, line, body, store_history)
        if magic in ("abort_multicellmode", "finalize_multicellmode"):
            if self.mode != MULTICELL:
                self._warn_mode()
                return self._reply(code, store_history)
            if magic == "abort_multicellmode":
                self.mode = DEFAULT
                self.multicell_cells = []
                self._out("Multicell mode aborted.")
                return self._reply(code, store_history)
            return await self._finalize_multicell(code, silent, store_history,
                                                  user_expressions, allow_stdin, kwargs)
        if magic in ("end_writefile", "abort_writefile"):
            self._warn_mode()
            return self._reply(code, store_history)
        if self.mode == MULTICELL:
            # A measured cell's magic line (with any %%scorep arguments) has no say in a
            # block: the block is one measurement with the kernel's settings.
            self.multicell_cells.append(code)
            self._out("Cell marked for multicell mode. It will be executed at position %d"
                      % (len(self.multicell_cells) - 1))
            return self._reply(code, store_history)
        if magic == "execute_with_scorep":
            # Arguments on the magic's line (not upstream's) are binding arguments for this
            # cell, after the kernel's: %%execute_with_scorep --lines=__main__:f
            try:
                extra = shlex.split(line)
            except ValueError as error:
                return self._error_reply(code, store_history, "UsageError", str(error))
            return await self._execute_measured(code, [code], silent, store_history,
                                                user_expressions, allow_stdin, kwargs,
                                                single=True, extra_args=extra)
        return await super().do_execute(code, silent, store_history, user_expressions,
                                         allow_stdin, **kwargs)

    # ---- setup magics ------------------------------------------------------------------------

    def _magic_scorep_python_binding_arguments(self, code, line, body, store_history):
        try:
            args = shlex.split(line + "\n" + body, comments=True)
            self.scorep_settings.set_binding_args(args)
        except (ValueError, _magics.SettingsError) as error:
            return self._error_reply(code, store_history, "UsageError", str(error))
        self._out("Score-P Python binding arguments set successfully: %r" % (args,))
        return self._reply(code, store_history)

    def _magic_scorep_env(self, code, line, body, store_history):
        try:
            pairs = _magics.parse_env_lines([line] + body.split("\n"))
            # A bad value is reported now, not at the next measured cell.
            candidate = dict(self.scorep_settings.environ())
            candidate.update((k, v) for k, v in pairs)
            _config.from_environ(candidate)
            kernel_options(candidate)
        except (_magics.SettingsError, _config.ConfigError) as error:
            return self._error_reply(code, store_history, "UsageError", str(error))
        self.scorep_settings.set_env(pairs)
        self.scorep_settings.tell_notices(dict(pairs))
        self._out("Score-P environment set successfully: %r" % (self.scorep_settings.env,))
        return self._reply(code, store_history)

    def _magic_marshalling_settings(self, code, line, body, store_history):
        text = line + "\n" + body
        marshaller = re.search(r"MARSHALLER\s*=\s*([\w-]+)", text)
        mode = re.search(r"MODE\s*=\s*([\w-]+)", text)
        if marshaller:
            self.marshaller = marshaller.group(1)
        if mode:
            self.marshalling_mode = mode.group(1)
        # Nothing is marshalled in-process; the setting is kept so notebooks run unchanged.
        self._out("Kernel uses '%s' marshaller in '%s' mode." % (self.marshaller,
                                                                 self.marshalling_mode))
        return self._reply(code, store_history)

    def _magic_enable_multicellmode(self, code, line, body, store_history):
        self.mode = MULTICELL
        self.multicell_cells = []
        self._out("Multicell mode enabled. The following cells will be marked for "
                  "instrumented execution.")
        return self._reply(code, store_history)

    def _magic_start_writefile(self, code, line, body, store_history):
        writer = ScriptWriter(line.strip())
        try:
            writer.begin()
        except OSError as error:
            return self._error_reply(code, store_history, type(error).__name__, str(error))
        self.writer = writer
        self.mode = WRITEFILE
        self._out("Started converting to Python script. See files:\n%s\n%s"
                  % (writer.runner, writer.script))
        return self._reply(code, store_history)

    # ---- measured execution ------------------------------------------------------------------

    async def _execute_measured(self, code, cells, silent, store_history, user_expressions,
                                allow_stdin, kwargs, single=False, extra_args=()):
        """Runs the cells one after the other as IPython runs cells, inside one
        measurement; stops at the first that fails. `single`: the cell is `code` itself
        (%%execute_with_scorep), not the cells of a multicell block."""
        shell = self.shell
        notebook = self.scorep_magics.notebook
        try:
            run = _magics.CellMeasurement(
                shell, self.scorep_settings,
                binding_args=list(self.scorep_settings.binding_args) + list(extra_args)
                if extra_args else None,
                program_args=["In [%d]" % shell.execution_count], notebook=notebook)
            run.start()
        except (_magics.SettingsError, _config.ConfigError, _measurement.MeasurementError,
                OSError) as error:
            return self._error_reply(code, store_history, "UsageError", "scorep: %s" % error)
        reply = None
        cleanup = shell.input_transformers_cleanup
        cleanup.append(comment_out_measured_magic)
        try:
            for position, cell in enumerate(cells):
                if not single:
                    self._out(multicell_banner(position, cell))
                reply = await super().do_execute(
                    cell, silent, store_history if single else False,
                    user_expressions if single else None, allow_stdin,
                    **(kwargs if single else {}))
                if reply.get("status") != "ok":
                    break
                if not single:
                    self._out("\n")
        finally:
            if comment_out_measured_magic in cleanup:
                cleanup.remove(comment_out_measured_magic)
            ok = reply is not None and reply.get("status") == "ok"
            run.finalize(0 if ok else 1)
            _magics.finish(run, ok, notebook, self.scorep_magics.vampir)
        if single:
            return reply
        result = dict(reply) if reply is not None else {"status": "ok"}
        result["execution_count"] = self._count(code, store_history)
        if result.get("status") == "ok":
            result["payload"] = []
            result["user_expressions"] = shell.user_expressions(user_expressions or {})
        return result

    async def _finalize_multicell(self, code, silent, store_history, user_expressions,
                                  allow_stdin, kwargs):
        cells = self.multicell_cells
        self.mode = DEFAULT
        self.multicell_cells = []
        return await self._execute_measured(code, cells, silent, store_history,
                                            user_expressions, allow_stdin, kwargs)

    # ---- write mode ---------------------------------------------------------------------------

    def _writefile_cell(self, code, magic, line, body, store_history):
        writer = self.writer
        if magic in ("start_writefile", "marshalling_settings"):
            self._warn_mode()
        elif magic == "end_writefile":
            writer.end()
            self.writer = None
            self.mode = DEFAULT
            self._out("Finished converting to Python script.")
        elif magic == "abort_writefile":
            writer.abort()
            self.writer = None
            self.mode = DEFAULT
            self._out("Writefile mode aborted.")
        elif magic == "scorep_python_binding_arguments":
            try:
                args = shlex.split(line + "\n" + body, comments=True)
                _magics.parse_binding_args(args)
            except (ValueError, _magics.SettingsError) as error:
                return self._error_reply(code, store_history, "UsageError", str(error))
            writer.binding_args = args
            self._out("Score-P bindings arguments recorded.")
        elif magic == "scorep_env":
            try:
                pairs = _magics.parse_env_lines([line] + body.split("\n"))
            except _magics.SettingsError as error:
                return self._error_reply(code, store_history, "UsageError", str(error))
            writer.exports.extend(pairs)
            self._out("Environment variables recorded.")
        elif magic == "enable_multicellmode":
            writer.multicell = True
        elif magic in ("finalize_multicellmode", "abort_multicellmode"):
            writer.multicell = False
        else:
            measured = magic in MEASURED_MAGICS or writer.multicell
            source = body if magic in MEASURED_MAGICS else code
            # `%env SCOREP_...` lines go into the run script silently, as in the original.
            source, had_exports = writer.take_exports(source)
            if source.strip() or not had_exports:
                writer.record(source, measured)
                self._out("Python commands with instrumentation recorded." if measured else
                          "Python commands without instrumentation recorded.")
        return self._reply(code, store_history)
