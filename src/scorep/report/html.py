"""The HTML report: one self-contained file that opens from disk with no server and no
network. Everything it shows is in the file: the data as JSON (bulk timeline columns as
base64 typed arrays), the JavaScript inlined when the report is written.

JavaScript: d3-flame-graph and the d3 modules it needs come from npm (package.json and
package-lock.json in js/, installed by `make js`, never committed); our own code
(js/report.js) draws the timeline, load balance and tables on plain canvas/DOM, because
no package draws a lane-per-thread trace timeline that stays responsive with hundreds of
thousands of calls, and sorting a table needs no library.

The tables are also written as plain HTML, so the numbers are readable even where
JavaScript is off."""

import base64
import datetime
import html as htmlmod
import json
import os
import re
import sys
from array import array

from scorep.report.analysis import (io_summary, load_balance, region_balance, top_regions,
                                    units)
from scorep.report.model import (COLLECTIVE_OPS, location_offsets, ReportError, format_bytes, format_count,
                                 format_seconds)

__all__ = ["write_report", "render_page", "render_experiment", "open_experiment", "embed",
           "pack_page", "unpack_page",
           "js_assets", "page", "LAYOUTS"]

HERE = os.path.dirname(os.path.abspath(__file__))
JS_DIR = os.path.join(HERE, "js")

# UMD builds, in dependency order: each extends the global `d3`.
NPM_FILES = [
    "internmap/dist/internmap.min.js",
    "d3-array/dist/d3-array.min.js",
    "d3-color/dist/d3-color.min.js",
    "d3-dispatch/dist/d3-dispatch.min.js",
    "d3-ease/dist/d3-ease.min.js",
    "d3-format/dist/d3-format.min.js",
    "d3-hierarchy/dist/d3-hierarchy.min.js",
    "d3-interpolate/dist/d3-interpolate.min.js",
    "d3-time/dist/d3-time.min.js",
    "d3-time-format/dist/d3-time-format.min.js",
    "d3-scale/dist/d3-scale.min.js",
    "d3-selection/dist/d3-selection.min.js",
    "d3-timer/dist/d3-timer.min.js",
    "d3-transition/dist/d3-transition.min.js",
    "d3-flame-graph/dist/d3-flamegraph.umd.min.js",
]
FLAME_NODE_LIMIT = 200000     # call paths drawn in the flame graph
PER_LOCATION_LIMIT = 400000   # node x location values embedded for the per-thread flame graph


def _script_safe(text):
    # Inside <script>, "</script" (any case) would end the element; "<!--" can confuse
    # the parser. Both are harmless to escape in JavaScript and JSON strings.
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def json_for_script(value):
    """JSON for a <script type="application/json"> element: "<" only occurs inside JSON
    strings, where \\u003c means the same, so neither "</script" nor "<!--" can end or
    confuse the element (escaping them as _script_safe does would not be JSON)."""
    return _UNSAFE_LT.sub(r"\\u003c", json.dumps(value, separators=(",", ":"),
                                                allow_nan=False))


_UNSAFE_LT = re.compile(r"<(?=[/!])")


def js_assets():
    """The inlined JavaScript: the npm packages, then ours."""
    modules = os.path.join(JS_DIR, "node_modules")
    parts = []
    for rel in NPM_FILES:
        path = os.path.join(modules, rel)
        try:
            with open(path, encoding="utf-8") as f:
                parts.append("/* %s */\n%s" % (rel.split("/")[0], f.read()))
        except OSError:
            raise ReportError(
                "the HTML report needs its JavaScript packages, and %s is missing: run "
                "'make js' in the scorep checkout (npm ci in %s)" % (rel, JS_DIR)) from None
    with open(os.path.join(JS_DIR, "report.js"), encoding="utf-8") as f:
        parts.append(f.read())
    return "\n;\n".join(parts)


def css():
    with open(os.path.join(JS_DIR, "report.css"), encoding="utf-8") as f:
        return f.read()


def _b64(arr):
    if sys.byteorder == "big":  # typed arrays in browsers are little-endian everywhere
        arr = array(arr.typecode, arr)
        arr.byteswap()
    return base64.b64encode(arr.tobytes()).decode("ascii")


def esc(text):
    return htmlmod.escape(str(text), quote=True)


# ---- data --------------------------------------------------------------------------

KINDS = {"code": 0, "mpi": 1, "measurement": 2, "io": 3}


class RegionIndex:
    """The report's one list of regions: the call tree's, then those that only the trace
    knows. Every view (flame graph, table, timeline, callers/callees, source) refers to a
    region by its index here, so that selecting a function in one view finds it in all."""

    def __init__(self, tree):
        self.entries = []
        self.of_tree = {}
        self.by_key = {}
        for r in tree.regions:
            if r.id in self.of_tree:
                continue
            self.of_tree[r.id] = self._add(r)

    def _add(self, r):
        key = (r.name, r.file, r.line)
        i = self.by_key.get(key)
        if i is None:
            i = self.by_key[key] = len(self.entries)
            self.entries.append({"name": r.display, "full": r.name, "file": r.file or "",
                                 "line": r.line, "end": r.end if r.end > r.line else 0,
                                 "kind": KINDS[r.kind]})
        return i

    def of_scan(self, scan):
        """Index per trace region id (trace regions matched by name, file and line)."""
        return [self._add(r) for r in scan.regions]


def flame_data(tree, index):
    """Call paths as parallel arrays (parent index, region index, label index, inclusive
    ns, visits, parameter flag), preorder, capped to FLAME_NODE_LIMIT of the heaviest
    paths."""
    order = tree.preorder()
    nloc = len(tree.locations)
    if len(order) > FLAME_NODE_LIMIT:
        totals = {n.id: sum(tree.incl[n.id]) for n in order}
        cut = sorted(totals.values(), reverse=True)[FLAME_NODE_LIMIT - 1]
        keep = set()
        for n in order:
            if totals[n.id] >= cut and (n.parent is None or n.parent.id in keep):
                keep.add(n.id)
        order = [n for n in order if n.id in keep]
    pos = {n.id: i for i, n in enumerate(order)}
    labels, label_of = [], {}
    parent, region, label, incl, visits, param = [], [], [], [], [], []
    for n in order:
        text = n.label
        li = label_of.get(text)
        if li is None:
            li = label_of[text] = len(labels)
            labels.append(text)
        parent.append(pos[n.parent.id] if n.parent is not None else -1)
        region.append(index.of_tree[n.region.id])
        label.append(li)
        incl.append(int(round(sum(tree.incl[n.id]) * 1e9)))
        visits.append(0 if n.params else sum(tree.visits[n.id]))
        param.append(1 if n.params else 0)
    data = {"labels": labels, "parent": parent, "region": region, "label": label,
            "incl": incl, "visits": visits, "param": param,
            "truncated": len(order) < len(tree.nodes)}
    # The recorded metrics (SCOREP_METRIC_*, --memory): the flame graph can be drawn by any
    # of them instead of time (inclusive values summed over locations, in the metric's
    # plain unit: seconds, bytes or a count).
    if tree.metrics:
        data["metrics"] = []
        for metric in tree.metrics:
            factor, unit = metric.scale()
            data["metrics"].append({"name": metric.name, "display": metric.display,
                                    "unit": unit, "description": metric.description,
                                    "incl": [metric.incl[n.id] * factor for n in order]})
    if len(order) * nloc <= PER_LOCATION_LIMIT and nloc > 1:
        data["by_loc"] = [[int(round(tree.incl[n.id][l] * 1e9)) for n in order]
                          for l in range(nloc)]
    return data


def timeline_data(exp, index):
    scan = exp.scan
    if scan is None or not scan.opts.get("timeline_limit"):
        return None
    cols = scan.raw.slices()
    start = array("Q", cols["start"])
    dur = array("Q", cols["dur"])
    remap = index.of_scan(scan)
    region = array("I", (remap[r] for r in array("I", cols["region"])))
    loc = array("I", cols["loc"])
    depth = array("I", cols["depth"])
    nloc = len(scan.locations)
    offsets = location_offsets(loc, nloc)
    bins = scan.opts.get("density_bins") or 0
    density = []
    for l in range(nloc):
        raw = scan.raw.density(l) if bins else None
        density.append(_b64(array("I", raw)) if raw else None)
    msgs = scan.messages()
    return {
        "span_ns": scan.span_ns,
        "lanes": [{"name": l.name, "rank": scan.ranks[l.rank].name,
                   "max_depth": scan.loc_stats[l.index]["max_depth"],
                   "calls": scan.loc_stats[l.index]["enters"]} for l in scan.locations],
        "offsets": offsets,
        "start": _b64(array("d", start)),
        "dur": _b64(array("f", dur)),
        "region": _b64(region),
        "depth": _b64(array("B", (min(d, 255) for d in depth))),
        "kept": len(start),
        "calls": scan.calls,
        "threshold_ns": scan.summary["threshold_ns"],
        "min_ns": scan.opts.get("timeline_min_ns", 0),
        "max_depth": None if scan.opts.get("timeline_max_depth", 0xFFFFFFFF) == 0xFFFFFFFF
        else scan.opts["timeline_max_depth"],
        "density_bins": bins,
        "density": density,
        "flushes": [[l, s, e] for s, e, l in msgs["flushes"]],
        "flushes_total": msgs["flushes_total"],
        "messages": [list(p) for p in msgs["pairs"]],
        "messages_total": msgs["sends_total"],
    }


def balance_data(tree):
    lb = load_balance(tree, top=25)
    _unit, _names, groups = units(tree)
    return {
        "unit": lb["unit"], "names": lb["names"], "work": lb["work"], "mpi": lb["mpi"],
        "other": lb["other"], "idle": lb["idle"],
        "regions": [{"name": r["stat"].region.display, "kind": r["stat"].region.kind,
                     "values": r["incl"], "ran": r["ran"], "stats": list(r["stats"])}
                    for r in lb["regions"]],
        # The metrics shown per rank (the wait states): the index of each in the flame
        # graph's metrics (one selector drives both) and its total per unit, in seconds.
        "metrics": [{"index": i, "name": m.name, "display": m.display,
                     "description": m.description,
                     "values": [sum(m.per_loc[l] for l in locs) * m.scale()[0]
                                for locs in groups]}
                    for i, m in enumerate(tree.metrics) if m.per_loc is not None],
    }, lb


def mpi_data(exp, tree):
    out = {"ranks": [r.name for r in tree.ranks], "p2p": [], "collectives": [],
           "source": None}
    if exp.scan is not None:
        m = exp.scan.messages()
        if m["p2p"] or m["collectives"]:
            out["source"] = "trace"
            out["ranks"] = [r.name for r in exp.scan.ranks]
            out["p2p"] = [list(p) for p in m["p2p"]]
            out["collectives"] = [[r, COLLECTIVE_OPS.get(op, "op %d" % op), c, s, rv]
                                  for r, op, c, s, rv in m["collectives"]]
    out["volumes"] = mpi_volumes(exp, tree)
    if exp.profile is not None:
        names = {m.uniq_name for m in exp.profile.metrics}
        for metric in ("bytes_sent", "bytes_received"):
            if metric in names:
                vals = exp.profile.values(metric, inclusive=True)
                per_loc = [sum(vals[r.id][l] for r in exp.profile.roots)
                           for l in range(len(exp.profile.locations))]
                out[metric] = tree.rank_values(per_loc)
    return out


# Bytes moved per rank, by kind: (column, loc_stats key of the trace scan, profile metric).
VOLUMES = (("point-to-point sent", "send_bytes", None),
           ("point-to-point received", "recv_bytes", None),
           ("collectives sent", "coll_sent", None),
           ("collectives received", "coll_received", None),
           ("one-sided put", "rma_put_bytes", "bytes_put"),
           ("one-sided got", "rma_get_bytes", "bytes_get"),
           ("MPI-IO read", "mpi_io_read_bytes", "io_bytes_read::MPI_I_O"),
           ("MPI-IO written", "mpi_io_written_bytes", "io_bytes_written::MPI_I_O"))


def mpi_volumes(exp, tree):
    """{"columns": [...], "rows": [[rank name, bytes...]]}: what each rank moved by
    point-to-point, collective and one-sided communication, and read and wrote by MPI-IO
    (columns without any bytes are left out), from the trace or, without one, from the
    profile's metrics."""
    columns, values = [], []
    if exp.scan is not None:
        ranks = exp.scan.ranks
        stats = exp.scan.loc_stats
        for name, key, _metric in VOLUMES:
            per_rank = [sum(stats[l].get(key, 0) for l in r.locations) for r in ranks]
            if any(per_rank):
                columns.append(name)
                values.append(per_rank)
        names = [r.name for r in ranks]
    elif exp.profile is not None:
        have = {m.uniq_name for m in exp.profile.metrics}
        for name, _key, metric in VOLUMES:
            if metric in have:
                vals = exp.profile.values(metric, inclusive=True)
                per_loc = [sum(vals[r.id][l] for r in exp.profile.roots)
                           for l in range(len(exp.profile.locations))]
                per_rank = tree.rank_values(per_loc)
                if any(per_rank):
                    columns.append(name)
                    values.append(per_rank)
        names = [r.name for r in tree.ranks]
    else:
        return {"columns": [], "rows": []}
    return {"columns": columns,
            "rows": [[names[i]] + [v[i] for v in values] for i in range(len(names))]}


def config_data(exp):
    scan = exp.scan
    trace = None
    if exp.has_trace and exp.trace_error is None:
        defs = exp.definitions()
        trace = {"anchor": exp.trace_path, "creator": defs["creator"],
                 "otf2": "%d.%d.%d" % tuple(defs["version"]),
                 "timer_resolution": defs["resolution"], "locations": len(defs["locations"]),
                 "length_ns": defs["length_ns"]}
        if scan is not None:
            trace.update(events=scan.events, calls=scan.calls)
    return {
        "cfg": exp.config,
        "profile_attrs": sorted(exp.profile.attrs.items()) if exp.profile else [],
        "profile": exp.profile_path,
        "trace": trace,
        "manifest": exp.manifest,
    }


# ---- static HTML parts -------------------------------------------------------------

def region_table_html(tree, total, lb, index):
    """The table of all regions; each row carries its region index (data-rid) so that a
    click selects the function. Columns marked "opt" give way on narrow screens."""
    unit_groups = ([r.locations for r in tree.ranks] if lb["unit"] == "rank"
                   else [[l.index] for l in tree.locations])
    nunits = len(unit_groups)
    rows = []
    # Sampled: a region's own samples instead of visits, which are not counted.
    samples = tree.samples_by_region() if tree.sampling is not None else None
    for st in top_regions(tree, "excl", None):
        bal = region_balance(st, unit_groups)
        lo, mean, hi, sd = bal["stats"]
        imb = hi / mean if mean > 0 and len(bal["ran"]) > 1 else None
        per_visit = st.incl / st.visits if st.visits and samples is None else None
        r = st.region
        where = r.where
        cells = [
            ('class="name" title="%s"' % esc(r.display), esc(r.display), r.display),
            ('class="opt"', esc(r.kind if r.kind != "code" else r.paradigm), r.kind),
            ('class="file opt" title="%s"' % esc(where), esc(where), where),
            ("", format_count(st.visits), st.visits) if samples is None else
            ("", format_count(samples.get(r.id, 0)), samples.get(r.id, 0)),
            ("", format_seconds(st.excl), st.excl),
            ("", "%.1f%%" % (100 * st.excl / total) if total else "-", st.excl),
            ("", format_seconds(st.incl), st.incl),
            ('class="opt"', "%.1f%%" % (100 * st.incl / total) if total else "-", st.incl),
            ('class="opt"', format_seconds(per_visit),
             per_visit if per_visit is not None else -1),
            ('class="opt"', format_seconds(st.min), st.min if st.min is not None else -1),
            ('class="opt"', format_seconds(st.max), st.max if st.max is not None else -1),
            ('class="opt"', "%d/%d" % (len(bal["ran"]), nunits), len(bal["ran"])),
            ('class="opt"', "%.2f" % imb if imb is not None else "-",
             imb if imb is not None else -1),
        ]
        rows.append('<tr data-rid="%d">%s</tr>' % (index.of_tree[r.id], "".join(
            '<td %s data-sort="%s">%s</td>' % (attr, esc(key), text)
            for attr, text, key in cells)))
    unit = lb["unit"]
    head = [("region", 0, ""), ("kind", 0, "opt"), ("file:line", 0, "opt"),
            ("visits" if samples is None else "samples", 1, ""),
            ("exclusive", 1, ""), ("excl %", 1, ""), ("inclusive", 1, ""), ("incl %", 1, "opt"),
            ("per visit", 1, "opt"), ("min", 1, "opt"), ("max", 1, "opt"),
            ("%ss" % unit, 1, "opt"), ("max/mean %s" % unit, 1, "opt")]
    # A recorded metric's exclusive and inclusive values per region: two columns each,
    # shown when the metric is chosen above the table (time: none of them).
    metric_cols = metric_columns(tree, index)
    if metric_cols:
        for i, row in enumerate(rows):
            rid = int(row.split('data-rid="', 1)[1].split('"', 1)[0])
            cells = metric_cols["cells"].get(rid, metric_cols["empty"])
            rows[i] = row[:-len("</tr>")] + cells + "</tr>"
        head += metric_cols["head"]
    ths = "".join('<th data-numeric="%d"%s>%s</th>' % (num, ' class="%s"' % cls if cls else "",
                                                         esc(h)) for h, num, cls in head)
    return ('<div class="table-box"><table id="region-table" class="sortable"><thead><tr>%s'
            '</tr></thead><tbody>%s</tbody></table></div>' % (ths, "\n".join(rows)))


def metric_columns(tree, index=None):
    """The region table's metric columns: per region index of the report the cells, the
    cells of a region without values, and the headers (class "metric m-<i>", hidden until
    the metric is chosen)."""
    if not tree.metrics:
        return None
    per_region = [m.by_region(tree.nodes) for m in tree.metrics]
    cells, head, empty = {}, [], ""
    for i, metric in enumerate(tree.metrics):
        cls = "metric m-%d" % i
        head += [("%s excl" % metric.display, 1, cls), ("%s incl" % metric.display, 1, cls)]
        empty += '<td class="%s" data-sort="0">-</td>' % cls * 2
    for r in tree.regions:
        text = ""
        for i, metric in enumerate(tree.metrics):
            ex, inc = per_region[i].get(r.id, (0, 0))
            cls = "metric m-%d" % i
            text += "".join('<td class="%s" data-sort="%s">%s</td>' % (cls, v, esc(metric.format(v)))
                            for v in (ex, inc))
        cells[r.id] = text
    # The table's rows carry the report's region index; the call tree's ids map onto it.
    if index is not None:
        cells = {index.of_tree[rid]: text for rid, text in cells.items()}
    return {"cells": cells, "empty": empty, "head": head}


def facts_html(exp):
    items = []
    for note in exp.missing():
        items.append('<li class="missing">missing: %s</li>' % esc(note))
    for severity, text in exp.measurement_facts():
        items.append('<li class="%s">%s</li>' % (severity, esc(text)))
    return "<ul class=\"facts\">%s</ul>" % "".join(items)


def summary_html(tree, total, top, index):
    def table(key, title):
        rows = []
        for st in top_regions(tree, key, top):
            rows.append("<tr data-rid=\"%d\"><td class=\"name\" title=\"%s\">%s</td><td>%s</td>"
                        "<td>%s</td><td>%s</td></tr>"
                        % (index.of_tree[st.region.id], esc(st.region.display),
                           esc(st.region.display),
                           format_seconds(getattr(st, key)),
                           "%.1f%%" % (100 * getattr(st, key) / total) if total else "-",
                           format_count(st.visits)))
        return ('<div class="top"><h3>%s</h3><table class="plain"><thead><tr><th>region</th>'
                '<th>time</th><th>%%</th><th>visits</th></tr></thead><tbody>%s</tbody>'
                '</table></div>' % (esc(title), "".join(rows)))
    return '<div class="tops">%s%s</div>' % (table("excl", "Top regions by exclusive time"),
                                              table("incl", "Top regions by inclusive time"))


IO_FILE_ROWS = 500  # files listed in the I/O section


def io_section_html(exp, tree, total, index):
    """The I/O section (SCOREP_IO_POSIX), or "" when the run recorded no I/O: totals, a
    sortable table of files (from the trace) with the regions that did their I/O, and the
    I/O functions and the regions that call them (rows select the function)."""
    io = exp.scan.io() if exp.scan is not None else None
    summary = io_summary(tree, io, top=None)
    if summary is None:
        return ""
    t = summary["totals"]

    def nbytes(n):
        return format_bytes(n) if n else "-"

    parts = ['<section id="io"><h2>I/O</h2><p>%s calls of %d I/O functions (%s), '
             '%s (%s of the run); %s read, %s written%s.</p>' % (
                 format_count(t["calls"]), t["functions"],
                 "POSIX, ISO C and MPI-IO" if t.get("mpi_io") else "POSIX and ISO C",
                 esc(format_seconds(t["time"])),
                 "%.1f%%" % (100 * t["time"] / total) if total else "-",
                 format_bytes(t["bytes_read"]), format_bytes(t["bytes_written"]),
                 "; %d files" % t["files"] if "files" in t else "")]
    notes = []
    if t.get("failed"):
        notes.append('<li class="warn">%s operation(s) failed (no bytes moved: a bad '
                     'descriptor, a read from a write-only file, ...)</li>'
                     % format_count(t["failed"]))
    if t.get("unknown_calls"):
        notes.append("<li>%s call(s) on descriptors the measurement does not know (sockets, "
                     "pipes, descriptors closed twice or never opened) have no I/O events</li>"
                     % format_count(t["unknown_calls"]))
    if notes:
        parts.append('<ul class="facts">%s</ul>' % "".join(notes))
    files = summary["files"]
    if files is None:
        parts.append('<p class="missing">Per file: needs the trace (run with '
                     'SCOREP_ENABLE_TRACING=true).</p>')
    else:
        rows = []
        for f in files[:IO_FILE_ROWS]:
            who = ", ".join("%s (%s)" % (esc(name), ", ".join(
                x for x in ("%s read" % format_bytes(r) if r else "",
                            "%s written" % format_bytes(w) if w else "") if x) or
                "%d op%s" % (ops, "" if ops == 1 else "s"))
                for name, r, w, ops in f["callers"])
            cells = [
                ('class="name" title="%s"' % esc(f["name"]), esc(f["name"]), f["name"]),
                ('class="opt"', esc(", ".join(f["paradigms"])), ", ".join(f["paradigms"])),
                ("", nbytes(f["bytes_read"]), f["bytes_read"]),
                ("", nbytes(f["bytes_written"]), f["bytes_written"]),
                ("", format_count(f["reads"]), f["reads"]),
                ("", format_count(f["writes"]), f["writes"]),
                ('class="opt"', format_count(f["flushes"]), f["flushes"]),
                ('class="opt"', format_count(f["creates"]), f["creates"]),
                ('class="opt"', format_count(f["seeks"]), f["seeks"]),
                ("", format_count(f["failed"]) if f["failed"] else "-", f["failed"]),
                ("", esc(format_seconds(f["time"])), f["time"]),
                ('class="opt who"', who, who),
            ]
            rows.append("<tr>%s</tr>" % "".join(
                '<td %s data-sort="%s">%s</td>' % (attr, esc(key), text)
                for attr, text, key in cells))
        head = [("file", 0, ""), ("I/O paradigms", 0, "opt"), ("read", 1, ""),
                ("written", 1, ""), ("reads", 1, ""), ("writes", 1, ""), ("flushes", 1, "opt"),
                ("opens", 1, "opt"), ("seeks", 1, "opt"), ("failed", 1, ""), ("time", 1, ""),
                ("regions doing its I/O", 0, "opt")]
        ths = "".join('<th data-numeric="%d"%s>%s</th>' % (
            num, ' class="%s"' % cls if cls else "", esc(h)) for h, num, cls in head)
        more = ""
        if len(files) > IO_FILE_ROWS:
            more = '<p class="hint">The %d files with the most bytes of %d.</p>' % (
                IO_FILE_ROWS, len(files))
        parts.append('<h3>Files</h3><p class="hint">Time: from each operation\'s begin to '
                     'its end; the module files the interpreter imports are one row.</p>'
                     '<div class="table-box"><table id="io-files" class="sortable"><thead>'
                     '<tr>%s</tr></thead><tbody>%s</tbody></table></div>%s'
                     % (ths, "\n".join(rows), more))

    def table(title, rows, label):
        body = []
        for r in rows:
            rid = index.of_tree.get(r["region"].id) if r["region"] is not None else None
            body.append('<tr%s><td class="name">%s</td><td>%s</td><td>%s</td><td>%s</td>'
                        '<td>%s</td></tr>' % (
                            ' data-rid="%d"' % rid if rid is not None else "", esc(r["name"]),
                            format_count(r["calls"]), esc(format_seconds(r["time"])),
                            nbytes(r["bytes_read"]), nbytes(r["bytes_written"])))
        return ('<div class="top"><h3>%s</h3><table class="plain"><thead><tr><th>%s</th>'
                '<th>calls</th><th>time</th><th>read</th><th>written</th></tr></thead>'
                '<tbody>%s</tbody></table></div>' % (esc(title), esc(label), "".join(body)))
    parts.append('<div class="tops">%s%s</div>' % (
        table("I/O functions", summary["functions"], "function"),
        table("Regions calling them", summary["callers"], "region")))
    parts.append("</section>")
    return "".join(parts)


def page(title, body, data, mode):
    """The whole document. `mode` picks the entry point of report.js."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width\">"
            "<title>%s</title><style>%s</style></head>\n<body data-mode=\"%s\">\n%s\n"
            "<div id=\"js-errors\" hidden></div>\n"
            "<script type=\"application/json\" id=\"report-data\">%s</script>\n"
            "<script>%s</script>\n</body></html>\n" % (
                esc(title), css(), mode, body,
                json_for_script(data),
                _script_safe(js_assets())))


SOURCE_FILE_LIMIT = 300 * 1000     # bytes of one embedded source file
SOURCE_TOTAL_LIMIT = 2 * 1000 * 1000  # bytes of all embedded source files
_LIBRARY = re.compile(r"/(?:site|dist)-packages/|/lib/python\d+(?:\.\d+)?/|^<")


def is_program_file(path):
    """A Python file of the measured program itself: not of an interpreter's standard
    library nor of an installed package."""
    return bool(path) and os.path.isabs(path) and path.endswith(".py") and \
        not _LIBRARY.search(path) and os.path.isfile(path)


def source_data(tree, limit=SOURCE_TOTAL_LIMIT):
    """The source of the program's own files that have functions in the call tree, the
    files with the most inclusive time first, within the size limits: {"files":
    [{"file", "text"}], "left_out": [(file, reason)]}."""
    weight = {}
    for st in tree.flat():
        if is_program_file(st.region.file):
            weight[st.region.file] = weight.get(st.region.file, 0.0) + st.incl
    files, left_out, used = [], [], 0
    for path in sorted(weight, key=lambda f: (-weight[f], f)):
        try:
            size = os.path.getsize(path)
            if size > SOURCE_FILE_LIMIT:
                left_out.append((path, "larger than %d kB" % (SOURCE_FILE_LIMIT // 1000)))
                continue
            if used + size > limit:
                left_out.append((path, "over the report's source limit"))
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError as error:
            left_out.append((path, error.strerror or str(error)))
            continue
        used += size
        files.append({"file": path, "text": text})
    return {"files": files, "left_out": left_out}


def line_data(exp):
    """The line-level profiles (lines.json), summed over all locations, for the source
    view's heat column: {file: {line: [hits, seconds]}}; {} without line profiles."""
    from scorep.report import lines
    try:
        profiles = lines.find(exp.directory)
    except ReportError as error:  # the rest of the report still helps
        sys.stderr.write("scorep-report: warning: no line profiles in the report: %s\n" % error)
        return {}
    out = {}
    for function in profiles.functions_of() if profiles else ():
        per_file = out.setdefault(function.file, {})
        for line, (hits, seconds) in function.lines.items():
            old = per_file.get(str(line), [0, 0.0])
            per_file[str(line)] = [old[0] + hits, old[1] + seconds]
    return out


def has_mpi(exp, tree, mpi):
    return bool(mpi["p2p"] or mpi["collectives"] or mpi.get("bytes_sent") or
                mpi.get("volumes", {}).get("columns") or
                any(r.kind == "mpi" for r in tree.regions if r.id in
                    {n.region.id for n in tree.nodes}))


def sampling_note(sampling, total):
    """The header's words for a sampled experiment (in place of the call count)."""
    text = sampling.describe()
    if sampling.idle is not None:
        idle = sum(sampling.idle)
        text += "; CPU time, idle apart: %s (%.1f%% of the wall time)" % (
            format_seconds(idle), 100.0 * idle / (total + idle) if total + idle else 0.0)
    return text


def report_data(exp, top=15, embed_source=True, layout="report",
                source_limit=SOURCE_TOTAL_LIMIT):
    """(data, body HTML) of the report of an experiment whose scan (if it has a trace) was
    made with the timeline options; `layout` is one of LAYOUTS."""
    tree = exp.tree
    total = tree.total_time()
    index = RegionIndex(tree)
    balance, lb = balance_data(tree)
    flame = flame_data(tree, index)
    if getattr(tree, "imports_folded", False):
        # The flame graph's "importlib" switch: the call tree as recorded (the folded
        # tree's regions include all of its regions, so one index serves both).
        flame["recorded"] = flame_data(exp.recorded_tree, index)
    timeline = timeline_data(exp, index)
    mpi = mpi_data(exp, tree)
    show_mpi = has_mpi(exp, tree, mpi)
    io_section = io_section_html(exp, tree, total, index)
    data = {
        "title": exp.program,
        "experiment": exp.path,
        "source": tree.source,
        "total_s": total,
        "regions": index.entries,
        "locations": [{"name": l.name, "rank": tree.ranks[l.rank].name} for l in tree.locations],
        "flame": flame,
        "timeline": timeline,
        "balance": balance,
        "mpi": mpi if show_mpi else None,
        "config": config_data(exp),
        "sources": source_data(tree, source_limit) if embed_source else {"files": [], "left_out": [],
                                                           "off": True},
        "lines": line_data(exp),
    }
    missing_timeline = ""
    if timeline is None:
        missing_timeline = ('<p class="missing">No timeline: %s.</p>' % (
            "the trace could not be read" if exp.trace_error else
            "this experiment has no trace (run with SCOREP_ENABLE_TRACING=true)"))
    generated = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    body = body_html({
        "title": "" if layout == "inline" else
        "<h1>scorep report: %s</h1>" % esc(exp.program),
        "path": esc(exp.path), "ranks": len(tree.ranks),
        "threads": len(tree.locations), "total": esc(format_seconds(total)),
        "calls": format_count(tree.total_visits()) + " calls" if tree.sampling is None
        else esc(sampling_note(tree.sampling, total)), "source": tree.source,
        "generated": generated, "facts": facts_html(exp),
        "tops": summary_html(tree, total, top, index),
        "table": region_table_html(tree, total, lb, index),
        "missing_timeline": missing_timeline,
        "io_section": io_section,
    }, layout, show_mpi, timeline is not None)
    return data, body


# The report's sections, each with its navigation label; a layout is an order of them.
SECTIONS = {
    "summary": ("Summary", """<section id="summary"><h2>Summary</h2>%(facts)s%(tops)s</section>"""),
    "flame": ("Flame graph", """<section id="flame"><h2>Flame graph</h2>
<div class="controls"><label><input type="checkbox" id="flame-icicle"> icicle</label>
<label title="merge a function's recursive calls into its outermost call"><input
type="checkbox" id="flame-fold"> fold recursion</label>
<label title="Python's import system as recorded (importlib's frames) instead of one 'import NAME' frame per imported module" hidden><input
type="checkbox" id="flame-imports"> importlib's frames</label>
<select id="flame-location"></select>
<select id="flame-metric" title="what the frames' widths show" hidden></select>
<input id="flame-search" type="search" placeholder="highlight functions containing...">
<button id="flame-reset">reset zoom</button>
<span class="hint">click a frame: zoom in and show its callers and callees; width =
inclusive time</span></div>
<div id="flame-scope" class="scope" hidden></div>
<div id="flame-details" class="details">&nbsp;</div><div id="flame-chart"></div></section>"""),
    "sandwich": ("Callers &amp; callees", """<section id="sandwich"><h2>Callers and callees</h2><div id="sandwich-body">
<p class="hint">Select a function (click a row of a table, a frame of the flame graph or a
call in the timeline) to see who calls it and what it calls.</p></div></section>"""),
    "regions": ("Regions", """<section id="regions"><h2>Regions</h2>
<div class="controls"><input id="region-filter" type="search" placeholder="filter regions...">
<select id="table-metric" title="a recorded metric's columns" hidden></select>
<span class="hint">click a column to sort, a row to select the function</span></div>
%(table)s</section>"""),
    "timeline": ("Timeline", """<section id="timeline"><h2>Timeline</h2>%(missing_timeline)s
<div class="controls" id="timeline-controls"><button id="tl-zoom-in" title="zoom in (W)">+</button>
<button id="tl-zoom-out" title="zoom out (S)">&minus;</button><button id="tl-reset">reset</button>
<button id="tl-expand">expand all</button><button id="tl-collapse">collapse all</button>
<input id="tl-search" type="search" placeholder="highlight a function...">
<span class="hint">W/S: zoom &middot; A/D: pan &middot; wheel: zoom &middot; drag: pan &middot;
shift+drag or drag on the time axis: select a range &middot; click a call: select its
function &middot; double-click: zoom to it &middot; click a lane's name: fold it</span></div>
<div id="timeline-info" class="details">&nbsp;</div>
<div id="timeline-box" tabindex="0"><canvas id="timeline-canvas"></canvas>
<div id="timeline-spacer"></div></div>
<div id="range-panel" hidden></div></section>"""),
    "balance": ("Load balance", """<section id="balance"><h2>Load balance</h2><div id="balance-info"></div>
<div id="balance-box"><canvas id="balance-canvas"></canvas></div>
<div id="balance-table"></div></section>"""),
    "mpi": ("MPI", """<section id="mpi"><h2>MPI</h2><div id="mpi-body"></div></section>"""),
    "io": ("I/O", """%(io_section)s"""),
    "source": ("Source", """<section id="source"><h2>Source</h2><div id="source-body"><p class="hint">Select a function
to see its source.</p></div></section>"""),
    "config": ("Configuration", """<section id="config"><h2>Configuration</h2><div id="config-body"></div></section>"""),
}
# The standalone report; the compact one that notebooks show inline (scorep.jupyter) puts
# what a cell's author looks at first on top: the flame graph, the top regions and, when
# the cell was traced, its timeline.
LAYOUTS = {
    "report": ("summary", "flame", "sandwich", "regions", "timeline", "balance", "mpi", "io",
               "source", "config"),
    "inline": ("flame", "summary", "timeline", "sandwich", "regions", "balance", "mpi", "io",
               "source", "config"),
}

HEADER = """
<header>%(title)s<p class="sub">%(path)s &middot; %(ranks)d process(es), %(threads)d thread(s) &middot;
%(total)s of thread time &middot; %(calls)s &middot; call tree from the %(source)s
&middot; written %(generated)s</p></header>"""


def body_html(values, layout="report", show_mpi=False, has_timeline=True):
    """The page body: header, navigation and the sections in the layout's order (MPI only
    where there was MPI, I/O where I/O was recorded; inline, a cell without a trace has its
    timeline note last)."""
    order = [s for s in LAYOUTS[layout] if (s != "mpi" or show_mpi) and
             (s != "io" or values.get("io_section"))]
    if layout == "inline" and not has_timeline:
        order = [s for s in order if s != "timeline"] + ["timeline"]
    nav = "".join('<a href="#%s">%s</a>' % (s, SECTIONS[s][0]) for s in order)
    sections = "\n".join(SECTIONS[s][1] for s in order)
    return "%s\n<nav>%s</nav>\n<main>\n%s\n</main>" % (HEADER % values, nav,
                                                        sections % values)


def render_page(exp, top=15, embed_source=True, layout="report",
                source_limit=SOURCE_TOTAL_LIMIT):
    """The whole self-contained report page of an experiment (readers.Experiment) as a
    string, and its data; when the experiment has a trace, its scan should have been made
    with the timeline options (see open_experiment)."""
    data, body = report_data(exp, top, embed_source, layout, source_limit)
    return page("scorep report: %s" % exp.program, body, data, "report"), data


def open_experiment(path, timeline_calls=250000):
    """An experiment directory read for the report: with a trace, scanned once with the
    timeline options (the call tree comes from that scan when there is no profile). A trace
    that cannot be read next to a profile is noted in the report, not an error."""
    from scorep.report.readers import Experiment
    exp = Experiment(path)
    if exp.has_trace:
        try:
            exp.run_scan(timeline_limit=timeline_calls, density_bins=1024,
                         message_limit=20000, flush_limit=10000)
        except ReportError as error:
            if exp.tree_from_trace:
                raise
            exp.trace_error = str(error)
    return exp


def render_experiment(path, top=15, timeline_calls=250000, embed_source=True):
    """The report page of an experiment directory, ready to display or write."""
    return render_page(open_experiment(path, timeline_calls), top, embed_source)[0]


# ---- embedding into another page (notebook outputs) ----------------------------------

EMBED_HEIGHT = 640  # px of the frame the page is shown in; the reader can drag it taller

# Where an output's scripts do not run (an untrusted notebook: one executed by nbconvert or
# opened from elsewhere), this line says how to see the report; the script removes it.
UNTRUSTED_LINE = ("The interactive report needs this output's script, which the front end "
                  "did not run: trust the notebook (Notebook: File &gt; Trust Notebook; "
                  "JupyterLab: the command &ldquo;Trust Notebook&rdquo;; or "
                  "<code>jupyter trust NOTEBOOK.ipynb</code>) and open it again.")

_EMBED_SCRIPT = """(function () {
  var id = %(id)s, root = null, s = document.currentScript;
  if (s && s.parentNode && s.parentNode.id === id) root = s.parentNode;
  if (!root) root = document.getElementById(id);
  if (!root || root.getAttribute("data-scorep-live")) return;
  root.setAttribute("data-scorep-live", "1");
  var details = root.querySelector("details"), box = root.querySelector(".scorep-frame");
  var toggle = root.querySelector(".scorep-toggle"), note = root.querySelector(".scorep-untrusted");
  if (note) note.parentNode.removeChild(note);
  var packed = root.querySelector("script.scorep-page"), page = null, waiting = [];
  function say(text) {
    var p = document.createElement("p");
    p.style.cssText = "color:#8a5a00;font:12px system-ui,sans-serif;margin:2px 0";
    p.textContent = text;
    box.parentNode.insertBefore(p, box);
  }
  // The page is stored gzipped and base64-encoded (a third of its size): the browser's
  // DecompressionStream unpacks it when the reader first opens the result.
  function withPage(then) {
    if (page !== null) return then(page);
    waiting.push(then);
    if (waiting.length > 1) return;
    if (!packed || !window.DecompressionStream || !window.Response) {
      say("This browser cannot unpack the report (it has no DecompressionStream): " +
          "open the experiment with scorep-report.");
      return;
    }
    var raw = atob(packed.textContent.trim()), bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    new Response(stream).text().then(function (text) {
      page = text;
      var w = waiting; waiting = [];
      w.forEach(function (f) { f(page); });
    }, function (err) { say("The report could not be unpacked: " + err); });
  }
  function build() {
    if (box.firstChild) return;
    withPage(function (text) {
      if (box.firstChild) return;
      var frame = document.createElement("iframe");
      frame.setAttribute("title", %(title)s);
      frame.style.cssText = "width:100%%;height:100%%;border:0;display:block;background:#fafafa";
      frame.srcdoc = text;
      box.appendChild(frame);
      box.hidden = false;
      var fallback = root.querySelector(".scorep-static");
      if (fallback) fallback.hidden = true;
      var save = root.querySelector("a.scorep-save");
      if (save && window.Blob && window.URL && URL.createObjectURL) {
        save.href = URL.createObjectURL(new Blob([text], {type: "text/html"}));
        save.hidden = false;
      }
    });
  }
  function words() {
    if (!toggle) return;
    toggle.textContent = details.open ? "\u25be hide the report" : "\u25b8 open the report";
  }
  words();
  if (details.open) build();
  details.addEventListener("toggle", function () { words(); if (details.open) build(); });
})();"""

# The control that opens a result: its own marker and words, because some front ends'
# style sheets (Notebook 6) take the <summary> element's triangle away.
_TOGGLE = ('<span class="scorep-toggle" style="display:inline-block;margin-right:8px;'
           'padding:0 6px;border:1px solid #9bb0cc;border-radius:3px;color:#1a4d8f;'
           'font:12px system-ui,sans-serif;background:#f2f6fb">&#9656; report</span>')


def pack_page(page_html):
    """A page as the text an inline result stores: gzip (no timestamp, so that the same
    report gives the same output) in base64."""
    import gzip
    return base64.b64encode(gzip.compress(page_html.encode("utf-8"), 9, mtime=0)).decode(
        "ascii")


def unpack_page(text):
    """The page of pack_page's text."""
    import gzip
    return gzip.decompress(base64.b64decode(text)).decode("utf-8")


def embed(page_html, summary_html, extra_html="", static_html="", open_=False,
          title="scorep report", file_name="scorep-report.html", height=EMBED_HEIGHT):
    """A page of this module (render_page, the diff's render_html) as an HTML fragment for
    another document, e.g. a notebook's output: a one-line summary that opens to the page,
    shown in a frame of its own (so that its styles, ids and scripts meet nothing of the
    document around it). Plain HTML and inline JavaScript, nothing fetched: it works
    offline and in any renderer that runs an output's scripts (JupyterLab, Notebook,
    VS Code). The page is stored compressed (pack_page) and the frame made when the
    summary is first opened, so a notebook full of results stays small and quick to open;
    `static_html` is shown instead where scripts do not run (e.g. an untrusted notebook),
    with a line on how to see the report. `extra_html` goes above the frame.
    page_html=None: the summary, `extra_html` and `static_html` only (no report)."""
    import uuid
    uid = "scorep-" + uuid.uuid4().hex
    if page_html is None:
        return ('<div class="scorep-inline scorep-summary-only" id="%s"><details%s>'
                '<summary style="cursor:pointer;display:list-item">%s</summary>'
                '<div style="margin:4px 0 0">%s<div class="scorep-static">%s</div></div>'
                '</details></div>' % (uid, " open" if open_ else "", summary_html, extra_html,
                                      static_html))
    return (
        '<div class="scorep-inline" id="%(id)s">'
        '<details%(open)s><summary style="cursor:pointer;display:block;list-style:none">%(toggle)s'
        ' %(summary)s</summary>'
        '<div style="margin:4px 0 0">%(extra)s'
        '<div class="scorep-static">%(static)s</div>'
        '<div class="scorep-frame" hidden style="height:%(height)dpx;min-height:200px;'
        'resize:vertical;overflow:hidden;border:1px solid #d0d0d0;border-radius:4px"></div>'
        '<a class="scorep-save" hidden download="%(file)s" '
        'style="font-size:12px">save this report as a page</a></div></details>'
        '<p class="scorep-untrusted" style="color:#8a5a00;font:12px system-ui,sans-serif;'
        'margin:2px 0 4px">%(untrusted)s</p>'
        '<script type="application/gzip+base64" class="scorep-page">%(page)s</script>'
        '<script>%(script)s</script></div>' % {
            "id": uid, "open": " open" if open_ else "", "summary": summary_html,
            "toggle": _TOGGLE, "untrusted": UNTRUSTED_LINE,
            "extra": extra_html, "static": static_html, "height": height,
            "file": esc(file_name),
            "page": pack_page(page_html),
            "script": _EMBED_SCRIPT % {"id": json.dumps(uid), "title": json.dumps(title)},
        })


def write_report(exp, path, args):
    text, data = render_page(exp, args.top, not getattr(args, "no_source", False))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    tree = exp.tree
    timeline = data["timeline"]
    info = "%d regions, %d call paths" % (len(tree.flat()), len(tree.nodes))
    if timeline:
        info += ", timeline of %s calls" % format_count(timeline["kept"])
        if timeline["kept"] < timeline["calls"]:
            info += " (the longest of %s; --timeline-calls keeps more)" % format_count(
                timeline["calls"])
    nsrc = len(data["sources"]["files"])
    if nsrc:
        info += ", source of %d file(s)" % nsrc
    return info
