"""What a measured cell leaves in the notebook: its experiment in a per-notebook folder, an
inline result (the HTML report, collapsed to a one-line summary), `_scorep` with the data,
and the history behind %scorep_report, %scorep_diff and %scorep_clean.

The inline result is the HTML report of scorep.report.html (its "inline" layout) embedded
with scorep.report.html.embed, and the diff is scorep.report.diff's page: one renderer for
files and notebooks. The numbers are the shared aggregates of scorep.report.analysis.
"""

import datetime
import html as htmlmod
import os
import re
import shutil
import sys

from scorep.measure import config as _config
from scorep._errors import ConfigError, UsageError
from scorep.report.model import format_bytes, format_seconds

__all__ = ["KERNEL_VARIABLES", "UPSTREAM_VARIABLES", "kernel_options", "kernel_notices",
           "Notebook", "CellResult", "RESULT_NAME"]

RESULT_NAME = "_scorep"  # the notebook variable that holds the last measured cell's result
INLINE_TIMELINE_CALLS = 5000  # calls the inline timeline keeps (the longest; all stay in the trace)
INLINE_SOURCE_LIMIT = 500 * 1000   # bytes of program source the inline report embeds
SUMMARY_TOP = 10


def _parse_interval(name, text):
    try:
        value = float(text.strip())
    except ValueError:
        value = -1.0
    if not 0.01 <= value <= 3600:
        raise ConfigError("%s=%r is not an interval in seconds between 0.01 and 3600"
                          % (name, text))
    return value


def _parse_inline(name, text):
    """True (the report), False (nothing) or "summary" (the summary line, the resource
    plot and the top regions as a table: a few kB instead of the report's ~100 kB)."""
    if text.strip().lower() == "summary":
        return "summary"
    try:
        return _config.parse_bool(name, text)
    except ConfigError:
        raise ConfigError("%s=%r is neither a boolean (true/false) nor 'summary'"
                          % (name, text)) from None


def _parse_folder(name, text):
    if not text.strip():
        raise ConfigError("%s is empty: name the folder for the cells' experiments" % name)
    return _config.parse_utf8_text(name, text)


# The kernel's own variables (set like the others: %%scorep_env, %env, the environment).
KERNEL_VARIABLES = {
    "SCOREP_JUPYTER_EXPERIMENTS": (
        "scorep-notebook", _parse_folder,
        "folder of the cells' experiments when SCOREP_EXPERIMENT_DIRECTORY is not set: "
        "<folder>/<notebook or kernel id>/cell-<N>-<YYYYmmdd_HHMMSS>/"),
    "SCOREP_JUPYTER_INLINE": (
        "true", _parse_inline,
        "show the result inline after each measured cell: true (the report), summary (the "
        "summary line and the top regions only: a smaller notebook) or false"),
    "SCOREP_JUPYTER_MONITORING": (
        "true", _config.parse_bool,
        "sample CPU per core, RSS and I/O while measured cells run (monitoring.csv)"),
    "SCOREP_JUPYTER_MONITORING_INTERVAL": (
        "0.1", _parse_interval, "seconds between two resource samples"),
}


# The original kernel's variables (score-p/scorep_jupyter_kernel_python): notebooks and
# environments made for it set them, so they are accepted, whatever their value. Its
# processing animation is a spinner shown while the measured subprocess runs; this kernel
# shows none (a measured cell's output comes as it is printed), so disabling it is what
# happens anyway. The other two tune the pickling of the notebook's state into that
# subprocess, which does not exist here: said once, as nothing is done with them.
UPSTREAM_VARIABLES = {
    "SCOREP_JUPYTER_DISABLE_PROCESSING_ANIMATIONS": None,
    "SCOREP_JUPYTER_PERSISTENCE_DIR": "nothing is persisted",
    "SCOREP_JUPYTER_MARSHALLING_DETAILED_REPORT": "nothing is marshalled",
}


def kernel_options(environ):
    """{variable: value} of KERNEL_VARIABLES from SCOREP_* settings; ConfigError for a bad
    value. Other SCOREP_JUPYTER_ names are kernel_notices' business, never an error: a
    notebook's cell must not fail over a name another version of the kernel knows."""
    out = {}
    for name, (default, parse, _doc) in KERNEL_VARIABLES.items():
        out[name] = parse(name, environ.get(name, default))
    return out


def kernel_notices(environ, said):
    """Lines (without the "scorep: " prefix) about the SCOREP_JUPYTER_ names in `environ`
    that have no effect: the original kernel's persistence variables (one line for those
    set) and names no kernel knows (a line each, with the nearest known name). `said`
    holds the names told before and gets these added: each is told once per kernel."""
    import difflib
    inert, lines = [], []
    for name in sorted(environ):
        if not name.startswith("SCOREP_JUPYTER_") or name in KERNEL_VARIABLES or \
                name in said or UPSTREAM_VARIABLES.get(name, "") is None:
            continue
        said.add(name)
        if name in UPSTREAM_VARIABLES:
            inert.append(name)
            continue
        # Compared without the prefix they share, which would make every name look near.
        known = [k[len("SCOREP_JUPYTER_"):] for k in list(KERNEL_VARIABLES) +
                 list(UPSTREAM_VARIABLES)]
        near = ["SCOREP_JUPYTER_" + k for k in difflib.get_close_matches(
            name[len("SCOREP_JUPYTER_"):], known, n=1, cutoff=0.75)]
        lines.append("%s is not a variable of the Score-P kernel, ignored (%s)" % (
            name, "did you mean %s?" % near[0] if near else
            "its variables: %s" % ", ".join(KERNEL_VARIABLES)))
    if inert:
        lines.insert(0, "%s: no effect, measured cells run in the kernel process (%s)" % (
            " and ".join(inert), " and ".join(UPSTREAM_VARIABLES[n] for n in inert)))
    return lines


# ---- where the cells' experiments go ---------------------------------------------------

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _safe_name(text):
    text = _UNSAFE.sub("_", text).strip("._") or "notebook"
    return text[:80]


def notebook_id(shell, cwd=None):
    """The notebook's name where the front end tells it (IPython's `__session__` and
    Jupyter Server's JPY_SESSION_NAME hold the notebook's path, VS Code's
    `__vsc_ipynb_file__` too), else one name per kernel working directory (Notebook 6 and
    nbconvert say nothing; the kernel of a notebook runs in the notebook's folder):
    <folder's name>-<6 hex digits of its path>, the same after a restart, so that one
    folder holds all of a notebook's experiments and %scorep_clean reaches them all."""
    import hashlib
    user_ns = getattr(shell, "user_ns", {})
    candidates = [user_ns.get("__session__"), user_ns.get("__vsc_ipynb_file__"),
                  os.environ.get("JPY_SESSION_NAME")]
    for candidate in candidates:
        if isinstance(candidate, str) and candidate.strip():
            base = os.path.basename(candidate.rstrip("/"))
            if base.endswith(".ipynb"):
                base = base[:-len(".ipynb")]
            return _safe_name(base)
    cwd = os.path.abspath(cwd or os.getcwd())
    digest = hashlib.sha1(os.fsencode(cwd)).hexdigest()[:6]
    return "%s-%s" % (_safe_name(os.path.basename(cwd) or "root"), digest)


# ---- the result of one measured cell -----------------------------------------------------

def _pandas():
    try:
        import pandas
    except Exception:  # not installed (or broken): lists of dicts then
        return None
    return pandas


class CellResult:
    """What a measured cell left (the notebook's `_scorep`):

    experiment       the experiment directory (also os.fspath(result))
    execution_count  the cell's number (In [N])
    seconds          the cell's wall time
    ok               whether the cell ran without an exception
    summary          the one-line summary
    rows             the program's regions, heaviest inclusive time first, as dicts:
                     region, kind, file, line, visits, inclusive_s, exclusive_s
    regions          the same as a pandas DataFrame where pandas is installed, else rows
    samples          the resource samples (scorep.jupyter.monitor.Samples) or None
    monitoring       the samples as a DataFrame (or list of dicts), one row per interval
    """

    def __init__(self, execution_count, experiment, seconds=None, ok=True, samples=None):
        self.execution_count = execution_count
        self.experiment = experiment
        self.seconds = seconds
        self.ok = ok
        self.samples = samples
        self.rows = []
        self.summary = ""
        self.problem = None  # why there is no call tree, when there is none

    def __fspath__(self):
        return self.experiment

    def __repr__(self):
        return "<scorep result of In [%s]: %s>" % (self.execution_count, self.experiment)

    @property
    def regions(self):
        pandas = _pandas()
        if pandas is None:
            return list(self.rows)
        return pandas.DataFrame(self.rows, columns=list(_ROW_KEYS))

    @property
    def monitoring(self):
        rows = self.samples.as_dicts() if self.samples is not None else []
        pandas = _pandas()
        return pandas.DataFrame(rows) if pandas is not None else rows

    def _repr_html_(self):
        return render_cell(self, open_=True)[1]


_ROW_KEYS = ("region", "kind", "file", "line", "visits", "inclusive_s", "exclusive_s")


def region_rows(tree):
    """Per region its visits, or for a sampled tree (whose visits are not counted) None
    and its own samples under "samples"."""
    from scorep.report.analysis import top_regions
    samples = tree.samples_by_region() if tree.sampling is not None else None
    rows = []
    for st in top_regions(tree, "incl", None, include_measurement=False):
        row = dict(zip(_ROW_KEYS, (st.region.display, st.region.kind, st.region.file or "",
                                   st.region.line, st.visits if samples is None else None,
                                   st.incl, st.excl)))
        if samples is not None:
            row["samples"] = samples.get(st.region.id, 0)
        rows.append(row)
    return rows


def _label(result):
    return "In [%s]" % result.execution_count


def _hottest(tree):
    """[the region with the most exclusive time of the program's own code] (a cell's
    functions, the notebook's modules), else of any code: what waits in a Pool's plumbing
    (Connection:_recv, Condition:wait) is not what the cell's author wrote, and which of
    those waits longest changes from run to run."""
    from scorep.report.analysis import top_regions
    from scorep.report.imports import is_program_region, program_directories
    ranked = top_regions(tree, "excl", None, include_measurement=False)
    dirs = program_directories(tree)
    own = [st for st in ranked if is_program_region(st.region, dirs)]
    return (own or ranked)[:1]


def _waiting(profile):
    """The summary's words for the wait states of an MPI run's profile (else None): the
    total waiting and the worst pattern with its rank and call."""
    from scorep.report.analysis import wait_states
    ws = wait_states(profile) if profile is not None else None
    if ws is None:
        return None
    text = "waiting in MPI %s of %s" % (format_seconds(ws["total"]),
                                        format_seconds(ws["mpi_time"]))
    if ws["patterns"]:
        worst = max(ws["patterns"], key=lambda r: r["total"])
        path = worst["worst_path"]
        text += ", most %s %s (worst on %s in %s)" % (
            worst["display"], format_seconds(worst["total"]), worst["worst_rank"],
            " > ".join(path[-2:]))
    return text


def summarize(result, tree, profile=None):
    """Fills result.rows and result.summary from the call tree (None: no tree); the wait
    states of an MPI run's profile go into the summary too."""
    from scorep.report.model import format_count
    parts = []
    if result.seconds is not None:
        parts.append(format_seconds(result.seconds))
    if tree is not None:
        result.rows = region_rows(tree)
        threads = len(tree.locations)
        if tree.sampling is not None:
            parts.append(tree.sampling.describe() +
                         (" in %d threads" % threads if threads > 1 else ""))
        else:
            calls = sum(r["visits"] for r in result.rows)
            parts.append("%s call%s%s" % (format_count(calls), "" if calls == 1 else "s",
                                          " in %d threads" % threads if threads > 1 else ""))
        hottest = _hottest(tree)
        total = tree.total_time()
        if hottest and hottest[0].excl > 0:
            st = hottest[0]
            share = 100 * st.excl / total if total > 0 else 0
            parts.append("hottest %s %s own%s" % (
                st.region.display, format_seconds(st.excl),
                " (%.0f%%)" % share if share >= 1 else ""))
        waiting = _waiting(profile)
        if waiting:
            parts.append(waiting)
    elif result.problem:
        parts.append("no call tree: %s" % result.problem)
    samples = result.samples
    if samples is not None and len(samples):
        cpu = samples.mean_process_cpu()
        text = "CPU %.0f%%" % cpu if cpu is not None else ""
        rss = samples.peak_rss()
        if rss is not None:
            text += "%sRSS %s" % (", " if text else "", format_bytes(rss))
        if text:
            parts.append(text)
    if not result.ok:
        parts.append("the cell raised")
    result.summary = "scorep %s: %s" % (_label(result), "; ".join(parts))
    return result.summary


def _static_table(rows):
    """The top regions as a plain table: what shows where an output's scripts do not run."""
    if not rows:
        return ""
    count = "visits" if rows[0]["visits"] is not None else "samples"
    out = ['<table style="font-size:12px"><thead><tr><th style="text-align:left">region</th>'
           '<th>%s</th><th>inclusive</th><th>exclusive</th></tr></thead><tbody>' % count]
    for r in rows[:SUMMARY_TOP]:
        out.append('<tr><td style="text-align:left"><code>%s</code></td><td>%d</td><td>%s</td>'
                   '<td>%s</td></tr>' % (htmlmod.escape(r["region"]), r[count],
                                         format_seconds(r["inclusive_s"]),
                                         format_seconds(r["exclusive_s"])))
    out.append("</tbody></table>")
    return "".join(out)


def _summary_html(result):
    from scorep.jupyter import monitor
    text = htmlmod.escape(result.summary)
    spark = ""
    if result.samples is not None and len(result.samples):
        spark = " " + monitor.sparkline(result.samples)
    return ('<span style="font-family:system-ui,sans-serif;font-size:13px">%s%s</span>'
            % (text, spark))


def _experiment_line(result):
    return ('<div style="color:#777;font:11px system-ui,sans-serif;margin:2px 0 4px">'
            'experiment: <code>%s</code></div>' % htmlmod.escape(result.experiment))


def load_tree(path, timeline_calls=INLINE_TIMELINE_CALLS):
    """(experiment read for the report, None) or (None, why not)."""
    from scorep.report.html import open_experiment
    from scorep.report.model import ReportError
    try:
        exp = open_experiment(path, timeline_calls)
        exp.tree  # noqa: B018  (reads it now: a broken file is said here)
    except (ReportError, OSError) as error:
        return None, str(error)
    return exp, None


def render_cell(result, open_=False, exp=None, report=True):
    """(text/plain, text/html) of a cell's inline result; report=False: without the
    report (SCOREP_JUPYTER_INLINE=summary)."""
    from scorep.jupyter import monitor
    from scorep.report.html import embed, render_page
    if exp is None:
        exp, problem = load_tree(result.experiment)
        if exp is None:
            result.problem = problem
    if not result.summary:
        summarize(result, exp.tree if exp is not None else None,
                  exp.profile if exp is not None else None)
    extra = _experiment_line(result)
    if result.samples is not None and len(result.samples):
        extra += '<div style="margin:2px 0 6px">%s</div>' % monitor.svg(result.samples)
    if exp is None:
        page = None
        body = extra + '<p style="color:#8a5a00">%s</p>' % htmlmod.escape(
            result.problem or "no report")
        fragment = ('<details%s><summary style="cursor:pointer">%s</summary>%s</details>'
                    % (" open" if open_ else "", _summary_html(result), body))
        return result.summary, fragment
    page = render_page(exp, embed_source=True, layout="inline",
                       source_limit=INLINE_SOURCE_LIMIT)[0] if report else None
    fragment = embed(page, _summary_html(result), extra_html=extra,
                     static_html=_static_table(result.rows), open_=open_,
                     title="scorep report of %s" % _label(result),
                     file_name="scorep-cell-%s.html" % result.execution_count)
    return result.summary, fragment


# ---- the notebook's measured cells ---------------------------------------------------------

class UsageProblem(UsageError):
    """A result magic used wrongly (a cell that was not measured, a directory that is no
    experiment): the line IPython shows as a UsageError."""


class Notebook:
    """The measured cells of one shell: where their experiments go and what they left."""

    def __init__(self, shell, settings):
        self.shell = shell
        self.settings = settings  # scorep.jupyter.magics.Settings: the kernel's variables
        self.history = {}  # execution count -> CellResult
        self.last = None
        self._id = None
        self.removed = {}  # execution count -> experiment %scorep_clean removed

    @property
    def id(self):
        if self._id is None:
            self._id = notebook_id(self.shell)
        return self._id

    def folder(self, options):
        return os.path.abspath(os.path.join(options["SCOREP_JUPYTER_EXPERIMENTS"], self.id))

    def cell_dir(self, options, execution_count):
        """A new directory name for the experiment of cell N: cell-<N>-<time>[-k]."""
        base = os.path.join(self.folder(options), "cell-%s-%s" % (
            execution_count, datetime.datetime.now().strftime("%Y%m%d_%H%M%S")))
        path, k = base, 1
        while os.path.lexists(path):
            k += 1
            path = "%s-%d" % (base, k)
        return path

    # -- after a measured cell --

    def publish(self, run, ok):
        """Records the cell's result, sets `_scorep` and shows the inline result (unless
        SCOREP_JUPYTER_INLINE=false)."""
        result = CellResult(run.execution_count, run.experiment_dir, run.seconds, ok,
                            run.samples)
        exp, problem = load_tree(result.experiment)
        result.problem = problem
        summarize(result, exp.tree if exp is not None else None)
        self.history[result.execution_count] = result
        self.last = result
        self.shell.user_ns[RESULT_NAME] = result
        inline = run.kernel_options["SCOREP_JUPYTER_INLINE"]
        if inline:
            plain, fragment = render_cell(result, exp=exp, report=inline is True)
            self._display(plain, fragment)
        return result

    @staticmethod
    def _display(plain, fragment):
        from IPython.display import display
        display({"text/plain": plain, "text/html": fragment}, raw=True)

    # -- %scorep_report, %scorep_diff, %scorep_clean --

    def resolve(self, what):
        """A CellResult for "N" (a measured cell's number), "" (the last) or a path."""
        what = what.strip()
        if not what:
            if self.last is None:
                raise UsageProblem("no cell has been measured yet")
            return self.last
        if what.isdigit():
            n = int(what)
            if n in self.history:
                return self.history[n]
            # Not measured in this session (the kernel restarted): the newest experiment
            # of cell N in the notebook's folder.
            found = self._on_disk(n)
            if found:
                return self._from_disk(found, n)
            if n in self.removed:
                raise UsageProblem("the experiment of In [%d] was removed by %%scorep_clean: %s"
                                   % (n, self.removed[n]))
            measured = ", ".join(str(k) for k in sorted(self.history)) or "none yet"
            raise UsageProblem("In [%d] was not measured (measured cells: %s)" % (n, measured))
        path = os.path.abspath(os.path.expanduser(what))
        if not os.path.isdir(path):
            raise UsageProblem("%s is neither the number of a measured cell nor an experiment "
                               "directory" % what)
        return self._from_disk(path, None)

    def _on_disk(self, n):
        try:
            folder = self.folder(kernel_options(self.settings.environ()))
            names = [d for d in os.listdir(folder) if d.startswith("cell-%d-" % n)]
        except (OSError, ConfigError):
            return None
        if not names:
            return None
        return max((os.path.join(folder, d) for d in names), key=os.path.getmtime)

    @staticmethod
    def _from_disk(path, n):
        from scorep.jupyter import monitor
        if n is None:
            match = re.match(r"cell-(\d+)-", os.path.basename(path))
            n = int(match.group(1)) if match else "?"
        return CellResult(n, path, samples=monitor.read_csv(
            os.path.join(path, monitor.MONITORING_FILE)))

    def show_report(self, what):
        result = self.resolve(what)
        if not os.path.isdir(result.experiment):
            raise UsageProblem("the experiment of In [%s] is gone: %s"
                               % (result.execution_count, result.experiment))
        plain, fragment = render_cell(result, open_=True)
        self._display(plain, fragment)

    def show_diff(self, a_what, b_what):
        from scorep.report.diff import PROGRAM, compare, render_html, render_terminal
        from scorep.report.html import embed
        a, b = self.resolve(a_what), self.resolve(b_what)
        exps = []
        for r in (a, b):
            exp, problem = load_tree(r.experiment, 0)
            if exp is None:
                raise UsageProblem("In [%s]: %s" % (r.execution_count, problem))
            exps.append(exp)
        result = compare(exps[0], exps[1])
        text = render_terminal(result, top=20, width=110, color=False)
        ta, tb = result["a_total"], result["b_total"]
        head = "scorep diff %s -> %s" % (_label(a), _label(b))
        if ta > 0 and tb > 0:
            head += ": B takes %.2fx the time of A" % (tb / ta)
        changed = [r for r in result["rows"] if r["name"] != PROGRAM and not r["noise"]]
        if changed:
            top = changed[0]
            head += "; most changed %s %s%s" % (top["name"], "+" if top["own"] > 0 else "",
                                                format_seconds(top["own"]))
        fragment = embed(render_html(result), '<span style="font-family:system-ui,sans-serif;'
                         'font-size:13px">%s</span>' % htmlmod.escape(head),
                         static_html="<pre>%s</pre>" % htmlmod.escape(text), open_=True,
                         title=head, file_name="scorep-diff-%s-%s.html"
                         % (a.execution_count, b.execution_count))
        self._display(head + "\n" + text, fragment)
        return result

    def clean(self, keep, options):
        """Removes the experiments of this notebook's folder but the newest `keep`; one line
        says what went. Experiments a running measurement holds stay."""
        from scorep.measure import session as _measurement
        from scorep._errors import MeasurementError
        folder = self.folder(options)
        try:
            names = [d for d in os.listdir(folder) if d.startswith("cell-") and
                     os.path.isdir(os.path.join(folder, d)) and
                     not os.path.islink(os.path.join(folder, d))]
        except FileNotFoundError:
            names = []
        paths = sorted((os.path.join(folder, d) for d in names), key=os.path.getmtime,
                       reverse=True)
        removed, size, held = 0, 0, 0
        for path in paths[keep:]:
            try:
                probe = _measurement.lock_experiment_dir(path)
            except MeasurementError:
                held += 1
                continue
            if probe is not None:
                os.close(probe)
            size += _tree_size(path)
            shutil.rmtree(path, ignore_errors=True)
            removed += 1
        for n, result in list(self.history.items()):
            if not os.path.isdir(result.experiment):
                del self.history[n]
                self.removed[n] = result.experiment
                if self.last is result:
                    self.last = None
        kept = len(paths) - removed
        line = "Removed %d experiment%s (%s) from %s; %d kept" % (
            removed, "" if removed == 1 else "s", format_bytes(size), folder, kept)
        if held:
            line += " (%d in use by a running measurement)" % held
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        return removed


def _tree_size(path):
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total
