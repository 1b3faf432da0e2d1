"""The terminal report: what ran, where the time went, per thread and rank, and what the
measurement cost and lost."""

import os
import shutil

from scorep.report.analysis import load_balance, location_rows, top_regions
from scorep.report.model import format_count, format_seconds

__all__ = ["render", "fit", "terminal_width"]


def terminal_width():
    return max(60, min(shutil.get_terminal_size((100, 24)).columns, 160))


def fit(text, width):
    """Shortens text to width by cutting its middle: both the module and the function
    name stay readable."""
    if len(text) <= width:
        return text
    if width <= 3:
        return text[:width]
    head = (width - 1) // 2
    tail = width - 1 - head
    return text[:head] + "~" + text[-tail:]


def _pct(part, whole):
    return "%5.1f%%" % (100.0 * part / whole) if whole else "    - "


def _region_table(stats, total, width, key):
    lines = []
    fixed = 10 + 7 + 10 + 7 + 12 + 11 + 6
    name_w = max(20, width - fixed)
    lines.append("  %9s %6s %10s %6s %12s %10s  %s" % (
        "excl", "excl%", "incl", "incl%", "visits", "per visit", "region"))
    for st in stats:
        per_visit = st.incl / st.visits if st.visits else None
        lines.append("  %9s %6s %10s %6s %12s %10s  %s" % (
            format_seconds(st.excl), _pct(st.excl, total), format_seconds(st.incl),
            _pct(st.incl, total), format_count(st.visits),
            format_seconds(per_visit) if per_visit is not None else "-",
            fit(st.region.name, name_w)))
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


def render(exp, top=15, width=None):
    """The report as text (ends with a newline)."""
    width = width or terminal_width()
    tree = exp.tree
    total = tree.total_time()
    out = []
    out.append("scorep report: %s" % exp.path)
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
    out.append("  program  %s" % exp.program)
    out.append("  read     " + " + ".join(sources))
    nthreads = len(tree.locations)
    out.append("  ran      %d process%s, %d thread%s; %s of thread time, %s calls" % (
        len(tree.ranks), "" if len(tree.ranks) == 1 else "es", nthreads,
        "" if nthreads == 1 else "s", format_seconds(total),
        format_count(tree.total_visits())))
    for note in exp.missing():
        out.append("  missing  " + note)
    out.append("")

    out.append("Top %d regions by exclusive time (own time, callees excluded)" % top)
    out.extend(_region_table(top_regions(tree, "excl", top), total, width, "excl"))
    out.append("")
    out.append("Top %d regions by inclusive time (callees included, recursion once)" % top)
    out.extend(_region_table(top_regions(tree, "incl", top), total, width, "incl"))
    out.append("")

    out.append("Threads")
    rows = location_rows(tree)
    rank_w = max([4] + [len(tree.ranks[l.rank].name) for l, *_ in rows])
    thread_w = max([6] + [len(l.name) for l, *_ in rows])
    rank_w, thread_w = min(rank_w, 20), min(thread_w, 24)
    out.append("  %-*s %-*s %10s %6s %12s  %s" % (rank_w, "rank", thread_w, "thread", "time",
                                                 "time%", "calls", "busiest region (excl)"))
    name_w = max(20, width - rank_w - thread_w - 48)
    shown = rows
    if len(rows) > 32:
        # Thousands of ranks: the busiest and the least busy threads tell the story.
        by_time = sorted(rows, key=lambda r: -r[1])
        shown = by_time[:12] + [None] + by_time[-8:]
    for row in shown:
        if row is None:
            out.append("  ... %d more threads (all of them: -o report.html)" % (len(rows) - 20))
            continue
        loc, secs, calls, busiest, bsecs = row
        out.append("  %-*s %-*s %10s %6s %12s  %s (%s)" % (
            rank_w, fit(tree.ranks[loc.rank].name, rank_w), thread_w, fit(loc.name, thread_w),
            format_seconds(secs), _pct(secs, total), format_count(calls),
            fit(busiest, name_w), format_seconds(bsecs)))
    out.append("")

    if len(tree.ranks) > 1:
        lb = load_balance(tree, top=min(top, 10))
        out.append("Ranks: load balance of the top regions (inclusive time per rank)")
        out.append("  %9s %9s %9s %9s %8s  %s" % ("min", "mean", "max", "stddev", "max/mean",
                                                  "region"))
        for r in lb["regions"]:
            lo, mean, hi, sd = r["stats"]
            out.append("  %9s %9s %9s %9s %8s  %s" % (
                format_seconds(lo), format_seconds(mean), format_seconds(hi),
                format_seconds(sd), "%.2f" % (hi / mean) if mean else "-",
                fit(r["stat"].region.name, max(20, width - 60))))
        out.append("  work (program code, exclusive) per rank: %s" % _spread(lb["names"], lb["work"]))
        if any(lb["mpi"]):
            out.append("  MPI (exclusive) per rank: %s" % _spread(lb["names"], lb["mpi"]))
        if lb["idle"]:
            names = [lb["names"][i] for i in lb["idle"]]
            more = " and %d more" % (len(names) - 16) if len(names) > 16 else ""
            out.append("  IDLE: %d of %d ranks do less than a quarter of the busiest rank's "
                       "work: %s%s" % (len(names), len(lb["names"]), ", ".join(names[:16]), more))
        out.append("")

    if exp.scan is not None:
        msgs = exp.scan.messages()
        if msgs["p2p"] or msgs["collectives"]:
            out.append("MPI messages")
            sent = sum(c for _, _, c, _ in msgs["p2p"])
            nbytes = sum(b for _, _, _, b in msgs["p2p"])
            out.append("  point-to-point: %s messages, %s bytes between %d rank pairs" % (
                format_count(sent), format_count(nbytes), len(msgs["p2p"])))
            colls = sum(c for _, _, c, _, _ in msgs["collectives"])
            if colls:
                out.append("  collectives: %s operations (per rank)" % format_count(colls))
            out.append("")

    out.append("Measurement")
    for severity, text in exp.measurement_facts():
        out.append("  %s %s" % ("!" if severity == "warn" else "-", text))
    out.append("")
    look = ["-o report.html (flame graph, table, timeline, load balance)"]
    if exp.has_trace:
        look.append("-o trace.json (Perfetto, chrome://tracing)")
    look.append("-o profile.prof (pstats, SnakeViz)")
    out.append("More: python -m scorep.report %s %s" % (exp.path, look[0]))
    for item in look[1:]:
        out.append("      python -m scorep.report %s %s" % (exp.path, item))
    return "\n".join(out) + "\n"
