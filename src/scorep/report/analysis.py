"""What the reports compute from a call tree: the region ranking, the per-thread and
per-rank breakdown, the load balance across ranks (or threads of one process) and
cProfile's view of the calls (per function and per caller -> callee pair).

These are the one set of aggregates of the project: the terminal and HTML reports, the
end-of-run summary (scorep._summary) and the Jupyter kernel's table of top regions
(scorep.jupyter.magics) all rank regions with ``top_regions`` on the tree that
``experiment_tree`` reads, so they agree on every number (a parameter's node is a split
of its region's visit, never a visit of its own)."""

import math

__all__ = ["experiment_tree", "top_regions", "location_rows", "load_balance",
           "balance_stats", "units", "call_stats", "callers_and_callees"]

IDLE_FRACTION = 0.25  # a rank doing less than this share of the busiest rank's work is idle


def experiment_tree(path, base_name=None, source="profile"):
    """The call tree of an experiment directory (or a .cubex file). The profile is
    <base_name>.cubex: the base name given, else the SCOREP_PROFILING_BASE_NAME the run
    wrote into scorep.cfg, else profile.cubex. Raises ReportError when there is none."""
    from scorep.report.readers import Experiment
    return Experiment(path, source, base_name=base_name).tree


def top_regions(tree, key="excl", n=15, include_measurement=True):
    """RegionStats with time or visits, the n largest by `key` (excl, incl, visits).
    Without include_measurement the program root and the tool's own regions are left
    out (what the summary and the kernel list: the program's own regions)."""
    flat = [s for s in tree.flat() if s.visits or s.excl > 0 or s.incl > 0]
    if not include_measurement:
        flat = [s for s in flat if s.region.kind != "measurement"]
    flat.sort(key=lambda s: (-getattr(s, key), s.region.display))
    return flat if n is None else flat[:n]


def location_rows(tree):
    """Per location: (location, time, calls, busiest region's display name, its excl)."""
    excl = tree.excl
    rows = []
    for loc in tree.locations:
        l = loc.index
        calls = sum(tree.visits[n.id][l] for n in tree.nodes if not n.params)
        by_region = {}
        for n in tree.nodes:
            v = excl[n.id][l]
            if v and n.region.kind != "measurement":
                name = n.region.display
                by_region[name] = by_region.get(name, 0.0) + v
        busiest = max(by_region.items(), key=lambda kv: kv[1]) if by_region else ("-", 0.0)
        rows.append((loc, tree.location_time(l), calls, busiest[0], busiest[1]))
    return rows


def balance_stats(values):
    """(min, mean, max, population stddev) of a list of numbers."""
    if not values:
        return (0.0, 0.0, 0.0, 0.0)
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / len(values)
    return (min(values), mean, max(values), math.sqrt(var))


def units(tree):
    """("rank", names, location groups) across the ranks, or ("thread", ...) across the
    threads when there is one rank."""
    if len(tree.ranks) > 1:
        return "rank", [r.name for r in tree.ranks], [r.locations for r in tree.ranks]
    return "thread", [l.name for l in tree.locations], [[l.index] for l in tree.locations]


def region_balance(stat, groups):
    """Per unit inclusive and exclusive time of a region, the units that run it and the
    (min, mean, max, stddev) over those units only: a function that runs in one thread of
    eight is not imbalanced, it is where it is (its coverage says so)."""
    incl = [sum(stat.per_loc_incl[l] for l in locs) for locs in groups]
    excl = [sum(stat.per_loc_excl[l] for l in locs) for locs in groups]
    ran = [u for u, locs in enumerate(groups)
           if any(stat.per_loc_visits[l] for l in locs) or incl[u] > 0]
    return {"stat": stat, "incl": incl, "excl": excl, "ran": ran,
            "stats": balance_stats([incl[u] for u in ran])}


def load_balance(tree, top=20):
    """Load balance across the ranks, or across the threads when there is one rank.

    Returns a dict: "unit" ("rank" or "thread"), "names" (one per unit), "work" (the
    exclusive time of program code per unit), "mpi" (exclusive time in MPI), "other"
    (the measurement's root and artificial regions), "idle" (indexes of units doing less
    than IDLE_FRACTION of the busiest one's work), and "regions": the top regions by
    inclusive time with per-unit values, the units that run them ("ran") and
    (min, mean, max, stddev) over those units."""
    unit, names, groups = units(tree)
    excl = tree.excl
    work = [0.0] * len(groups)
    mpi = [0.0] * len(groups)
    other = [0.0] * len(groups)
    for node in tree.nodes:
        kind = node.region.kind
        target = work if kind == "code" else mpi if kind == "mpi" else other
        row = excl[node.id]
        for u, locs in enumerate(groups):
            target[u] += sum(row[l] for l in locs)
    busiest = max(work) if work else 0.0
    idle = [u for u, w in enumerate(work)
            if len(groups) > 1 and busiest > 0 and w < IDLE_FRACTION * busiest]
    regions = [region_balance(st, groups) for st in top_regions(tree, "incl", top)]
    return {"unit": unit, "names": names, "work": work, "mpi": mpi, "other": other,
            "idle": idle, "regions": regions}


# ---- cProfile's view -------------------------------------------------------------------

def call_stats(tree, locations=None):
    """The call tree as cProfile counts it, exactly (CPython Modules/_lsprof.c):

    funcs {region id: [cc, nc, tt, ct]}: nc calls, cc of them primitive (no call of the
    same function further out on the stack), tt exclusive seconds, ct inclusive seconds
    counted once per outermost activation;
    edges {(caller id, callee id): [nc, cc, tt, ct]}: the same per caller -> callee pair,
    where a call is primitive unless the same pair is active further out, and ct counts
    the outermost activation of the pair.

    A parameter's node is part of its region's call: its time is that call's, its visits
    are not calls, its children are the call's callees."""
    cols = list(range(len(tree.locations))) if locations is None else list(locations)
    excl = tree.excl
    visits, incl = tree.visits, tree.incl
    funcs = {}
    edges = {}
    active = {}
    active_pair = {}
    # (node, caller region id or None, the enclosing call's (caller, region) for
    # parameter nodes, leaving?)
    stack = [(root, None, None, False) for root in reversed(tree.roots)]
    while stack:
        node, caller, call, leaving = stack.pop()
        rid = node.region.id
        if leaving:
            active[rid] -= 1
            if caller is not None:
                active_pair[(caller, rid)] -= 1
            continue
        tt = sum(excl[node.id][l] for l in cols)
        if node.params and call is not None:
            # Time of the enclosing call, on its function and on its pair.
            call_caller, call_rid = call
            funcs[call_rid][2] += tt
            if call_caller is not None:
                edges[(call_caller, call_rid)][2] += tt
            for child in reversed(node.children):
                stack.append((child, call_rid, call, False))
            continue
        nc = sum(visits[node.id][l] for l in cols)
        ct = sum(incl[node.id][l] for l in cols)
        f = funcs.get(rid)
        if f is None:
            f = funcs[rid] = [0, 0, 0.0, 0.0]
        f[1] += nc
        f[2] += tt
        if not active.get(rid):
            f[0] += nc
            f[3] += ct
        if caller is not None:
            pair = (caller, rid)
            e = edges.get(pair)
            if e is None:
                e = edges[pair] = [0, 0, 0.0, 0.0]
            e[0] += nc
            e[2] += tt
            if not active_pair.get(pair):
                e[1] += nc
                e[3] += ct
            active_pair[pair] = active_pair.get(pair, 0) + 1
        active[rid] = active.get(rid, 0) + 1
        stack.append((node, caller, None, True))
        for child in reversed(node.children):
            stack.append((child, rid, (caller, rid), False))
    return funcs, edges


def callers_and_callees(tree, region_id, locations=None, stats=None):
    """What the sandwich view shows for a function: its totals (calls, primitive calls,
    exclusive, inclusive seconds), its callers and its callees, each
    [(region, calls, exclusive s, inclusive s)] heaviest first (cProfile's pairs)."""
    funcs, edges = stats or call_stats(tree, locations)
    regions = {n.region.id: n.region for n in tree.nodes}
    callers = [(regions[a], e[0], e[2], e[3]) for (a, b), e in edges.items() if b == region_id]
    callees = [(regions[b], e[0], e[2], e[3]) for (a, b), e in edges.items() if a == region_id]
    callers.sort(key=lambda c: (-c[3], c[0].display))
    callees.sort(key=lambda c: (-c[3], c[0].display))
    cc, nc, tt, ct = funcs.get(region_id, (0, 0, 0.0, 0.0))
    return {"calls": nc, "primitive": cc, "excl": tt, "incl": ct,
            "callers": callers, "callees": callees}
