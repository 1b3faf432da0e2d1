"""What the reports compute from a call tree: the region ranking, the per-thread and
per-rank breakdown, the load balance across ranks (or threads of one process) and
cProfile's view of the calls (per function and per caller -> callee pair).

These are the one set of aggregates of the project: the terminal and HTML reports, the
end-of-run summary (scorep.measure.summary) and the Jupyter kernel's table of top regions
(scorep.jupyter.magics) all rank regions with ``top_regions`` on the tree that
``experiment_tree`` reads, so they agree on every number (a parameter's node is a split
of its region's visit, never a visit of its own)."""

import math

from scorep.report.imports import (IMPORT_PREFIX, SYSTEM_NAME, is_program_region,
                                   program_directories)
from scorep.report.model import IO_ROLES, mpi_time_of, wait_state_table

__all__ = ["experiment_tree", "top_regions", "location_rows", "load_balance",
           "balance_stats", "units", "call_stats", "callers_and_callees", "io_summary",
           "wait_states", "WAIT_STATE_METRICS", "WAIT_STATE_TEXT", "wait_state_table",
           "wait_state_values", "summarize_wait_states", "mpi_time_of"]

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
    _lo, own_mean, own_max, _sd = balance_stats([excl[u] for u in ran])
    return {"stat": stat, "incl": incl, "excl": excl, "ran": ran,
            "stats": balance_stats([incl[u] for u in ran]),
            "imbalance": own_max - own_mean}


def load_balance(tree, top=20):
    """Load balance across the ranks, or across the threads when there is one rank.

    Returns a dict: "unit" ("rank" or "thread"), "names" (one per unit), "work" (the
    exclusive time of program code per unit; a rank's is that of its busiest thread),
    "mpi" (exclusive time in MPI), "other" (the measurement's root and artificial
    regions; both of that thread), "idle" (indexes of units doing less
    than IDLE_FRACTION of the busiest one's work), and "regions": per region its per-unit
    inclusive and exclusive times, the units that run it ("ran"), (min, mean, max,
    stddev) of the inclusive times over those units and its "imbalance" (max - mean of its
    exclusive time over them), and "own": how many of the regions are the program's own.

    The program's own functions (imports.is_program_region) come first, the most
    imbalanced first: an imbalance shows in the exclusive time of the function where it
    is, while its callers only inherit it in their inclusive time. Then the other regions
    by inclusive time (the program root, MPI, imports, libraries)."""
    unit, names, groups = units(tree)
    excl = tree.excl
    nloc = len(tree.locations)
    per_loc = {"work": [0.0] * nloc, "mpi": [0.0] * nloc, "other": [0.0] * nloc}
    for node in tree.nodes:
        kind = node.region.kind
        target = per_loc["work" if kind in ("code", "io") else "mpi" if kind == "mpi"
                         else "other"]
        for l, v in enumerate(excl[node.id]):
            target[l] += v
    # A process counts as its busiest thread: a Python process's threads take turns on
    # the GIL, and the helper threads of a pool or an executor spend their time waiting
    # for it; summed, their waits made the parent of a Pool look busier than all of its
    # workers together (which then showed as idle).
    work, mpi, other = [], [], []
    for locs in groups:
        main = max(locs, key=lambda l: (per_loc["work"][l], per_loc["mpi"][l]), default=None)
        for out, key in ((work, "work"), (mpi, "mpi"), (other, "other")):
            out.append(per_loc[key][main] if main is not None else 0.0)
    busiest = max(work) if work else 0.0
    idle = [u for u, w in enumerate(work)
            if len(groups) > 1 and busiest > 0 and w < IDLE_FRACTION * busiest]
    dirs = program_directories(tree)
    own, others = [], []
    for st in top_regions(tree, "incl", None):
        (own if is_program_region(st.region, dirs) else others).append(st)
    own = sorted((region_balance(st, groups) for st in own),
                 key=lambda r: -r["imbalance"])
    others = [region_balance(st, groups) for st in others[:top]]
    regions = (own + others)[:top]
    return {"unit": unit, "names": names, "work": work, "mpi": mpi, "other": other,
            "idle": idle, "regions": regions, "own": min(len(own), len(regions))}


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
    are not calls, its children are the call's callees. A COLLAPSE node with the calls it
    holds (CallTree.folded) is those calls, not a function of its own: the functions and
    pairs active on its call path are the ones further out."""
    cols = list(range(len(tree.locations))) if locations is None else list(locations)
    colset = set(cols)
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
        folded = tree.folded_at(node)
        if folded is not None:
            _add_folded_calls(funcs, edges, active, active_pair, folded, colset)
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
        f = _add_calls(funcs, edges, active_pair, caller, rid, nc, tt, nc, ct)
        if not active.get(rid):
            f[0] += nc
            f[3] += ct
        if caller is not None:
            active_pair[(caller, rid)] = active_pair.get((caller, rid), 0) + 1
        active[rid] = active.get(rid, 0) + 1
        stack.append((node, caller, None, True))
        for child in reversed(node.children):
            stack.append((child, rid, (caller, rid), False))
    return funcs, edges


def _add_calls(funcs, edges, active_pair, caller, callee, calls, time, primitive, once):
    """Counts `calls` of `callee` taking `time` into its row of funcs ([primitive calls,
    calls, total time, cumulative time]) and, with a caller, into the edge's row ([calls,
    primitive calls, total time, cumulative time]; primitive and cumulative only where the
    pair is not active already, recursion counted once). Returns the callee's row."""
    f = funcs.get(callee)
    if f is None:
        f = funcs[callee] = [0, 0, 0.0, 0.0]
    f[1] += calls
    f[2] += time
    if caller is not None:
        pair = (caller, callee)
        e = edges.get(pair)
        if e is None:
            e = edges[pair] = [0, 0, 0.0, 0.0]
        e[0] += calls
        e[2] += time
        if not active_pair.get(pair):
            e[1] += primitive
            e[3] += once
    return f


def _add_folded_calls(funcs, edges, active, active_pair, folded, cols):
    functions, pairs = folded
    for l, caller, callee, calls, primitive, _, once, excl in pairs:
        if l not in cols:
            continue
        _add_calls(funcs, edges, active_pair, caller, callee, calls, excl, primitive, once)
    for l, rid, primitive, once, _, _ in functions:
        if l in cols and not active.get(rid):
            f = funcs[rid]
            f[0] += primitive
            f[3] += once


def callers_and_callees(tree, region_id, locations=None, stats=None):
    """What the sandwich view shows for a function: its totals (calls, primitive calls,
    exclusive, inclusive seconds), its callers and its callees, each
    [(region, calls, exclusive s, inclusive s)] heaviest first (cProfile's pairs)."""
    funcs, edges = stats or call_stats(tree, locations)
    regions = tree.regions_that_ran()
    callers = [(regions[a], e[0], e[2], e[3]) for (a, b), e in edges.items() if b == region_id]
    callees = [(regions[b], e[0], e[2], e[3]) for (a, b), e in edges.items() if a == region_id]
    callers.sort(key=lambda c: (-c[3], c[0].display))
    callees.sort(key=lambda c: (-c[3], c[0].display))
    cc, nc, tt, ct = funcs.get(region_id, (0, 0, 0.0, 0.0))
    return {"calls": nc, "primitive": cc, "excl": tt, "incl": ct,
            "callers": callers, "callees": callees}


# ---- I/O -------------------------------------------------------------------------------

# Regions through which the interpreter reads the modules it imports.
_IMPORT_MODULES = ("importlib.", "importlib:", "zipimport.", "zipimport:", "<frozen importlib")


def _is_import_machinery(name):
    # The folded tree's import nodes (scorep.report.imports) read modules as well.
    return name.startswith(_IMPORT_MODULES + (IMPORT_PREFIX, SYSTEM_NAME))


def _io_row(name, region=None):
    return {"name": name, "region": region, "calls": 0, "time": 0.0, "bytes_read": 0,
            "bytes_written": 0}


def io_summary(tree, io=None, top=15):
    """What the run's I/O calls did (SCOREP_IO_POSIX), or None when it recorded none.

    From the call tree (profile or trace), whose I/O calls are regions of kind "io" (and
    the MPI-IO calls, MPI regions of role file I/O):
    "functions" (open64, write, fread, ...) and "callers" (the regions that called them),
    each a dict with calls, time (seconds inside the I/O calls), bytes_read and
    bytes_written (the profile's io_bytes metrics, else the trace's events), sorted by
    time; "totals" with calls, time, bytes, the share of the run and the number of
    functions and callers. From the trace (``io``: TraceScan.io()), "files": per file, or
    per handle without one (a standard stream): reads, writes, flushes, failed
    operations, bytes, the time from each operation's begin to its end, opens, closes,
    seeks, and its "callers" (region display names with bytes and operations), largest
    first; None without a trace. ``top`` caps each list (None: all); the totals count
    everything."""
    io_nodes = [n for n in tree.nodes if not n.params and (
        n.region.kind == "io" or (n.region.kind == "mpi" and n.region.role in IO_ROLES))]
    if not io_nodes and not io:
        return None
    excl = tree.excl
    functions, callers = {}, {}
    bytes_by_node = tree.io_bytes or {}
    for n in io_nodes:
        calls = sum(tree.visits[n.id])
        time = sum(excl[n.id])
        read, written = bytes_by_node.get(n.id, (0, 0))
        parent = n.parent
        while parent is not None and parent.params:
            parent = parent.parent
        caller = parent.region if parent is not None else None
        f = functions.setdefault(n.region.display, _io_row(n.region.display, n.region))
        c = callers.setdefault(caller.display if caller else "(top level)",
                               _io_row(caller.display if caller else "(top level)", caller))
        for row in (f, c):
            row["calls"] += calls
            row["time"] += time
            row["bytes_read"] += read
            row["bytes_written"] += written
    files = None
    if io:
        if tree.io_bytes is None:
            # A tree from the trace: the bytes come from the events.
            for _t, caller, function, ops, rd, wr, _ns in io["callers"]:
                if function is not None and function.display in functions:
                    functions[function.display]["bytes_read"] += rd
                    functions[function.display]["bytes_written"] += wr
                key = caller.display if caller else "(top level)"
                if key in callers:
                    callers[key]["bytes_read"] += rd
                    callers[key]["bytes_written"] += wr
        by_target = {}
        for t, caller, _function, ops, rd, wr, _ns in io["callers"]:
            key = caller.display if caller else "(top level)"
            entry = by_target.setdefault(t, {}).setdefault(key, [0, 0, 0])
            entry[0] += rd
            entry[1] += wr
            entry[2] += ops
        files = []
        imports = None
        for target in io["targets"]:
            row = dict(target)
            row["time"] = target["ns"] * 1e-9
            row["operations"] = target["reads"] + target["writes"] + target["flushes"]
            who = by_target.get(target["index"], {})
            row["callers"] = sorted(((name, r, w, ops) for name, (r, w, ops) in who.items()),
                                    key=lambda x: (-(x[1] + x[2]), -x[3], x[0]))
            if who and all(_is_import_machinery(name) for name in who):
                # The interpreter reading modules: one row for all of them, so that the
                # program's own files are not lost among hundreds of .pyc files.
                if imports is None:
                    imports = dict(row, kind="imports", name="", callers={}, index=-1,
                                   paradigms=list(row["paradigms"]), count=0)
                    for key in ("reads", "writes", "flushes", "failed", "bytes_read",
                                "bytes_written", "ns", "creates", "destroys", "seeks",
                                "duplicates", "time", "operations"):
                        imports[key] = 0
                imports["count"] += 1
                for key in ("reads", "writes", "flushes", "failed", "bytes_read",
                            "bytes_written", "ns", "creates", "destroys", "seeks",
                            "duplicates", "time", "operations"):
                    imports[key] += row[key]
                for name, r, w, ops in row["callers"]:
                    entry = imports["callers"].setdefault(name, [0, 0, 0])
                    entry[0] += r
                    entry[1] += w
                    entry[2] += ops
                continue
            files.append(row)
        if imports is not None:
            imports["name"] = "(%d module files read by Python's imports)" % imports["count"]
            imports["callers"] = sorted(((name, r, w, ops) for name, (r, w, ops)
                                         in imports["callers"].items()),
                                        key=lambda x: (-(x[1] + x[2]), -x[3], x[0]))
            files.append(imports)
        files.sort(key=lambda f: (-(f["bytes_read"] + f["bytes_written"]), -f["time"],
                                  -f["operations"], f["name"]))
    total_time = tree.total_time()
    totals = {
        "calls": sum(f["calls"] for f in functions.values()),
        "time": sum(f["time"] for f in functions.values()),
        "bytes_read": sum(f["bytes_read"] for f in functions.values()),
        "bytes_written": sum(f["bytes_written"] for f in functions.values()),
        "functions": len(functions),
        "mpi_io": any(n.region.kind == "mpi" for n in io_nodes),
        "callers": len(callers),
        "run_time": total_time,
    }
    if files is not None:
        totals["file_rows"] = len(files)
        totals["files"] = sum(1 for f in files if f["kind"] == "file") + \
            sum(f["count"] for f in files if f["kind"] == "imports")
        totals["failed"] = sum(f["failed"] for f in files)
        totals["unknown_calls"] = io["unknown_calls"]
        if not totals["bytes_read"] and not totals["bytes_written"]:
            totals["bytes_read"] = sum(f["bytes_read"] for f in files)
            totals["bytes_written"] = sum(f["bytes_written"] for f in files)

    def ranked(rows):
        rows = sorted(rows, key=lambda r: (-r["time"], -(r["bytes_read"] + r["bytes_written"]),
                                           r["name"]))
        return rows if top is None else rows[:top]
    if files is not None and top is not None:
        # Files whose operations failed are always listed.
        files = files[:top] + [f for f in files[top:] if f["failed"]]
    return {"functions": ranked(functions.values()), "callers": ranked(callers.values()),
            "files": files, "totals": totals}


# What the terminal report says of Scalasca's wait-state metrics (the ranks compute them at
# the end of a traced MPI run, core/waitstates.h, or scorep-report --wait-states replays a
# trace with the same engine): display name and the role of the waiting rank. Which metrics
# there are, their order and their tree come from the engine's table
# (scorep._reader.WAIT_STATE_METRICS); a metric not named here is shown by its name.
WAIT_STATE_TEXT = {
    "mpi_latesender": ("Late Sender", "waits in a receive for a message sent late"),
    "mpi_latesender_wo": ("Late Sender, Wrong Order",
                          "while an earlier message was waiting to be received"),
    "mpi_latereceiver": ("Late Receiver", "waits in a blocking send or MPI_Wait* for a late "
                         "receive"),
    "mpi_barrier_wait": ("Wait at Barrier", "waits in MPI_Barrier for the last rank"),
    "mpi_barrier_completion": ("Barrier Completion", "in MPI_Barrier after the first rank left"),
    "mpi_wait_nxn": ("Wait at N x N", "waits in an all-to-all collective for the last rank"),
    "mpi_nxn_completion": ("N x N Completion", "in an all-to-all after the first rank left"),
    "mpi_latebroadcast": ("Late Broadcast", "waits in Bcast/Scatter for a late root"),
    "mpi_earlyreduce": ("Early Reduce", "the root waits in Reduce/Gather for the first sender"),
    "mpi_earlyscan": ("Early Scan", "waits in Scan for the ranks before"),
    "mpi_init_completion": ("Initialization Completion", "in MPI_Init after the first rank left"),
    "mpi_finalize_wait": ("Wait at Finalize", "waits in MPI_Finalize for the last rank"),
    "mpi_rma_wait_at_fence": ("Wait at Fence", "waits in MPI_Win_fence for the last rank"),
    "mpi_rma_sync_late_post": ("Late Post", "an origin waits in MPI_Win_start/complete for a "
                               "target's late MPI_Win_post"),
    "mpi_rma_early_wait": ("Early Wait", "a target waits in MPI_Win_wait for the last "
                           "MPI_Win_complete"),
    # not waiting: where the time of the critical path went, and who caused the waiting
    "critical_path": ("Critical path", "time on the critical path of the run (not waiting)"),
    "critical_path_imbalance": ("Critical-path imbalance",
                                "critical-path time above the call path's average"),
    "delay_latesender": ("Late Sender delay", "caused Late Sender waiting: the late sender's "
                         "work before the send"),
    "delay_latereceiver": ("Late Receiver delay", "caused Late Receiver waiting: the late "
                           "receiver's work before it posted the receive"),
    "delay_barrier": ("Barrier delay", "caused Wait at Barrier: the last rank's work before"),
    "delay_n2n": ("N x N delay", "caused Wait at N x N: the last rank's work before"),
    "delay_12n": ("1-to-N delay", "caused Late Broadcast: the root's work before"),
    "delay_n21": ("N-to-1 delay", "caused Early Reduce: the first sender's work before"),
}
# Each delay cost's long-term partner, right after it: the waiting that the waiting it
# caused made others wait in turn (named from the short-term one and the pattern it caused).
_CAUSED = {"delay_latesender": "Late Sender", "delay_latereceiver": "Late Receiver",
           "delay_barrier": "barrier", "delay_n2n": "N x N", "delay_12n": "Late Broadcast",
           "delay_n21": "Early Reduce"}
WAIT_STATE_TEXT = dict(
    entry for name, text in WAIT_STATE_TEXT.items()
    for entry in [(name, text)] + ([(name + "_longterm", (
        text[0] + ", long-term",
        "waiting that the %s waiting it caused made others wait in turn" % _CAUSED[name]))]
        if name in _CAUSED else []))
# Kept for callers that list the patterns: (name, display, meaning) in the table's order.
WAIT_STATE_METRICS = [(name, display, meaning) for name, (display, meaning)
                      in WAIT_STATE_TEXT.items() if name != "mpi_latesender_wo"]


def _is_time(name, unit=None):
    """Whether a wait-state metric is a time (Scalasca's count metrics, unit "occ", count
    instances): by the profile's unit when known, else by Scalasca's names (*_count)."""
    if unit:
        return unit.lower() in ("sec", "s", "seconds")
    return not name.endswith("_count")


def _is_waiting(name):
    """Whether a metric counts into the total waiting time. Scalasca's waiting patterns are
    named mpi_*; completion times are time in the operation after the first rank left, not
    waiting for another; the critical path and the delay costs (critical_path, delay_*)
    say where time went or who caused the waiting, which the waiting already counts; counts
    are instances, not time."""
    return name.startswith("mpi_") and "completion" not in name and "count" not in name


def wait_state_values(profile):
    """{(metric, location group name, location name, call path): seconds} of a profile's
    wait-state metrics, each with its parts (Late Sender with its Wrong Order time, as the
    engine computes it and Cube shows a metric with its children); only values > 0."""
    names = {m.uniq_name for m in profile.metrics}
    table = [(n, parent) for n, parent in wait_state_table() if n in names]
    values = {n: profile.values(n, inclusive=False) for n, _ in table}
    children = {}
    for n, parent in table:
        if parent in values:
            children.setdefault(parent, []).append(n)

    def with_parts(n, cnode):
        row = list(values[n][cnode])
        for child in children.get(n, ()):
            row = [a + b for a, b in zip(row, with_parts(child, cnode))]
        return row

    out = {}
    for n, _ in table:
        for c in profile.cnodes:
            path = tuple(c.path())
            for loc, v in enumerate(with_parts(n, c.id)):
                if v > 0:
                    # two regions of one name (nested functions of one name in a module)
                    # give two call paths of the same names: their values add up
                    location = profile.locations[loc]
                    key = (n, location.group.name, location.name, path)
                    out[key] = out.get(key, 0.0) + v
    return out


def summarize_wait_states(values, mpi_time, table, display=None, units=None):
    """The terminal report's view of wait-state values ({(metric, group, location, path):
    seconds}, each metric with its parts): the MPI time and per top-level pattern with any
    waiting its name, display name, what it means, total seconds, share of the MPI time and
    the worst call path and location: (path names, location group name, seconds); the parts
    of a pattern (Wrong Order) as ``parts``. ``display``: {metric: display name} for metrics
    the report does not know (the profile's own names); ``units``: {metric: unit} (the
    counts, unit "occ", are left out)."""
    display = display or {}
    units = units or {}
    table = [(name, parent) for name, parent in table if _is_time(name, units.get(name))]
    totals, worst = {}, {}
    for (metric, group, _location, path), v in values.items():
        totals[metric] = totals.get(metric, 0.0) + v
        if v > worst.get(metric, (0.0,))[0]:
            worst[metric] = (v, list(path), group)
    rows, parts = [], []
    for name, parent in table:
        total = totals.get(name, 0.0)
        if total <= 0:
            continue
        text = WAIT_STATE_TEXT.get(name, (display.get(name, name), ""))
        seconds, path, group = worst[name]
        row = {"metric": name, "display": text[0], "meaning": text[1], "total": total,
               "share": total / mpi_time if mpi_time > 0 else 0.0, "worst_path": path,
               "worst_rank": group, "worst_seconds": seconds}
        if parent is None:
            rows.append(row)
        else:
            row["parent"] = parent
            parts.append(row)
    result = {"mpi_time": mpi_time, "patterns": rows, "parts": parts,
              "total": sum(r["total"] for r in rows if _is_waiting(r["metric"]))}
    wrong_order = [p for p in parts if p["metric"] == "mpi_latesender_wo"]
    if wrong_order or any(name == "mpi_latesender_wo" for name, _ in table):
        result["wrong_order"] = wrong_order[0]["total"] if wrong_order else 0.0
    return result


def wait_states(profile, replayed=None):
    """The wait states of a profile that has them (else None), or those ``replayed`` from a
    trace (Experiment.replay_wait_states: its values, MPI time and table): the MPI time
    (exclusive time of MPI regions, all locations) and per pattern with any waiting: its
    name, display name, what it means, total seconds, share of the MPI time, and the worst
    call path and location: (path names, location group name, seconds). Late Sender
    includes its Wrong Order part (``wrong_order`` holds that part's total)."""
    if replayed is not None:
        result = summarize_wait_states(replayed["values"], replayed["mpi_time"],
                                       replayed["table"])
        result.update(replayed=True, violations=replayed["violations"],
                      unmatched=replayed["unmatched"])
        return result
    names = {m.uniq_name for m in profile.metrics}
    if "mpi_latesender" not in names:
        return None
    table = [(n, parent) for n, parent in wait_state_table() if n in names]
    display = {m.uniq_name: m.disp_name for m in profile.metrics}
    units = {m.uniq_name: m.uom for m in profile.metrics}
    return summarize_wait_states(wait_state_values(profile), mpi_time_of(profile), table,
                                 display, units)
