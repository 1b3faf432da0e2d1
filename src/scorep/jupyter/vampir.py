"""Vampir on a measured cell's trace: the original kernel's
%%enable_vampir_launch_on_scorep_instrumented and %%disable_vampir_launch.

After each measured cell (while enabled) `vampir` is started on the cell's traces.otf2 when
it is on PATH and the cell was traced; otherwise one line on stderr says why not. The
messages are the original kernel's where it has one.
"""

import os
import shutil
import subprocess
import sys

__all__ = ["VampirLaunch", "ENABLED", "DISABLED", "NOT_FOUND"]

ENABLED = "Vampir will be launched after next instrumented execution."
DISABLED = "Vampir launching disabled."
# The original's line (with the parenthesis it leaves open closed).
NOT_FOUND = ("KernelError: Vampir binary not found in PATH. Add it to PATH to enable automatic "
             "launch (e.g. in ~/.bashrc: export PATH=\"/path/to/vampir/bin:$PATH\")")


class VampirLaunch:
    """Whether Vampir is to be started after measured cells, and the one it started last."""

    def __init__(self):
        self.enabled = False
        self.process = None

    def enable(self):
        """%%enable_vampir_launch_on_scorep_instrumented: enabled even where vampir is not
        on PATH yet (as the original), which is said then."""
        self.enabled = True
        if shutil.which("vampir") is None:
            _write(sys.stderr, NOT_FOUND)
        else:
            _write(sys.stdout, ENABLED)

    def disable(self):
        self.enabled = False
        _write(sys.stdout, DISABLED)

    def after(self, run):
        """After the measurement `run` (a finalized scorep.jupyter.magics.CellMeasurement):
        Vampir on its trace, or the line that says why not."""
        if not self.enabled:
            return
        shown = os.path.join(run.display_dir, "traces.otf2")
        if not run.config.tracing:
            _write(sys.stderr, "KernelError: Vampir not launched: the cell was not traced "
                               "(SCOREP_ENABLE_TRACING=true traces the next ones)")
            return
        path = os.path.join(run.experiment_dir or "", "traces.otf2")
        if not run.experiment_dir or not os.path.isfile(path):
            _write(sys.stderr, "KernelError: Vampir not launched: no trace in %s"
                   % run.display_dir)
            return
        program = shutil.which("vampir")
        if program is None:
            _write(sys.stderr, NOT_FOUND)
            return
        # One Vampir for the newest trace, as the original (which ends every process whose
        # command line names vampir; here only the one this kernel started).
        previous, self.process = self.process, None
        if previous is not None and previous.poll() is None:
            previous.terminate()
        try:
            # Its own session and no streams of the kernel's: a window of its own, whose
            # messages do not end up in whichever cell runs later.
            self.process = subprocess.Popen(
                [program, os.path.abspath(path)], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError as error:
            _write(sys.stderr, "KernelError: Failed to launch Vampir: %s"
                   % (error.strerror or error))
            return
        _write(sys.stdout, "Launching Vampir: %s" % shown)


def _write(stream, line):
    stream.write(line + "\n")
    stream.flush()
