"""Python pstats files (.prof): what `python -m pstats`, SnakeViz, gprof2dot -f pstats and
tuna open. The file is marshal.dump of {(file, line, name): (cc, nc, tt, ct, callers)},
callers {(file, line, name): (nc, cc, tt, ct)} (note the swapped first two), times in
seconds, ct counting recursion once (FORMATS.md section 3.4).

Threads and ranks are merged; `{rank}` in the output name writes one file per rank."""

import marshal

__all__ = ["stats_dict", "write"]


def _key(region):
    if region.file:
        return (region.file, region.line, region.name)
    # No source file (user regions, MPI functions, the program root): pstats' convention
    # for built-ins, shown as the bare name.
    return ("~", 0, region.name)


def stats_dict(tree, locations=None):
    cols = list(range(len(tree.locations))) if locations is None else list(locations)
    excl = tree.excl
    stats = {}
    callers = {}

    def entry(key):
        e = stats.get(key)
        if e is None:
            e = stats[key] = [0, 0, 0.0, 0.0]
            callers[key] = {}
        return e

    for node in tree.nodes:
        key = _key(node.region)
        e = entry(key)
        tt = sum(excl[node.id][l] for l in cols)
        e[2] += tt
        if node.params:
            continue  # a parameter split: its time is the region's, its visits are not calls
        nc = sum(tree.visits[node.id][l] for l in cols)
        ct = sum(tree.incl[node.id][l] for l in cols) if not node.recursive else 0.0
        cc = nc if not node.recursive else 0
        e[0] += cc
        e[1] += nc
        e[3] += ct
        parent = node.parent
        if parent is None:
            continue
        edge = callers[key].setdefault(_key(parent.region), [0, 0, 0.0, 0.0])
        edge[0] += nc
        edge[1] += cc
        edge[2] += sum(excl[node.id][l] for l in cols) + sum(
            excl[c.id][l] for c in node.children if c.params for l in cols)
        edge[3] += sum(tree.incl[node.id][l] for l in cols)
    out = {}
    for key, (cc, nc, tt, ct) in stats.items():
        if nc == 0 and tt == 0.0:
            continue  # never ran on these locations
        out[key] = (cc, nc, tt, ct, {k: tuple(v) for k, v in callers[key].items()})
    return out


def write(tree, path, locations=None):
    stats = stats_dict(tree, locations)
    if not stats:
        # pstats.Stats raises on an empty dict: say why instead of writing it.
        from scorep.report.model import ReportError
        raise ReportError("%s: nothing was recorded on these locations" % path)
    with open(path, "wb") as f:
        marshal.dump(stats, f, 4)  # version 4: readable by every Python 3
    return len(stats)
