"""Call graphs in the style of gprof2dot: a box per function with its inclusive and
exclusive share and its calls, an arrow per caller -> callee with the share of time spent
through it, both colored from blue (cold) to red (hot). `.dot` is Graphviz source;
`.png`/`.svg` run Graphviz `dot` on it.

As in gprof2dot, functions below 0.5% of the total inclusive time and edges below 0.1% are
left out (--node-threshold / --edge-threshold)."""

import colorsys
import os
import shutil
import subprocess
import tempfile

from scorep.report.model import ReportError, format_count

__all__ = ["graph", "write_dot", "render"]

# gprof2dot's TEMPERATURE_COLORMAP: (hue, saturation, lightness) from dark blue to red.
_MIN_HSL = (2.0 / 3.0, 0.80, 0.25)
_MAX_HSL = (0.0, 1.0, 0.5)


def color(weight):
    w = min(max(weight, 0.0), 1.0)
    h, s, l = (a + w * (b - a) for a, b in zip(_MIN_HSL, _MAX_HSL))
    r, g, b = colorsys.hls_to_rgb(h, l, s)
    return "#%02x%02x%02x" % (int(r * 255 + 0.5), int(g * 255 + 0.5), int(b * 255 + 0.5))


def graph(tree, locations=None):
    """(functions, edges, total): functions {region id: [incl, excl, calls, region]},
    edges {(caller id, callee id): [incl through the edge, calls]}, total seconds."""
    cols = list(range(len(tree.locations))) if locations is None else list(locations)
    excl = tree.excl
    funcs = {}
    edges = {}
    for node in tree.nodes:
        rid = node.region.id
        f = funcs.setdefault(rid, [0.0, 0.0, 0, node.region])
        f[1] += sum(excl[node.id][l] for l in cols)
        if node.params:
            continue
        calls = sum(tree.visits[node.id][l] for l in cols)
        incl = sum(tree.incl[node.id][l] for l in cols)
        f[2] += calls
        if not node.recursive:
            f[0] += incl
        if node.parent is not None:
            e = edges.setdefault((node.parent.region.id, rid), [0.0, 0])
            # A recursive call's time is inside its outer call's already: counting it
            # again would give an edge more than 100%.
            if not node.recursive:
                e[0] += incl
            e[1] += calls
    total = tree.total_time(cols)
    return funcs, edges, total


def _quote(text):
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def dot_source(tree, title, node_threshold=0.005, edge_threshold=0.001, locations=None):
    funcs, edges, total = graph(tree, locations)
    if total <= 0:
        raise ReportError("no time was recorded: nothing to draw")
    keep = {rid for rid, (incl, excl, calls, region) in funcs.items()
            if incl / total >= node_threshold}
    lines = ["digraph {",
             "  graph [fontname=Arial, nodesep=0.125, ranksep=0.25, label=%s, labelloc=t];"
             % _quote(title),
             "  node [fontcolor=white, fontname=Arial, height=0, shape=box, style=filled, "
             "width=0];",
             "  edge [fontname=Arial];"]
    for rid in sorted(keep, key=lambda r: -funcs[r][0]):
        incl, excl, calls, region = funcs[rid]
        w = incl / total
        label = "%s\\n%.2f%%\\n(%.2f%%)\\n%s\xd7" % (
            _quote(region.display)[1:-1], 100 * w, 100 * excl / total, format_count(calls))
        lines.append('  %d [color="%s", fontcolor="%s", fontsize="%.2f", label="%s"];' % (
            rid, color(w), "#ffffff", max(8.0, min(14.0, 8 + 6 * w ** 0.5)), label))
    for (a, b), (incl, calls) in sorted(edges.items()):
        if a not in keep or b not in keep:
            continue
        w = incl / total
        if w < edge_threshold:
            continue
        lines.append('  %d -> %d [arrowsize="%.2f", color="%s", fontcolor="%s", '
                     'label="%.2f%%\\n%s\xd7", labeldistance="%.2f", penwidth="%.2f"];' % (
                         a, b, max(0.35, w ** 0.5), color(w), color(w), 100 * w,
                         format_count(calls), max(0.5, 4 * w), max(0.5, 4.0 * w)))
    lines.append("}")
    return "\n".join(lines) + "\n", len(keep)


def write_dot(tree, path, title, node_threshold=0.005, edge_threshold=0.001, locations=None):
    text, n = dot_source(tree, title, node_threshold, edge_threshold, locations)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return n


def render(tree, path, fmt, title, node_threshold=0.005, edge_threshold=0.001,
           locations=None):
    """Runs Graphviz dot: fmt is "png" or "svg"."""
    dot = shutil.which("dot")
    if dot is None:
        raise ReportError("%s needs Graphviz 'dot' (Debian package graphviz); -o %s.dot "
                          "writes the graph source without it"
                          % (path, os.path.splitext(path)[0]))
    text, n = dot_source(tree, title, node_threshold, edge_threshold, locations)
    with tempfile.NamedTemporaryFile("w", suffix=".dot", delete=False,
                                     encoding="utf-8") as f:
        f.write(text)
        src = f.name
    try:
        out = subprocess.run([dot, "-T" + fmt, "-o", path, src], capture_output=True,
                             text=True, timeout=300)
    finally:
        os.unlink(src)
    if out.returncode != 0:
        raise ReportError("Graphviz dot failed on the call graph: %s"
                          % " ".join(out.stderr.split())[:300])
    return n
