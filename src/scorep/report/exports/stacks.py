"""Flame graph stacks (.collapsed: flamegraph.pl, inferno, speedscope's import) and
speedscope's own format (.speedscope.json).

.collapsed comes from the call-path profile: a stack per call path, weighted by its
exclusive time. That is exact for flame graphs (which merge identical stacks anyway) and
tiny whatever the run length.

.speedscope.json is, when the experiment has a trace, an "evented" profile per thread:
every call opened and closed in time order, so that speedscope's Time Order view shows
the run as it happened (--min-duration/--max-depth leave out short or deep calls, as for
the trace exports). Without a trace it is a "sampled" profile per thread from the call
paths, weighted by exclusive time (Left Heavy and Sandwich views; no time order)."""

import json

from scorep.report.model import ReportError

__all__ = ["write_collapsed", "write_speedscope", "speedscope_document", "estimated_size",
           "write_evented", "EVENTED_BYTES_PER_CALL"]

# {"type":"O","frame":123,"at":123456789}, and its "C": about 80 bytes per call.
EVENTED_BYTES_PER_CALL = 80


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


def _frame_entry(region):
    entry = {"name": region.display}
    if region.file:
        entry["file"] = region.file
        if region.line:
            entry["line"] = region.line
    return entry


def write_evented(calls, path, name, locations=None):
    """A speedscope file from a trace's calls (trace_calls.TraceCalls): one "evented"
    profile per location, in nanoseconds since the start of the trace. Streamed: the
    events are written as they come (millions of them), the shared frames last (JSON
    objects have no order). Returns the number of profiles."""
    scan = calls.scan
    cols = list(range(len(scan.locations))) if locations is None else list(locations)
    frames, frame_of = [], {}
    multi_rank = len({scan.locations[l].rank for l in cols}) > 1
    profiles = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"$schema":"https://www.speedscope.app/file-format-schema.json",'
                '"version":"0.0.1","name":%s,"activeProfileIndex":0,'
                '"exporter":"scorep-report","profiles":[' % json.dumps(name))
        for l in cols:
            if calls.offsets[l] == calls.offsets[l + 1]:
                continue
            loc = scan.locations[l]
            label = "%s / %s" % (scan.ranks[loc.rank].name, loc.name) if multi_rank else loc.name
            f.write('%s{"type":"evented","name":%s,"unit":"nanoseconds","events":['
                    % ("," if profiles else "", json.dumps(label)))
            first = last = None
            chunk, written = [], False
            for t, is_open, r in calls.events(l):
                fr = frame_of.get(r)
                if fr is None:
                    fr = frame_of[r] = len(frames)
                    frames.append(_frame_entry(scan.regions[r]))
                chunk.append('{"type":"%s","frame":%d,"at":%d}' % ("O" if is_open else "C", fr, t))
                if first is None:
                    first = t
                last = t
                if len(chunk) >= 65536:
                    f.write(("," if written else "") + ",".join(chunk))
                    chunk, written = [], True
            if chunk:
                f.write(("," if written else "") + ",".join(chunk))
            f.write('],"startValue":%d,"endValue":%d}' % (first, last))
            profiles += 1
        if not profiles:
            raise ReportError("no call was recorded on these locations (or all were shorter "
                              "than --min-duration): no speedscope profile")
        f.write('],"shared":{"frames":%s}}' % json.dumps(frames, separators=(",", ":"),
                                                         ensure_ascii=False))
    return profiles


def write_speedscope(tree, path, name, locations=None, calls=None):
    """Evented profiles from the trace's calls when given, sampled ones from the tree
    otherwise. Returns (profiles written, "evented" or "sampled")."""
    if calls is not None:
        return write_evented(calls, path, name, locations), "evented"
    doc = speedscope_document(tree, name, locations)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, separators=(",", ":"), ensure_ascii=False)
    return len(doc["profiles"]), doc["profiles"][0]["type"]
