"""Flame graph stacks (.collapsed: flamegraph.pl, inferno, speedscope's import) and
speedscope's own format (.speedscope.json).

Both come from the call-path profile: a stack per call path, weighted by its exclusive
time. That is exact for flame graphs (which merge identical stacks anyway) and tiny
whatever the run length; the time order lives in the trace exports (.json)."""

import json

from scorep.report.model import ReportError

__all__ = ["write_collapsed", "write_speedscope", "speedscope_document", "estimated_size"]


def estimated_size(tree, fmt, locations=None):
    """(bytes, deepest call path) of a .collapsed or .speedscope.json export, in one pass
    over the call paths: each line or sample repeats its whole path, so a deep recursion
    makes these files grow with the square of the depth (50 000 deep: gigabytes)."""
    cols = list(range(len(tree.locations))) if locations is None else list(locations)
    excl = tree.excl
    path_bytes, depth = {}, {}
    total, deepest = 0, 0
    for node in tree.preorder():
        parent = node.parent
        own = len(_frame_name(node).encode("utf-8")) + 1 if fmt == "collapsed" else 7
        path_bytes[node.id] = (path_bytes[parent.id] if parent is not None else 0) + own
        depth[node.id] = (depth[parent.id] if parent is not None else 0) + 1
        weighted = sum(1 for l in cols if excl[node.id][l] > 0)
        if weighted:
            total += (path_bytes[node.id] + 12) * (1 if fmt == "collapsed" else weighted)
            deepest = max(deepest, depth[node.id])
    return total, deepest


def _frame_name(node):
    # ';' separates frames and a newline ends the line in the collapsed format.
    return node.label.replace(";", ",").replace("\n", " ").replace("\r", " ")


def write_collapsed(tree, path, locations=None):
    """One line per call path with exclusive time: `root;...;leaf <ns>`. Values are
    integer nanoseconds of exclusive time summed over the locations."""
    cols = list(range(len(tree.locations))) if locations is None else list(locations)
    excl = tree.excl
    names = {}
    lines = 0
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for node in tree.preorder():
            parent = node.parent
            names[node.id] = (names[parent.id] + ";" if parent is not None else "") + \
                _frame_name(node)
            value = int(round(sum(excl[node.id][l] for l in cols) * 1e9))
            if value > 0:
                f.write("%s %d\n" % (names[node.id], value))
                lines += 1
    return lines


def speedscope_document(tree, name, locations=None):
    """A speedscope file: shared frames, one "sampled" profile per location whose samples
    are call paths (root first) weighted by exclusive ns."""
    cols = list(range(len(tree.locations))) if locations is None else list(locations)
    excl = tree.excl
    frames = []
    frame_of = {}

    def frame(node):
        key = (node.region.id, tuple(node.params))
        f = frame_of.get(key)
        if f is None:
            f = frame_of[key] = len(frames)
            entry = {"name": node.label}
            if node.region.file:
                entry["file"] = node.region.file
                if node.region.line:
                    entry["line"] = node.region.line
            frames.append(entry)
        return f

    stacks = {}
    for node in tree.preorder():
        parent = node.parent
        stacks[node.id] = (stacks[parent.id] if parent is not None else []) + [frame(node)]
    multi_rank = len({tree.locations[l].rank for l in cols}) > 1
    profiles = []
    for l in cols:
        samples, weights = [], []
        for node in tree.preorder():
            w = int(round(excl[node.id][l] * 1e9))
            if w > 0:  # speedscope drops zero weights and throws on negative ones
                samples.append(stacks[node.id])
                weights.append(w)
        if not samples:
            continue
        loc = tree.locations[l]
        label = loc.name
        if multi_rank:
            label = "%s / %s" % (tree.ranks[loc.rank].name, loc.name)
        profiles.append({"type": "sampled", "name": label, "unit": "nanoseconds",
                         "startValue": 0, "endValue": sum(weights), "samples": samples,
                         "weights": weights})
    if not profiles:
        raise ReportError("nothing was recorded on these locations: no speedscope profile")
    return {"$schema": "https://www.speedscope.app/file-format-schema.json",
            "version": "0.0.1", "name": name, "activeProfileIndex": 0,
            "exporter": "scorep-report", "shared": {"frames": frames}, "profiles": profiles}


def write_speedscope(tree, path, name, locations=None):
    doc = speedscope_document(tree, name, locations)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, separators=(",", ":"), ensure_ascii=False)
    return len(doc["profiles"])
