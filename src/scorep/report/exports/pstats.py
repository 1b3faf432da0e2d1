"""Python pstats files (.prof): what `python -m pstats`, SnakeViz, gprof2dot -f pstats and
tuna open. The file is marshal.dump of {(file, line, name): (cc, nc, tt, ct, callers)},
callers {(file, line, name): (nc, cc, tt, ct)} (note the swapped first two), times in
seconds, with cProfile's semantics: ct counts each outermost activation once, cc counts
the calls made while the function (for callers: the caller -> callee pair) was not
already active (FORMATS.md section 3.4).

Threads and ranks are merged; `{rank}` in the output name writes one file per rank."""

import marshal

from scorep.report.analysis import call_stats

__all__ = ["stats_dict", "write"]


def _key(region):
    if region.paradigm == "compiler" and region.canonical.startswith("<"):
        # A C function, spelled as cProfile spells it ("<built-in method time.sleep>",
        # "<method 'dot' of 'numpy.ndarray' objects>"), which pstats shows in braces.
        return ("~", 0, region.canonical)
    if region.file:
        return (region.file, region.line, region.name)
    # No source file (user regions, MPI functions, the program root): pstats' convention
    # for built-ins, shown as the bare name.
    return ("~", 0, region.name)


def stats_dict(tree, locations=None):
    """cProfile's numbers (analysis.call_stats): recursion counted as cProfile counts it,
    so that cumulative times never exceed the run and gprof2dot's ratios stay <= 1."""
    funcs, edges = call_stats(tree, locations)
    regions = tree.regions_that_ran()
    callers = {rid: {} for rid in funcs}
    for (caller, callee), (nc, cc, tt, ct) in edges.items():
        key = _key(regions[caller])
        prev = callers[callee].get(key)
        if prev is not None:  # two regions with one key (a name without a file)
            nc, cc, tt, ct = nc + prev[0], cc + prev[1], tt + prev[2], ct + prev[3]
        callers[callee][key] = (nc, cc, tt, ct)
    out = {}
    for rid, (cc, nc, tt, ct) in funcs.items():
        if nc == 0 and tt == 0.0:
            continue  # never ran on these locations
        key = _key(regions[rid])
        if key in out:
            pcc, pnc, ptt, pct, pcallers = out[key]
            for k, v in callers[rid].items():
                w = pcallers.get(k)
                pcallers[k] = v if w is None else tuple(a + b for a, b in zip(v, w))
            out[key] = (pcc + cc, pnc + nc, ptt + tt, pct + ct, pcallers)
        else:
            out[key] = (cc, nc, tt, ct, dict(callers[rid]))
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
