"""The terminal report: what ran, where the time went, per thread and rank, and what the
measurement cost and lost.

Every line fits the terminal's width (COLUMNS, else the terminal's size, else 100): the
numeric columns are narrow and fixed, a region name takes the rest of its line, and a
name that does not fit goes whole onto the line below instead of being cut. Colour only
on a terminal and never with NO_COLOR set (or --color=never)."""

import collections
import os
import shutil
import sys
import textwrap

from scorep.report.analysis import (io_summary, load_balance, location_rows, top_regions,
                                    wait_state_table, wait_states)
from scorep.report.model import format_bytes, format_count, format_seconds

__all__ = ["render", "terminal_width", "Style", "table_row", "wrap", "use_color"]

MIN_WIDTH = 40
MAX_WIDTH = 200


def terminal_width():
    """COLUMNS when set, else the terminal's width, else 100; within 40..200."""
    return max(MIN_WIDTH, min(shutil.get_terminal_size((100, 24)).columns, MAX_WIDTH))


def use_color(choice="auto", stream=None):
    """--color: "always", "never", or "auto": on a terminal unless NO_COLOR is set
    (https://no-color.org) or TERM is dumb."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    stream = stream if stream is not None else sys.stdout
    if os.environ.get("NO_COLOR", "") != "" or os.environ.get("TERM") == "dumb":
        return False
    return hasattr(stream, "isatty") and stream.isatty()


class Style:
    """ANSI styles, or nothing. Applied to text already padded to its column, so the
    visible widths stay those of the plain text."""

    def __init__(self, color):
        self.color = color

    def _sgr(self, code, text):
        return "\x1b[%sm%s\x1b[0m" % (code, text) if self.color and text else text

    def title(self, text):
        return self._sgr("1", text)

    def warn(self, text):
        return self._sgr("31", text)

    def dim(self, text):
        return self._sgr("2", text)

    def name(self, text):
        return self._sgr("36", text)

    def heat(self, text, share):
        """A share of the run: red from 20%, yellow from 5%."""
        if share >= 0.20:
            return self._sgr("1;31", text)
        if share >= 0.05:
            return self._sgr("33", text)
        return text

    def up(self, text):
        return self._sgr("31", text)

    def down(self, text):
        return self._sgr("32", text)


PLAIN = Style(False)


def wrap(text, width, indent="  ", hanging="    "):
    """A line of prose wrapped to width; long words (paths) are split, never cut."""
    return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=hanging,
                         break_long_words=True, break_on_hyphens=False) or [indent.rstrip()]


def table_row(fixed, name, width, styled_fixed=None, styled_name=None):
    """A table line: the fixed columns, then the name. When the name does not fit after
    them it goes whole on the next line(s), indented, so no name is cut."""
    styled_fixed = fixed if styled_fixed is None else styled_fixed
    styled_name = name if styled_name is None else styled_name
    if len(fixed) + 2 + len(name) <= width:
        return [styled_fixed + "  " + styled_name]
    lines = [styled_fixed.rstrip()]
    indent = "      "
    room = max(1, width - len(indent))
    if len(name) <= room:
        return lines + [indent + styled_name]
    return lines + [indent + name[i:i + room] for i in range(0, len(name), room)]


def _pct(part, whole):
    return "%.1f%%" % (100.0 * part / whole) if whole else "-"


# Region tables: (header, width, value) per column; the last ones go first when the
# terminal is narrow, so the name keeps at least NAME_ROOM characters.
NAME_ROOM = 22


def _region_columns(total, samples=None):
    columns = [
        ("excl", 8, lambda st: format_seconds(st.excl)),
        ("excl%", 6, lambda st: _pct(st.excl, total)),
        ("incl", 8, lambda st: format_seconds(st.incl)),
        ("incl%", 6, lambda st: _pct(st.incl, total)),
    ]
    if samples is not None:
        # Sampled: visits are not counted, a region's own samples are.
        return columns + [("samples", 10, lambda st: format_count(samples.get(st.region.id, 0)))]
    return columns + [
        ("visits", 10, lambda st: format_count(st.visits)),
        ("per visit", 9, lambda st: format_seconds(st.incl / st.visits) if st.visits else "-"),
    ]


def _fit_columns(columns, width, keep=2):
    """Drops columns from the end until the name has NAME_ROOM characters (at least
    `keep` columns stay)."""
    cols = list(columns)
    while len(cols) > keep and 2 + sum(w + 1 for _, w, _ in cols) + 1 + NAME_ROOM > width:
        cols.pop()
    return cols


def _region_table(stats, total, width, style, samples=None):
    cols = _fit_columns(_region_columns(total, samples), width)
    head = "  " + " ".join("%*s" % (w, h) for h, w, _ in cols)
    lines = [style.dim(head + "  region")]
    for st in stats:
        cells = ["%*s" % (w, f(st)) for _, w, f in cols]
        fixed = "  " + " ".join(cells)
        styled = "  " + " ".join(
            style.heat(c, (st.excl if h.startswith("excl") else st.incl) / total if total else 0)
            if h in ("excl%", "incl%") else c for c, (h, _, _) in zip(cells, cols))
        lines.extend(table_row(fixed, st.region.display, width, styled,
                               style.name(st.region.display)))
    return lines


def _spread(names, values):
    """min (where), mean, max (where) of per-rank values, or all of them for a few ranks."""
    if len(values) <= 4:
        return ", ".join("%s %s" % (n, format_seconds(v)) for n, v in zip(names, values))
    lo = min(range(len(values)), key=values.__getitem__)
    hi = max(range(len(values)), key=values.__getitem__)
    return "min %s (%s), mean %s, max %s (%s)" % (
        format_seconds(values[lo]), names[lo], format_seconds(sum(values) / len(values)),
        format_seconds(values[hi]), names[hi])


def _threads(tree, total, width, style):
    rows = location_rows(tree)
    multi = len(tree.ranks) > 1

    def label(loc):
        return "%s / %s" % (tree.ranks[loc.rank].name, loc.name) if multi else loc.name

    label_w = min(max([6] + [len(label(l)) for l, *_ in rows]), max(12, width - 58))
    if tree.sampling is not None:
        rows = [(loc, secs, sum(tree.hits[n.id][loc.index] for n in tree.nodes), b, bs)
                for loc, secs, _calls, b, bs in rows]
    head = "  %-*s %8s %6s %11s" % (label_w, "thread", "time", "time%",
                                    "calls" if tree.sampling is None else "samples")
    busiest_head = "busiest region (exclusive time)"
    if len(head) + 2 + len(busiest_head) > width:
        busiest_head = "busiest (excl)"
    lines = [style.dim(line) for line in table_row(head, busiest_head, width)]
    shown = rows
    if len(rows) > 32:
        # Thousands of ranks: the busiest and the least busy threads tell the story.
        by_time = sorted(rows, key=lambda r: -r[1])
        shown = by_time[:12] + [None] + by_time[-8:]
    for row in shown:
        if row is None:
            lines.extend(wrap("... %d more threads (all of them: -o report.html)"
                              % (len(rows) - 20), width))
            continue
        loc, secs, calls, busiest, bsecs = row
        name = label(loc)
        if len(name) > label_w:
            lines.append("  " + name)
            name = ""
        fixed = "  %-*s %8s %6s %11s" % (label_w, name, format_seconds(secs), _pct(secs, total),
                                        format_count(calls))
        lines.extend(table_row(fixed, "%s (%s)" % (busiest, format_seconds(bsecs)), width))
    return lines


def _balance(tree, top, width, style):
    lb = load_balance(tree, top=min(top, 10))
    # MPI ranks, or the processes of a program that started child processes.
    unit = "rank" if all(n.startswith("MPI Rank ") for n in lb["names"]) else "process"
    units = "ranks" if unit == "rank" else "processes"
    lines = [style.title(line) for line in wrap(
        "%s: load balance (inclusive time per %s, over the %s that run the region): the "
        "program's own functions, the most imbalanced first, then the top regions"
        % (units.capitalize(), unit, units), width, "", "  ")]
    count = "ranks" if unit == "rank" else "procs"
    cols = [("min", 8), ("mean", 8), ("max", 8), ("stddev", 8), ("max/mean", 8), (count, 9)]
    cols = _fit_columns([(h, w, None) for h, w in cols], width, keep=4)
    lines.append(style.dim("  " + " ".join("%*s" % (w, h) for h, w, _ in cols) + "  region"))
    for r in lb["regions"]:
        lo, mean, hi, sd = r["stats"]
        values = {"min": format_seconds(lo), "mean": format_seconds(mean),
                  "max": format_seconds(hi), "stddev": format_seconds(sd),
                  "max/mean": "%.2f" % (hi / mean) if mean else "-",
                  count: "%d/%d" % (len(r["ran"]), len(lb["names"]))}
        fixed = "  " + " ".join("%*s" % (w, values[h]) for h, w, _ in cols)
        name = r["stat"].region.display
        lines.extend(table_row(fixed, name, width, None, style.name(name)))
    lines.extend(wrap("work (program code, exclusive) per %s: %s"
                      % (unit, _spread(lb["names"], lb["work"])), width))
    if any(lb["mpi"]):
        lines.extend(wrap("MPI (exclusive) per %s: %s" % (unit, _spread(lb["names"], lb["mpi"])),
                          width))
    if lb["idle"]:
        names = [lb["names"][i] for i in lb["idle"]]
        more = " and %d more" % (len(names) - 16) if len(names) > 16 else ""
        lines.extend(style.warn(line) for line in wrap(
            "IDLE: %d of %d %s do less than a quarter of the busiest %s's work: %s%s"
            % (len(names), len(lb["names"]), units, unit, ", ".join(names[:16]), more), width))
    return lines


def _bytes(n):
    return format_bytes(n) if n else "-"


def _io_table(rows, label, width, style):
    head = "  %8s %8s %9s %9s" % ("calls", "time", "read", "written")
    lines = [style.dim(head + "  " + label)]
    for r in rows:
        fixed = "  %8s %8s %9s %9s" % (format_count(r["calls"]), format_seconds(r["time"]),
                                       _bytes(r["bytes_read"]), _bytes(r["bytes_written"]))
        lines.extend(table_row(fixed, r["name"], width, None, style.name(r["name"])))
    return lines


def _io(exp, tree, total, top, width, style):
    """The I/O section (SCOREP_IO_POSIX): totals, files (from the trace), I/O functions
    and the regions that call them; [] when the run recorded no I/O."""
    io = exp.scan.io() if exp.scan is not None else None
    summary = io_summary(tree, io, top=min(top, 10))
    if summary is None:
        return []
    t = summary["totals"]
    out = [style.title("I/O (POSIX, ISO C and MPI-IO calls)" if t.get("mpi_io")
                       else "I/O (POSIX and ISO C calls)")]
    text = "%s calls of %d I/O functions, %s (%s of the run); %s read, %s written" % (
        format_count(t["calls"]), t["functions"], format_seconds(t["time"]),
        _pct(t["time"], total), format_bytes(t["bytes_read"]), format_bytes(t["bytes_written"]))
    if "files" in t:
        text += "; %d file%s" % (t["files"], "" if t["files"] == 1 else "s")
    out.extend(wrap(text, width))
    if t.get("failed"):
        out.extend(style.warn(line) for line in wrap(
            "! %s operation(s) failed (no bytes moved: a bad descriptor, a read from a "
            "write-only file, ...)" % format_count(t["failed"]), width, "  ", "    "))
    if t.get("unknown_calls"):
        out.extend(wrap("%s call(s) on descriptors the measurement does not know (sockets, "
                        "pipes, descriptors closed twice or never opened) have no I/O events"
                        % format_count(t["unknown_calls"]), width))
    files = summary["files"]
    if files is None:
        out.extend(wrap("per file: needs the trace (SCOREP_ENABLE_TRACING=true)", width))
    elif files:
        out.append(style.dim("  %9s %9s %7s %8s  %s" % ("read", "written", "ops", "time",
                                                          "file (regions doing its I/O)")))
        for f in files:
            name = f["name"] or "(a handle without a name)"
            if f["failed"]:
                name += " [%d failed]" % f["failed"]
            fixed = "  %9s %9s %7s %8s" % (_bytes(f["bytes_read"]), _bytes(f["bytes_written"]),
                                           format_count(f["operations"]),
                                           format_seconds(f["time"]))
            out.extend(table_row(fixed, name, width, None, style.name(name)))
            who = []
            for caller, r, w, ops in f["callers"][:3]:
                moved = ", ".join(x for x in ("%s read" % format_bytes(r) if r else "",
                                              "%s written" % format_bytes(w) if w else "") if x)
                who.append("%s (%s)" % (caller, moved or "%d op%s" % (ops, "" if ops == 1 else "s")))
            if len(f["callers"]) > 3:
                who.append("%d more" % (len(f["callers"]) - 3))
            if who:
                out.extend(wrap(", ".join(who), width, "      ", "      "))
        if t["file_rows"] > len(files):
            out.extend(wrap("(%d of %d: the most bytes and those with failures; all of them: "
                            "-o report.html)" % (len(files), t["file_rows"]), width))
    out.append(style.dim("  I/O functions"))
    out.extend(_io_table(summary["functions"], "function", width, style))
    out.append(style.dim("  regions calling them"))
    out.extend(_io_table(summary["callers"], "region", width, style))
    return out


def _metrics(tree, top, width, style):
    """The metrics recorded at every enter and leave (SCOREP_METRIC_*, --memory): per metric
    its total and the regions with the most of it (exclusive, callees excluded). The
    wait-state metrics have a section of their own."""
    waits = {name for name, _parent in wait_state_table()}
    metrics = [m for m in tree.metrics if m.name not in waits]
    if not metrics:
        return []
    out = [style.title("Metrics (read at every enter and leave; exclusive per region)")]
    names = {r.id: r.display for r in tree.regions}
    for metric in metrics:
        roots = sum(metric.incl[r.id] for r in tree.roots)
        out.extend(wrap("%s [%s]: %s in all%s" % (
            metric.display, metric.unit, metric.format(roots),
            " (%s)" % metric.description if metric.description else ""), width, "  ", "    "))
        ranked = sorted(metric.by_region(tree.nodes).items(), key=lambda kv: -kv[1][0])
        for rid, (ex, inc) in ranked[:min(top, 5)]:
            if ex <= 0:
                break
            fixed = "    %10s %10s" % (metric.format(ex), metric.format(inc))
            out.extend(table_row(fixed, names[rid], width, None, style.name(names[rid])))
    return out


def _wait_states(exp, width, style):
    """Scalasca's wait states the ranks computed at the end of a traced MPI run, or those
    replayed from its trace (scorep-report --wait-states): per pattern its total, its share
    of the MPI time and where it was worst."""
    replayed = getattr(exp, "replayed_wait_states", None)
    if replayed is not None:
        ws = wait_states(None, replayed)
        title = "Wait states (Scalasca's patterns, replayed from the trace)"
    else:
        ws = wait_states(exp.profile) if exp.has_profile else None
        title = "Wait states (Scalasca's patterns, computed by the ranks at the end)"
    if ws is None:
        return []
    out = [style.title(title)]
    out.extend(wrap("waiting: %s of %s in MPI (%s); completion times excluded" % (
        format_seconds(ws["total"]), format_seconds(ws["mpi_time"]),
        _pct(ws["total"], ws["mpi_time"])), width))
    if not ws["patterns"]:
        out.extend(wrap("no rank waited for another", width))
    for row in ws["patterns"]:
        path = row["worst_path"]
        where = " > ".join(path[-2:]) if len(path) > 1 else path[-1]
        # the critical path and the delay costs are not MPI time: no share of it
        share = " (%s of MPI time)" % _pct(row["total"], ws["mpi_time"]) \
            if row["metric"].startswith("mpi_") else ""
        out.extend(wrap("%s: %s%s%s; worst %s on %s in %s" % (
            row["display"], format_seconds(row["total"]), share,
            ": " + row["meaning"] if row["meaning"] else "",
            format_seconds(row["worst_seconds"]), row["worst_rank"], where),
            width, "  ", "    "))
    display = {row["metric"]: row["display"] for row in ws["patterns"]}
    for part in ws.get("parts", ()):
        # A part of a pattern (Late Sender's Wrong Order): its share of that pattern.
        if part["metric"] == "mpi_latesender_wo":
            text = "of Late Sender, %s while an earlier message was waiting to be received " \
                   "(Wrong Order)" % format_seconds(part["total"])
        else:
            text = "of %s, %s %s(%s)" % (
                display.get(part["parent"], part["parent"]), format_seconds(part["total"]),
                part["meaning"] + " " if part["meaning"] else "", part["display"])
        out.extend(wrap(text, width, "  ", "    "))
    if ws.get("violations"):
        out.extend(wrap("%d message(s) received before they were sent on the common clock "
                        "(clock condition violations): not counted as waiting"
                        % ws["violations"], width, "  ", "    "))
    return out


def render(exp, top=15, width=None, color=False):
    """The report as text (ends with a newline); every line at most `width` columns
    (ANSI codes aside when `color`)."""
    width = max(MIN_WIDTH, width or terminal_width())
    style = Style(color)
    tree = exp.tree
    total = tree.total_time()
    out = wrap("scorep report: %s" % exp.path, width, "", "  ")
    out[0] = style.title(out[0])
    sources = []
    if exp.has_profile:
        sources.append("profile %s%s" % (os.path.basename(exp.profile_path),
                                         "" if tree.source == "trace" else " (call tree)"))
    if exp.has_trace:
        scan = exp.scan
        sources.append("trace %s%s%s" % (
            os.path.basename(exp.trace_path),
            " (%s events)" % format_count(scan.events) if scan else "",
            " (call tree)" if tree.source == "trace" else ""))
    hang = " " * 11
    out.extend(wrap("program  %s" % exp.program, width, "  ", hang))
    out.extend(wrap("read     " + " + ".join(sources), width, "  ", hang))
    nthreads = len(tree.locations)
    sampling = tree.sampling
    out.extend(wrap("ran      %d process%s, %d thread%s; %s of thread time%s" % (
        len(tree.ranks), "" if len(tree.ranks) == 1 else "es", nthreads,
        "" if nthreads == 1 else "s", format_seconds(total),
        "" if sampling is not None else ", %s calls" % format_count(tree.total_visits())),
        width, "  ", hang))
    samples = None
    if sampling is not None:
        samples = tree.samples_by_region()
        out.extend(wrap(sampling.describe(), width, "  ", hang))
        if sampling.idle is not None:
            idle = sum(sampling.idle)
            out.extend(wrap("cpu      times and shares are of the %s the threads were on a CPU; "
                            "idle apart: %s (%s of the wall time: waiting, sleeping, not "
                            "sampled)" % (format_seconds(total), format_seconds(idle),
                                          _pct(idle, total + idle)), width, "  ", hang))
    for note in exp.missing():
        out.extend(style.warn(line) for line in wrap("missing  " + note, width, "  ", hang))
    out.append("")

    out.extend(style.title(line) for line in wrap(
        "Top %d regions by exclusive time (own time, callees excluded)" % top, width, "", "  "))
    out.extend(_region_table(top_regions(tree, "excl", top), total, width, style, samples))
    out.append("")
    out.extend(style.title(line) for line in wrap(
        "Top %d regions by inclusive time (callees included, recursion once)" % top, width,
        "", "  "))
    out.extend(_region_table(top_regions(tree, "incl", top), total, width, style, samples))
    out.append("")

    out.append(style.title("Threads"))
    out.extend(_threads(tree, total, width, style))
    out.append("")

    if len(tree.ranks) > 1:
        out.extend(_balance(tree, top, width, style))
        out.append("")

    wait_lines = _wait_states(exp, width, style)
    if wait_lines:
        out.extend(wait_lines)
        out.append("")

    metric_lines = _metrics(tree, top, width, style)
    if metric_lines:
        out.extend(metric_lines)
        out.append("")

    io_lines = _io(exp, tree, total, top, width, style)
    if io_lines:
        out.extend(io_lines)
        out.append("")

    if exp.scan is not None:
        msgs = exp.scan.messages()
        if msgs["p2p"] or msgs["collectives"] or any(s.get("rma_ops") for s in exp.scan.loc_stats):
            out.append(style.title("MPI messages"))
            sent = sum(c for _, _, c, _ in msgs["p2p"])
            nbytes = sum(b for _, _, _, b in msgs["p2p"])
            out.extend(wrap("point-to-point: %s messages, %s bytes between %d rank pairs" % (
                format_count(sent), format_count(nbytes), len(msgs["p2p"])), width))
            colls = sum(c for _, _, c, _, _ in msgs["collectives"])
            if colls:
                # Each rank records its part of a collective: the operations are counted per
                # rank, and the total is over all ranks.
                per_rank = collections.Counter()
                for rank, _op, count, _s, _r in msgs["collectives"]:
                    per_rank[rank] += count
                low, high = min(per_rank.values()), max(per_rank.values())
                out.extend(wrap("collectives: %s calls on %d ranks (%s per rank)" % (
                    format_count(colls), len(per_rank),
                    format_count(low) if low == high else "%s-%s" % (
                        format_count(low), format_count(high))), width))
            stats = exp.scan.loc_stats
            ops = sum(s.get("rma_ops", 0) for s in stats)
            if ops:
                out.extend(wrap("one-sided: %s operations, %s bytes put, %s bytes got" % (
                    format_count(ops), format_count(sum(s["rma_put_bytes"] for s in stats)),
                    format_count(sum(s["rma_get_bytes"] for s in stats))), width))
            io_read = sum(s.get("mpi_io_read_bytes", 0) for s in stats)
            io_written = sum(s.get("mpi_io_written_bytes", 0) for s in stats)
            if io_read or io_written:
                out.extend(wrap("MPI-IO: %s bytes read, %s bytes written" % (
                    format_count(io_read), format_count(io_written)), width))
            out.append("")

    out.append(style.title("Measurement"))
    for severity, text in exp.measurement_facts():
        lines = wrap(("! " if severity == "warn" else "- ") + text, width, "  ", "    ")
        out.extend(style.warn(line) if severity == "warn" else line for line in lines)
    out.append("")
    look = ["-o report.html (flame graph, callers/callees, table, timeline, load balance)"]
    if exp.has_trace:
        look.append("-o trace.pftrace (Perfetto) or -o trace.json (Perfetto, chrome://tracing)")
    look.append("-o profile.prof (pstats, SnakeViz)")
    out.append(style.title("More:"))
    for item in look:
        out.extend(wrap("python -m scorep.report %s %s" % (exp.path, item), width, "  ", "    "))
    return "\n".join(out) + "\n"
