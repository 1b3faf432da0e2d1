"""scorep-report / python -m scorep.report: the command line.

Errors are one line, `scorep-report: ...`, exit status 1; usage errors exit 2."""

import argparse
import os
import sys
import tempfile

from scorep._errors import UsageError, run_tool
from scorep.report.model import (ReportError, format_bytes, format_count, parse_duration,
                                 parse_size)

PROG = "scorep-report"

# Extension -> format; the longest match wins (.speedscope.json before .json).
FORMATS = [
    (".speedscope.json", "speedscope"),
    (".perfetto-trace", "perfetto"), (".pftrace", "perfetto"),
    (".html", "html"), (".htm", "html"),
    (".json", "chrome"),
    (".prof", "pstats"), (".pstats", "pstats"),
    (".collapsed", "collapsed"), (".folded", "collapsed"),
    (".dot", "dot"), (".gv", "dot"),
    (".png", "png"), (".svg", "svg"), (".pdf", "pdf"),
    (".lprof", "lprof"),
]
PER_RANK = {"pstats", "collapsed", "speedscope", "dot", "png", "svg", "pdf"}


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def format_of(path):
    low = path.lower()
    for ext, fmt in FORMATS:
        if low.endswith(ext):
            return fmt
    raise UsageError("cannot tell the format of %s from its extension (use %s)" % (
        path, ", ".join(e for e, _ in FORMATS)))


def _duration(text):
    try:
        return parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def _size(text):
    try:
        return parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def _percent(text):
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a percentage" % text)
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError("%r is not between 0 and 100" % text)
    return value / 100.0


def _positive(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not an integer" % text)
    if value < 0:
        raise argparse.ArgumentTypeError("%r is negative" % text)
    return value


def build_parser():
    p = _Parser(prog=PROG, description=(
        "Reports of a scorep experiment directory (profile.cubex and/or traces.otf2). "
        "Without -o: a terminal report. Each -o FILE writes one file, its format told by "
        "the extension: .html (self-contained report: flame graph, region table, "
        "timeline, load balance, MPI, configuration), .json (Chrome/Perfetto trace "
        "events), .pftrace/.perfetto-trace (Perfetto's protobuf trace), .speedscope.json, "
        ".prof (pstats: python -m pstats, SnakeViz, gprof2dot), "
        ".collapsed (flame graph stacks), .dot/.png/.svg (call graph, Graphviz), "
        ".lprof (line profiles: python -m line_profiler). "
        "{rank} in a .prof/.collapsed/.speedscope.json/.dot/.png/.svg name writes one "
        "file per rank. `%s diff A B` compares two runs." % PROG))
    p.add_argument("experiment", nargs="*",
                   help="experiment directory, profile.cubex or traces.otf2; none: the newest "
                        "scorep-*/ experiment of the current directory; several (scorep-*): "
                        "the newest of them")
    p.add_argument("-o", "--output", action="append", default=[], metavar="FILE",
                   help="write FILE (format from its extension); repeatable")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour in the terminal report: auto (default) colours on a terminal "
                        "unless NO_COLOR is set")
    p.add_argument("--top", type=_positive, default=15, metavar="N",
                   help="regions listed in the terminal report and the HTML summary "
                        "(default 15)")
    p.add_argument("--source", choices=("auto", "profile", "trace"), default="auto",
                   help="where the call tree comes from (default: the profile when there "
                        "is one)")
    p.add_argument("--min-duration", type=_duration, default=0, metavar="DUR",
                   help="trace exports and the HTML timeline leave out calls shorter than "
                        "DUR (10us, 1ms, ...; a plain number is microseconds)")
    p.add_argument("--max-depth", type=_positive, default=None, metavar="N",
                   help="trace exports and the HTML timeline leave out calls nested deeper "
                        "than N (0 keeps the outermost calls only)")
    p.add_argument("--max-size", type=_size, default=300 * 10**6, metavar="SIZE",
                   help="refuse to write a .json trace, .collapsed or .speedscope.json larger "
                        "than SIZE (default 300M)")
    p.add_argument("--force", action="store_true",
                   help="write those exports even above --max-size")
    p.add_argument("--timeline-calls", type=_positive, default=250000, metavar="N",
                   help="the HTML timeline keeps the N longest calls (default 250000)")
    p.add_argument("--no-source", action="store_true",
                   help="the HTML report leaves out the source of the program's files "
                        "(embedded by default, up to 2 MB; never the standard library's "
                        "or installed packages')")
    p.add_argument("--show-imports", action="store_true",
                   help="show Python's import system (importlib's frames) as recorded; by "
                        "default each imported module is one node, 'import NAME', holding "
                        "the import's time")
    p.add_argument("--lines", action="store_true",
                   help="the line-level profiles (lines.json: functions measured with "
                        "--lines or @scorep.user.lines) in line_profiler's layout, instead "
                        "of the terminal report")
    p.add_argument("--wait-states", action="store_true",
                   help="replay the trace of an MPI run and report Scalasca's wait states "
                        "(Late Sender, Wait at Barrier, ...), also for runs measured without "
                        "the analysis at the end (SCOREP_MPI_WAIT_STATES=false)")
    p.add_argument("--by-location", action="store_true",
                   help="with --lines: one profile per thread and rank instead of their sum")
    p.add_argument("--node-threshold", type=_percent, default=0.005, metavar="PCT",
                   help="call graphs leave out functions below PCT%% of the time "
                        "(default 0.5)")
    p.add_argument("--edge-threshold", type=_percent, default=0.001, metavar="PCT",
                   help="call graphs leave out calls below PCT%% of the time (default 0.1)")
    return p


def build_diff_parser():
    p = _Parser(prog=PROG + " diff", description=(
        "Compares two experiments: the regions whose time or visits changed most, side "
        "by side. Without -o in the terminal; -o FILE.html writes an HTML report with a "
        "differential flame graph."))
    p.add_argument("experiments", nargs="*", metavar="A B",
                   help="the first (baseline) and the second experiment; none: the two newest "
                        "scorep-*/ experiments of the current directory, the older one as A")
    p.add_argument("-o", "--output", action="append", default=[], metavar="FILE.html")
    p.add_argument("--top", type=_positive, default=20, metavar="N",
                   help="regions listed (default 20)")
    p.add_argument("--source", choices=("auto", "profile", "trace"), default="auto")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour on a terminal (auto, the default, honours NO_COLOR)")
    p.add_argument("--show-imports", action="store_true",
                   help="compare importlib's frames as recorded instead of one 'import "
                        "NAME' node per imported module")
    return p


def _result_files(path):
    """The measurement files of an experiment directory (or the file itself)."""
    if os.path.isdir(path):
        return [os.path.join(path, name) for name in ("profile.cubex", "traces.otf2")
                if os.path.isfile(os.path.join(path, name))]
    return [path] if os.path.isfile(path) else []


def _newest_first(paths):
    """The experiments among paths, the most recently written first (by their result files'
    modification time, so a renamed or moved-aside directory sorts by when it was written)."""
    found = [(max(os.path.getmtime(f) for f in files), path)
             for path, files in ((p, _result_files(p)) for p in paths) if files]
    return [path for _, path in sorted(found, reverse=True)]


def _experiments_here():
    newest = _newest_first(sorted(name for name in os.listdir(".") if name.startswith("scorep-")))
    if not newest:
        raise UsageError("no experiment given, and the current directory has no scorep-*/ "
                         "experiment (a directory with profile.cubex or traces.otf2)")
    return newest


def choose_experiment(given):
    """The experiment to report: the one named; without a name the newest experiment of the
    current directory; of several (the README's `scorep-report scorep-*` after a few runs)
    the newest, and a line saying so."""
    if len(given) == 1:
        return given[0]
    if not given:
        return _experiments_here()[0]
    newest = _newest_first(given)
    if not newest:
        raise ReportError("none of the %d paths given is an experiment (a directory with "
                          "profile.cubex or traces.otf2, or one of those files)" % len(given))
    sys.stderr.write("%s: %d experiments given, reporting the newest: %s\n"
                     % (PROG, len(given), newest[0]))
    return newest[0]


def _say(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _warn(text):
    sys.stderr.write("%s: warning: %s\n" % (PROG, text))
    sys.stderr.flush()


def _outputs(args):
    outs = []
    for path in args.output:
        fmt = format_of(path)
        if "{rank}" in path and fmt not in PER_RANK:
            raise UsageError("{rank} works in .prof, .collapsed, .speedscope.json, .dot, "
                             ".png, .svg names, not in %s" % path)
        outs.append((path, fmt))
    return outs


def _per_rank(tree, path):
    """[(path, locations or None)]: one entry, or one per rank for {rank} names."""
    if "{rank}" not in path:
        return [(path, None)]
    return [(path.replace("{rank}", str(rank.index)), rank.locations) for rank in tree.ranks]


def run_report(args):
    from scorep.report.readers import Experiment

    outputs = _outputs(args)
    if args.by_location and not args.lines:
        raise UsageError("--by-location goes with --lines")
    exp = Experiment(choose_experiment(args.experiment), args.source,
                     show_imports=args.show_imports)
    formats = {fmt for _, fmt in outputs}
    if args.lines or formats == {"lprof"}:
        return run_lines(exp, args, outputs)
    if args.wait_states:
        if outputs:
            raise UsageError("--wait-states goes to the terminal report (no -o)")
        exp.replayed_wait_states = exp.replay_wait_states()
    for fmt in ("chrome", "perfetto"):
        if fmt in formats and not exp.has_trace:
            raise ReportError("%s needs a trace, and %s has only a profile (run with "
                              "SCOREP_ENABLE_TRACING=true)" % (
                                  next(p for p, f in outputs if f == fmt), exp.path))
    for path, _ in outputs:
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise ReportError("cannot write %s: directory %s does not exist" % (path, parent))

    durations = None
    try:
        # One pass over the trace serves every output; what it gathers depends on them.
        if exp.has_trace and (not outputs or formats & {"html", "chrome", "perfetto", "speedscope"}
                              or exp.tree_from_trace):
            opts = {}
            if "html" in formats:
                opts.update(timeline_limit=args.timeline_calls,
                            timeline_min_ns=args.min_duration,
                            timeline_max_depth=0xFFFFFFFF if args.max_depth is None
                            else args.max_depth,
                            density_bins=1024, message_limit=20000, flush_limit=10000)
            if "chrome" in formats:
                first = next(p for p, f in outputs if f == "chrome")
                fd, durations = tempfile.mkstemp(
                    prefix=".scorep-report-", suffix=".durations",
                    dir=os.path.dirname(os.path.abspath(first)))
                os.close(fd)
                opts["durations_path"] = durations
                opts.setdefault("flush_limit", 10000)
            if "perfetto" in formats:
                opts.setdefault("message_limit", 1000000)
                opts.setdefault("flush_limit", 100000)
            try:
                exp.run_scan(**opts)
            except ReportError as error:
                # A profile still makes every report but the trace exports: say what is
                # lost and go on.
                if formats & {"chrome", "perfetto"} or exp.tree_from_trace:
                    raise
                _warn("the trace is not read (%s); reporting from the profile alone" % error)
                exp.trace_error = str(error)

        if not outputs:
            from scorep.report import terminal
            sys.stdout.write(terminal.render(exp, top=args.top,
                                             color=terminal.use_color(args.color)))
            return 0

        for path, fmt in outputs:
            write_output(exp, path, fmt, args)
    finally:
        if durations and os.path.exists(durations):
            os.unlink(durations)
    return 0


def run_lines(exp, args, outputs):
    """--lines, and .lprof outputs: the line-level profiles need neither the call tree nor
    the trace."""
    from scorep.report import lines
    profiles = lines.require(exp)
    others = [path for path, fmt in outputs if fmt != "lprof"]
    if others:
        raise UsageError("--lines writes .lprof files only, not %s" % others[0])
    for path, _ in outputs:
        n = lines.write_lprof(profiles, path)
        _say("wrote %s: line profiles of %d function(s) (python -m line_profiler %s)"
             % (path, n, path))
    if args.lines:
        sys.stdout.write(lines.render(profiles, per_location=args.by_location))
    return 0


def write_output(exp, path, fmt, args):
    if fmt == "lprof":
        from scorep.report import lines
        n = lines.write_lprof(lines.require(exp), path)
        _say("wrote %s: line profiles of %d function(s) (python -m line_profiler %s)"
             % (path, n, path))
        return
    if fmt == "chrome":
        from scorep.report.exports import chrome as export_chrome
        calls, nbytes = export_chrome.check_size(exp.scan, path, args.min_duration,
                                                 args.max_depth, args.max_size, args.force)
        stats = export_chrome.write(exp, path, args.min_duration, args.max_depth)
        left = exp.scan.calls - stats["complete"]
        _say("wrote %s (%s): %s calls%s, %s message arrows, %s buffer flushes" % (
            path, format_bytes(stats["bytes"]), format_count(stats["complete"]),
            " (%s shorter or deeper ones left out)" % format_count(left) if left else "",
            format_count(stats["flows"] // 2), format_count(stats["flushes"])))
        return
    if fmt == "perfetto":
        from scorep.report.exports import chrome as export_chrome, perfetto as export_perfetto
        from scorep.report.trace_calls import scan_calls
        export_perfetto.message_classes()  # the library is there before a long pass
        export_chrome.check_size(exp.scan, path, args.min_duration, args.max_depth,
                                 args.max_size, args.force, viewers="Perfetto",
                                 per_event=export_perfetto.BYTES_PER_CALL,
                                 names_in_events=False)
        calls = scan_calls(exp, args.min_duration, args.max_depth)
        stats = export_perfetto.write(exp, calls, path, exp.program)
        left = exp.scan.calls - stats["calls"]
        _say("wrote %s (%s): %s calls%s, %s message arrows, %s buffer flushes (Perfetto: "
             "ui.perfetto.dev)" % (
                 path, format_bytes(stats["bytes"]), format_count(stats["calls"]),
                 " (%s shorter or deeper ones left out)" % format_count(left) if left else "",
                 format_count(stats["flows"]), format_count(stats["flushes"])))
        return
    if fmt == "html":
        from scorep.report import html
        info = html.write_report(exp, path, args)
        size = os.path.getsize(path)
        _say("wrote %s (%s): %s" % (path, format_bytes(size), info))
        if size > 100 * 10**6:
            _warn("%s is %s: browsers open it slowly; --timeline-calls keeps fewer calls"
                  % (path, format_bytes(size)))
        return
    tree = exp.tree
    calls = None
    if fmt == "speedscope" and exp.has_trace and exp.trace_error is None:
        # Time order from the trace: an evented profile per thread.
        from scorep.report.exports import chrome as export_chrome, stacks as export_stacks
        from scorep.report.trace_calls import scan_calls
        export_chrome.check_size(exp.scan, path, args.min_duration, args.max_depth,
                                 args.max_size, args.force, viewers="speedscope",
                                 per_event=export_stacks.EVENTED_BYTES_PER_CALL,
                                 names_in_events=False)
        calls = scan_calls(exp, args.min_duration, args.max_depth)
    for target, locs in _per_rank(tree, path):
        if (fmt == "collapsed" or (fmt == "speedscope" and calls is None)) and not args.force:
            from scorep.report.exports import stacks as export_stacks
            size, deepest = export_stacks.estimated_size(tree, fmt, locs)
            if size > args.max_size:
                raise ReportError(
                    "%s would hold ~%s (call paths up to %d deep, each written whole), more "
                    "than --max-size %s: measure with a smaller "
                    "SCOREP_PROFILING_MAX_CALLPATH_DEPTH, or give --force"
                    % (target, format_bytes(size), deepest, format_bytes(args.max_size)))
        if fmt == "pstats":
            from scorep.report.exports import pstats as export_pstats
            n = export_pstats.write(tree, target, locs)
            _say("wrote %s: %d functions (pstats; python -m pstats %s)" % (target, n, target))
        elif fmt == "collapsed":
            from scorep.report.exports import stacks as export_stacks
            n = export_stacks.write_collapsed(tree, target, locs)
            _say("wrote %s: %d stacks (values: exclusive ns)" % (target, n))
        elif fmt == "speedscope":
            from scorep.report.exports import stacks as export_stacks
            n, kind = export_stacks.write_speedscope(tree, target, exp.program, locs, calls)
            _say("wrote %s: %d %s profile(s), one per thread (open in speedscope.app)%s"
                 % (target, n, kind, ": calls in time order from the trace"
                    if kind == "evented" else ": call paths by exclusive time, no time "
                    "order (that needs a trace)"))
        else:
            from scorep.report.exports import dot as export_dot
            title = exp.program if locs is None else "%s, %s" % (
                exp.program, tree.ranks[tree.locations[locs[0]].rank].name)
            if fmt == "dot":
                n = export_dot.write_dot(tree, target, title, args.node_threshold,
                                         args.edge_threshold, locs)
            else:
                n = export_dot.render(tree, target, fmt, title, args.node_threshold,
                                      args.edge_threshold, locs)
            _say("wrote %s: call graph of %d functions (%.1f%%+ of the time)"
                 % (target, n, 100 * args.node_threshold))


def run_diff(args):
    from scorep.report import diff
    from scorep.report.readers import Experiment

    outputs = []
    for path in args.output:
        if format_of(path) != "html":
            raise UsageError("diff writes .html only, not %s" % path)
        outputs.append(path)
    a = Experiment(args.a, args.source, show_imports=args.show_imports)
    b = Experiment(args.b, args.source, show_imports=args.show_imports)
    result = diff.compare(a, b)
    if not outputs:
        from scorep.report.terminal import use_color
        sys.stdout.write(diff.render_terminal(result, top=args.top,
                                              color=use_color(args.color)))
        return 0
    for path in outputs:
        diff.write_html(result, path, top=args.top)
        _say("wrote %s (%s): differential flame graph, %d regions compared" % (
            path, format_bytes(os.path.getsize(path)), len(result["rows"])))
    return 0


def main(argv=None):
    return run_tool(PROG, _main, list(sys.argv[1:] if argv is None else argv), usage_hint=True)


def _main(argv):
    if argv and argv[0] == "diff":
        args = build_diff_parser().parse_intermixed_args(argv[1:])
        if not args.experiments:
            newest = _experiments_here()
            if len(newest) < 2:
                raise UsageError("diff needs two experiments, and the current directory "
                                 "has one: %s" % newest[0])
            args.experiments = [newest[1], newest[0]]
        if len(args.experiments) != 2:
            raise UsageError("diff compares two experiments (got %d)" % len(args.experiments))
        args.a, args.b = args.experiments
        return run_diff(args)
    args = build_parser().parse_intermixed_args(argv)
    return run_report(args)
