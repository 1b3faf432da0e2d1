"""Comparing two runs: regions matched by name, call paths by their chain of names, so
runs of the same program compare even when ids differ. Times are summed over threads and
ranks. The HTML adds a differential flame graph: frame widths are run B's inclusive time,
colors its change against A (red: slower, blue: faster).

The ranking puts the function that got slower first, not its callers: a function's
change is the change of its inclusive time minus what its callees found in both runs
changed (their own rows show that), so a change is counted once, where it happened.
Functions that exist in only one run are listed under their caller (their time is the
caller's change). Changes below NOISE_RUN of the run and NOISE_OWN of the function's own
time are marked "~": run-to-run noise more than a finding."""

import os

from scorep.report.html import esc, page
from scorep.report.model import format_count, format_seconds
from scorep.report.terminal import Style, table_row, terminal_width, wrap

__all__ = ["compare", "render_terminal", "render_html", "write_html"]


PROGRAM = "(program)"
NOISE_RUN = 0.01   # of the longer run's total
NOISE_OWN = 0.05   # of the function's inclusive time in the run where it is longer


def _is_program(region):
    # The program root is named after the script; two runs of a program compare under
    # one root even when the script was renamed.
    return region.kind == "measurement" and region.role == "artificial"


def _name(region, root=False):
    return PROGRAM if root and _is_program(region) else region.display


def _flat(tree):
    return {PROGRAM if _is_program(s.region) else s.region.display: s for s in tree.flat()}


def _paths(tree):
    """{(function name, ...): inclusive seconds} over all locations, per call path; a
    parameter's node is part of its call (its time is in the call's already)."""
    out = {}
    keys = {}
    for node in tree.preorder():
        parent_key = keys[node.parent.id] if node.parent is not None else ()
        if node.params:
            keys[node.id] = parent_key
            continue
        key = parent_key + (_name(node.region, node.parent is None),)
        keys[node.id] = key
        out[key] = out.get(key, 0.0) + sum(tree.incl[node.id])
    return out


def noisy(delta, run, base):
    return abs(delta) < NOISE_RUN * run and abs(delta) < max(NOISE_OWN * base, 0.0) or \
        abs(delta) < 1e-6


def compare(a, b):
    ta, tb = a.tree, b.tree
    fa, fb = _flat(ta), _flat(tb)
    pa, pb = _paths(ta), _paths(tb)
    rows = {}
    for name in set(fa) | set(fb):
        sa, sb = fa.get(name), fb.get(name)
        rows[name] = {
            "name": name,
            "kind": (sb or sa).region.kind,
            "a_excl": sa.excl if sa else 0.0, "b_excl": sb.excl if sb else 0.0,
            "a_incl": sa.incl if sa else 0.0, "b_incl": sb.incl if sb else 0.0,
            "a_visits": sa.visits if sa else 0, "b_visits": sb.visits if sb else 0,
            "only": "a" if sb is None else "b" if sa is None else "",
            "own": 0.0, "grouped": [], "under": None,
        }
    both = set(pa) & set(pb)
    children = {}
    for key in set(pa) | set(pb):
        if len(key) > 1:
            children.setdefault(key[:-1], []).append(key)
    for key in set(pa) | set(pb):
        if key not in both:
            continue
        d = pb[key] - pa[key]
        d -= sum(pb[c] - pa[c] for c in children.get(key, ()) if c in both)
        rows[key[-1]]["own"] += d
    # Functions of one run only: under the function that calls them in that run (the
    # nearest caller that both runs have), their time is that caller's change.
    for r in rows.values():
        if not r["only"]:
            continue
        paths = pb if r["only"] == "b" else pa
        callers = {}
        for key, t in paths.items():
            if key[-1] != r["name"] or len(key) < 2:
                continue
            up = len(key) - 2
            while up > 0 and rows[key[up]]["only"]:
                up -= 1
            callers[key[up]] = callers.get(key[up], 0.0) + t
        if callers:
            r["under"] = max(callers, key=callers.get)
            rows[r["under"]]["grouped"].append(r)
    for r in rows.values():
        r["d_excl"] = r["b_excl"] - r["a_excl"]
        r["d_incl"] = r["b_incl"] - r["a_incl"]
        r["d_visits"] = r["b_visits"] - r["a_visits"]
        r["grouped"].sort(key=lambda g: (-max(g["a_incl"], g["b_incl"]), g["name"]))
    run = max(ta.total_time(), tb.total_time())
    for r in rows.values():
        r["noise"] = noisy(r["own"], run, max(r["a_incl"], r["b_incl"]))
    ranked = sorted((r for r in rows.values() if r["under"] is None),
                    key=lambda r: (-abs(r["own"]), -abs(r["d_incl"]), r["name"]))
    return {"a": a, "b": b, "a_total": ta.total_time(), "b_total": tb.total_time(),
            "a_calls": ta.total_visits(), "b_calls": tb.total_visits(),
            "rows": ranked, "all_rows": rows, "paths_a": pa, "paths_b": pb}


def _signed_time(s):
    return ("+" if s > 0 else "") + format_seconds(s) if s else "0"


def _signed_count(n):
    return ("+" if n > 0 else "") + format_count(n) if n else "0"


def _rel(a, b):
    if a == 0:
        return "new" if b else "-"
    return "%+.0f%%" % (100.0 * (b - a) / a)


def render_terminal(result, top=20, width=None, color=False):
    width = width or terminal_width()
    style = Style(color)
    a, b = result["a"], result["b"]
    out = [style.title("scorep diff")]
    for tag, exp, total, calls in (("A", a, result["a_total"], result["a_calls"]),
                                   ("B", b, result["b_total"], result["b_calls"])):
        out.extend(wrap("%s  %s  (%s, %s of thread time, %s calls)" % (
            tag, exp.path, exp.program, format_seconds(total), format_count(calls)),
            width, "  ", "     "))
    ta, tb = result["a_total"], result["b_total"]
    if ta > 0 and tb > 0:
        out.extend(wrap("B takes %.2fx the time of A (%s)" % (tb / ta, _signed_time(tb - ta)),
                        width))
    out.append("")
    out.extend(style.title(line) for line in wrap(
        "Regions by change of inclusive time, each change counted once: where it happened, "
        "not again in every caller", width, "", "  "))
    out.extend(style.dim(line) for line in wrap(
        "change: inclusive time B - A less the callees' own changes; ~: small, within "
        "run-to-run noise; functions of one run only are listed under their caller", width,
        "  ", "  "))
    head = "  %10s %8s %8s %6s" % ("change", "A incl", "B incl", "incl")
    out.append(style.dim(head + "  region"))
    for r in result["rows"][:top]:
        mark = "~" if r["noise"] else ""
        cells = (mark + _signed_time(r["own"]), format_seconds(r["a_incl"]),
                 format_seconds(r["b_incl"]), _rel(r["a_incl"], r["b_incl"]))
        fixed = "  %10s %8s %8s %6s" % cells
        change = style.dim if r["noise"] else style.up if r["own"] > 0 else style.down
        styled = "  " + change("%10s" % cells[0]) + fixed[12:]
        name = r["name"] + {"a": "  (only in A)", "b": "  (only in B)"}.get(r["only"], "")
        out.extend(table_row(fixed, name, width, styled, style.name(name)))
        for g in r["grouped"]:
            sign = "+" if g["only"] == "b" else "-"
            gname = "%s %s  (only in %s)" % (sign, g["name"], g["only"].upper())
            gfixed = "  %10s %8s %8s %6s" % ("", format_seconds(g["a_incl"]) if g["a_incl"] else "-",
                                             format_seconds(g["b_incl"]) if g["b_incl"] else "-",
                                             "new" if g["only"] == "b" else "gone")
            out.extend(table_row(gfixed, "  " + gname, width))
    changed = [r for r in result["all_rows"].values() if r["d_visits"]]
    changed.sort(key=lambda r: (-abs(r["d_visits"]), r["name"]))
    out.append("")
    if changed:
        out.append(style.title("Regions whose visits changed (%d)" % len(changed)))
        out.append(style.dim("  %11s %11s %11s  %s" % ("A visits", "B visits", "change",
                                                       "region")))
        for r in changed[:top]:
            fixed = "  %11s %11s %11s" % (format_count(r["a_visits"]), format_count(r["b_visits"]),
                                          _signed_count(r["d_visits"]))
            out.extend(table_row(fixed, r["name"], width, None, style.name(r["name"])))
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


def render_html(result, top=20):
    """The differential report page as a string (write_html writes it; the Jupyter
    kernel's %scorep_diff shows it inline)."""
    a, b = result["a"], result["b"]
    rows = []

    def row(r, grouped=False):
        cls = "delta-up" if r["own"] > 0 else "delta-down" if r["own"] < 0 else ""
        name = esc(r["name"]) + {"a": " <em>(only in A)</em>",
                                 "b": " <em>(only in B)</em>"}.get(r["only"], "")
        own = ("~" if r["noise"] else "") + _signed_time(r["own"])
        cells = [
            ('class="name"', ("&nbsp;&nbsp;&#8627; " if grouped else "") + name, r["name"]),
            ('class="%s"' % ("noise" if r["noise"] else cls),
             "" if grouped else esc(own), r["own"]),
            ("", format_seconds(r["a_incl"]), r["a_incl"]),
            ("", format_seconds(r["b_incl"]), r["b_incl"]),
            ('class="%s"' % cls, _signed_time(r["d_incl"]), r["d_incl"]),
            ("", _rel(r["a_incl"], r["b_incl"]),
             (r["d_incl"] / r["a_incl"]) if r["a_incl"] else (1e9 if r["b_incl"] else 0)),
            ("", format_seconds(r["a_excl"]), r["a_excl"]),
            ("", format_seconds(r["b_excl"]), r["b_excl"]),
            ("", format_count(r["a_visits"]), r["a_visits"]),
            ("", format_count(r["b_visits"]), r["b_visits"]),
            ("", _signed_count(r["d_visits"]), r["d_visits"]),
        ]
        return "<tr%s>%s</tr>" % (' class="grouped"' if grouped else "", "".join(
            '<td %s data-sort="%s">%s</td>' % (attr, esc(key), text)
            for attr, text, key in cells))

    for r in result["rows"]:
        rows.append(row(r))
        rows.extend(row(g, True) for g in r["grouped"])
    head = ["region", "change", "A incl", "B incl", "incl change", "incl change %",
            "A excl", "B excl", "A visits", "B visits", "visits change"]
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
<section id="regions"><h2>Regions (by change, each counted once: where it happened)</h2>
<div class="controls"><input id="region-filter" type="search" placeholder="filter regions...">
<span class="hint">change: inclusive time B &minus; A less the callees' own changes;
~: small, within run-to-run noise; &#8627;: functions of one run only, under their caller;
click a column to sort</span></div>
<table id="region-table" class="sortable"><thead><tr>%(ths)s</tr></thead><tbody>%(rows)s</tbody></table>
</section></main>""" % {
        "pa": esc(a.program), "pb": esc(b.program), "a": esc(a.path), "b": esc(b.path),
        "at": esc(format_seconds(ta)), "bt": esc(format_seconds(tb)),
        "ac": format_count(result["a_calls"]), "bc": format_count(result["b_calls"]),
        "ratio": "%.2fx" % (tb / ta) if ta > 0 else "-", "ths": ths, "rows": "\n".join(rows),
    }
    data = {"flame": _diff_flame(result), "a": a.path, "b": b.path}
    return page("scorep diff: %s vs %s" % (os.path.basename(a.path), os.path.basename(b.path)),
                body, data, "diff")


def write_html(result, path, top=20):
    text = render_html(result, top)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
