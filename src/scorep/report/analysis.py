"""What the reports compute from a call tree: the region ranking, the per-thread and
per-rank breakdown and the load balance across ranks (or threads of one process)."""

import math

__all__ = ["top_regions", "location_rows", "load_balance", "balance_stats"]

IDLE_FRACTION = 0.25  # a rank doing less than this share of the busiest rank's work is idle


def top_regions(tree, key="excl", n=15, include_measurement=True):
    """RegionStats with time or visits, the n largest by `key` (excl, incl, visits)."""
    flat = [s for s in tree.flat() if s.visits or s.excl > 0 or s.incl > 0]
    if not include_measurement:
        flat = [s for s in flat if s.region.kind != "measurement"]
    flat.sort(key=lambda s: (-getattr(s, key), s.region.name))
    return flat if n is None else flat[:n]


def location_rows(tree):
    """Per location: (location, time, calls, busiest region stat name, its excl)."""
    excl = tree.excl
    rows = []
    for loc in tree.locations:
        l = loc.index
        calls = sum(tree.visits[n.id][l] for n in tree.nodes if not n.params)
        by_region = {}
        for n in tree.nodes:
            v = excl[n.id][l]
            if v and n.region.kind != "measurement":
                by_region[n.region.name] = by_region.get(n.region.name, 0.0) + v
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


def load_balance(tree, top=20):
    """Load balance across the ranks, or across the threads when there is one rank.

    Returns a dict: "unit" ("rank" or "thread"), "names" (one per unit), "work" (the
    exclusive time of program code per unit), "mpi" (exclusive time in MPI), "other"
    (the measurement's root and artificial regions), "idle" (indexes of units doing less
    than IDLE_FRACTION of the busiest one's work), and "regions": the top regions by
    inclusive time with per-unit values and (min, mean, max, stddev)."""
    if len(tree.ranks) > 1:
        unit = "rank"
        names = [r.name for r in tree.ranks]
        groups = [r.locations for r in tree.ranks]
    else:
        unit = "thread"
        names = [l.name for l in tree.locations]
        groups = [[l.index] for l in tree.locations]
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
    regions = []
    for st in top_regions(tree, "incl", top):
        per_unit = [sum(st.per_loc_incl[l] for l in locs) for locs in groups]
        per_unit_excl = [sum(st.per_loc_excl[l] for l in locs) for locs in groups]
        regions.append({"stat": st, "incl": per_unit, "excl": per_unit_excl,
                        "stats": balance_stats(per_unit)})
    return {"unit": unit, "names": names, "work": work, "mpi": mpi, "other": other,
            "idle": idle, "regions": regions}
