"""Comparing two runs: regions matched by name, call paths by their chain of names, so
runs of the same program compare even when ids differ. Times are summed over threads and
ranks. The HTML adds a differential flame graph: frame widths are run B's inclusive time,
colors its change against A (red: slower, blue: faster)."""

import os

from scorep.report.html import esc, page
from scorep.report.model import format_count, format_seconds
from scorep.report.terminal import fit, terminal_width

__all__ = ["compare", "render_terminal", "write_html"]


PROGRAM = "(program)"


def _is_program(region):
    # The program root is named after the script; two runs of a program compare under
    # one root even when the script was renamed.
    return region.kind == "measurement" and region.role == "artificial"


def _flat(tree):
    return {PROGRAM if _is_program(s.region) else s.region.name: s for s in tree.flat()}


def _paths(tree):
    """{(label, ...): inclusive seconds} over all locations."""
    out = {}
    keys = {}
    for node in tree.preorder():
        label = PROGRAM if node.parent is None and _is_program(node.region) else node.label
        key = (keys[node.parent.id] if node.parent is not None else ()) + (label,)
        keys[node.id] = key
        out[key] = out.get(key, 0.0) + sum(tree.incl[node.id])
    return out


def compare(a, b):
    ta, tb = a.tree, b.tree
    fa, fb = _flat(ta), _flat(tb)
    rows = []
    for name in set(fa) | set(fb):
        sa, sb = fa.get(name), fb.get(name)
        rows.append({
            "name": name,
            "kind": (sb or sa).region.kind,
            "a_excl": sa.excl if sa else 0.0, "b_excl": sb.excl if sb else 0.0,
            "a_incl": sa.incl if sa else 0.0, "b_incl": sb.incl if sb else 0.0,
            "a_visits": sa.visits if sa else 0, "b_visits": sb.visits if sb else 0,
            "only": "a" if sb is None else "b" if sa is None else "",
        })
    for r in rows:
        r["d_excl"] = r["b_excl"] - r["a_excl"]
        r["d_incl"] = r["b_incl"] - r["a_incl"]
        r["d_visits"] = r["b_visits"] - r["a_visits"]
    rows.sort(key=lambda r: (-abs(r["d_excl"]), -abs(r["d_incl"]), r["name"]))
    return {"a": a, "b": b, "a_total": ta.total_time(), "b_total": tb.total_time(),
            "a_calls": ta.total_visits(), "b_calls": tb.total_visits(),
            "rows": rows, "paths_a": _paths(ta), "paths_b": _paths(tb)}


def _signed_time(s):
    return ("+" if s > 0 else "") + format_seconds(s) if s else "0"


def _signed_count(n):
    return ("+" if n > 0 else "") + format_count(n) if n else "0"


def _rel(a, b):
    if a == 0:
        return "new" if b else "-"
    return "%+.0f%%" % (100.0 * (b - a) / a)


def render_terminal(result, top=20, width=None):
    width = width or terminal_width()
    a, b = result["a"], result["b"]
    out = ["scorep diff", "  A  %s  (%s, %s of thread time, %s calls)" % (
        a.path, a.program, format_seconds(result["a_total"]), format_count(result["a_calls"])),
        "  B  %s  (%s, %s of thread time, %s calls)" % (
        b.path, b.program, format_seconds(result["b_total"]), format_count(result["b_calls"]))]
    ta, tb = result["a_total"], result["b_total"]
    if ta > 0 and tb > 0:
        out.append("  B takes %.2fx the time of A (%s)" % (tb / ta, _signed_time(tb - ta)))
    out.append("")
    name_w = max(20, width - 86)
    head = "  %10s %10s %11s %6s %10s %10s %12s %12s  %s" % (
        "A excl", "B excl", "change", "", "A incl", "B incl", "A visits", "B visits", "region")
    out.append("Regions whose exclusive time changed most")
    out.append(head)
    for r in result["rows"][:top]:
        out.append("  %10s %10s %11s %6s %10s %10s %12s %12s  %s%s" % (
            format_seconds(r["a_excl"]), format_seconds(r["b_excl"]),
            _signed_time(r["d_excl"]), _rel(r["a_excl"], r["b_excl"]),
            format_seconds(r["a_incl"]), format_seconds(r["b_incl"]),
            format_count(r["a_visits"]), format_count(r["b_visits"]),
            fit(r["name"], name_w), {"a": "  (only in A)", "b": "  (only in B)"}.get(r["only"], "")))
    changed = [r for r in result["rows"] if r["d_visits"]]
    changed.sort(key=lambda r: (-abs(r["d_visits"]), r["name"]))
    out.append("")
    if changed:
        out.append("Regions whose visits changed (%d)" % len(changed))
        out.append("  %12s %12s %12s  %s" % ("A visits", "B visits", "change", "region"))
        for r in changed[:top]:
            out.append("  %12s %12s %12s  %s" % (
                format_count(r["a_visits"]), format_count(r["b_visits"]),
                _signed_count(r["d_visits"]), fit(r["name"], max(20, width - 44))))
    else:
        out.append("Visits: every region was visited equally often in both runs")
    return "\n".join(out) + "\n"


def _diff_flame(result):
    """Union of both runs' call paths, preorder; value = B's inclusive ns, delta = B - A."""
    pa, pb = result["paths_a"], result["paths_b"]
    keys = sorted(set(pa) | set(pb))  # a prefix sorts before its extensions: preorder
    index = {}
    labels, label_of = [], {}
    parent, label, incl, delta, kind = [], [], [], [], []
    for key in keys:
        li = label_of.get(key[-1])
        if li is None:
            li = label_of[key[-1]] = len(labels)
            labels.append(key[-1])
        index[key] = len(parent)
        parent.append(index[key[:-1]] if len(key) > 1 else -1)
        label.append(li)
        vb = pb.get(key, 0.0)
        incl.append(int(round(vb * 1e9)))
        delta.append(int(round((vb - pa.get(key, 0.0)) * 1e9)))
        kind.append(0)
    return {"labels": labels, "parent": parent, "label": label, "incl": incl,
            "delta": delta, "kind": kind, "visits": None}


def write_html(result, path, top=20):
    a, b = result["a"], result["b"]
    rows = []
    for r in result["rows"]:
        cls = "delta-up" if r["d_excl"] > 0 else "delta-down" if r["d_excl"] < 0 else ""
        cells = [
            ('class="name"', esc(r["name"]) + {"a": " <em>(only in A)</em>",
                                               "b": " <em>(only in B)</em>"}.get(r["only"], ""),
             r["name"]),
            ("", format_seconds(r["a_excl"]), r["a_excl"]),
            ("", format_seconds(r["b_excl"]), r["b_excl"]),
            ('class="%s"' % cls, _signed_time(r["d_excl"]), r["d_excl"]),
            ('class="%s"' % cls, _rel(r["a_excl"], r["b_excl"]),
             (r["d_excl"] / r["a_excl"]) if r["a_excl"] else (1e9 if r["b_excl"] else 0)),
            ("", format_seconds(r["a_incl"]), r["a_incl"]),
            ("", format_seconds(r["b_incl"]), r["b_incl"]),
            ("", _signed_time(r["d_incl"]), r["d_incl"]),
            ("", format_count(r["a_visits"]), r["a_visits"]),
            ("", format_count(r["b_visits"]), r["b_visits"]),
            ("", _signed_count(r["d_visits"]), r["d_visits"]),
        ]
        rows.append("<tr>%s</tr>" % "".join('<td %s data-sort="%s">%s</td>' % (
            attr, esc(key), text) for attr, text, key in cells))
    head = ["region", "A excl", "B excl", "change", "change %", "A incl", "B incl",
            "incl change", "A visits", "B visits", "visits change"]
    ths = "".join('<th data-numeric="%d">%s</th>' % (i > 0, esc(h)) for i, h in enumerate(head))
    ta, tb = result["a_total"], result["b_total"]
    body = """
<header><h1>scorep diff: %(pa)s vs %(pb)s</h1>
<p class="sub">A: %(a)s (%(at)s, %(ac)s calls) &middot; B: %(b)s (%(bt)s, %(bc)s calls)
&middot; B takes %(ratio)s the time of A</p></header>
<nav><a href="#flame">Differential flame graph</a><a href="#regions">Regions</a></nav>
<main>
<section id="flame"><h2>Differential flame graph</h2>
<div class="controls"><label><input type="checkbox" id="flame-icicle"> icicle (root on top)</label>
<input id="flame-search" type="search" placeholder="highlight regions containing...">
<button id="flame-reset">reset zoom</button>
<span class="hint">widths: B's inclusive time; red: slower in B than in A, blue: faster</span></div>
<div id="flame-details" class="details">&nbsp;</div><div id="flame-chart"></div></section>
<section id="regions"><h2>Regions (by change of exclusive time)</h2>
<div class="controls"><input id="region-filter" type="search" placeholder="filter regions...">
<span class="hint">click a column to sort</span></div>
<table id="region-table" class="sortable"><thead><tr>%(ths)s</tr></thead><tbody>%(rows)s</tbody></table>
</section></main>""" % {
        "pa": esc(a.program), "pb": esc(b.program), "a": esc(a.path), "b": esc(b.path),
        "at": esc(format_seconds(ta)), "bt": esc(format_seconds(tb)),
        "ac": format_count(result["a_calls"]), "bc": format_count(result["b_calls"]),
        "ratio": "%.2fx" % (tb / ta) if ta > 0 else "-", "ths": ths, "rows": "\n".join(rows),
    }
    data = {"flame": _diff_flame(result), "a": a.path, "b": b.path}
    with open(path, "w", encoding="utf-8") as f:
        f.write(page("scorep diff: %s vs %s" % (os.path.basename(a.path),
                                                 os.path.basename(b.path)), body, data, "diff"))
