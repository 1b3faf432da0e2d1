"""The call-path data every report works on, whatever it was read from (the CUBE4 profile
or a scan of the OTF2 trace): regions, ranks (processes) with their locations (threads),
a call tree, and per (call path, location) visits and inclusive time."""

import math

from scorep._errors import ScorepError

__all__ = ["wait_state_table", "mpi_time_of", "ReportError", "DamagedInputError", "reads_input", "Region", "Location", "Rank", "Node", "CallTree", "RegionStat",
           "MetricValues", "Sampling",
           "disambiguate", "PARADIGMS", "ROLES", "IO_ROLES", "COLLECTIVE_OPS", "format_seconds", "format_count",
           "format_bytes", "location_offsets", "parse_duration", "parse_size", "format_duration_option"]


class ReportError(ScorepError):
    """A report that cannot be made; str() is the one-line reason shown to the user."""


class DamagedInputError(ReportError):
    """A trace or profile that passed the readers' checks but holds inconsistent data."""


# What inconsistent data in a file raises in the code that reads it (an index past a table,
# an unknown reference, a value of the wrong kind).
_DAMAGE = (IndexError, KeyError, ValueError, TypeError, OverflowError, UnicodeError)


def reads_input(function):
    """`function` reads a trace or a profile: inconsistent data in it is a DamagedInputError
    (one line for the user), raised here where the input is read. The code that works on what
    was read catches nothing: an error there is a bug and stays a traceback."""
    import functools

    @functools.wraps(function)
    def reading(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except ScorepError:
            raise
        except _DAMAGE as error:
            raise DamagedInputError("the input is damaged or inconsistent (%s: %s)"
                                    % (type(error).__name__, error)) from error
    return reading


# OTF2 enumerations (OTF2_Definitions.h, 3.0), named as CUBE names them.
PARADIGMS = {0: "unknown", 1: "user", 2: "compiler", 3: "openmp", 4: "mpi", 5: "cuda",
             6: "measurement", 7: "pthread", 8: "hmpp", 9: "ompss", 10: "hardware",
             11: "gaspi", 12: "upc", 13: "shmem", 14: "winthread", 15: "qtthread",
             16: "acethread", 17: "tbbthread", 18: "openacc", 19: "opencl", 20: "mtapi",
             21: "sampling", 22: "none", 23: "hip", 24: "kokkos"}
ROLES = {0: "unknown", 1: "function", 2: "wrapper", 3: "loop", 4: "code", 5: "parallel",
         6: "sections", 7: "section", 8: "workshare", 9: "single", 10: "single sblock",
         11: "master", 12: "critical", 13: "critical sblock", 14: "atomic", 15: "barrier",
         16: "implicit barrier", 17: "flush", 18: "ordered", 19: "ordered sblock", 20: "task",
         21: "task create", 22: "task wait", 23: "one2all", 24: "all2one", 25: "all2all",
         26: "other collective", 27: "file io", 28: "point2point", 29: "rma",
         30: "data transfer", 31: "artificial", 32: "thread create", 33: "thread wait",
         34: "task untied", 35: "allocate", 36: "deallocate", 37: "reallocate",
         38: "file io metadata"}
# The roles of I/O calls, as the trace (OTF2) and the profile (CUBE, Score-P's spelling)
# name them.
IO_ROLES = ("file io", "file io metadata", "file_io", "file_io metadata")
COLLECTIVE_OPS = {0: "barrier", 1: "bcast", 2: "gather", 3: "gatherv", 4: "scatter",
                  5: "scatterv", 6: "allgather", 7: "allgatherv", 8: "alltoall",
                  9: "alltoallv", 10: "alltoallw", 11: "allreduce", 12: "reduce",
                  13: "reduce_scatter", 14: "scan", 15: "exscan",
                  16: "reduce_scatter_block"}


# Score-P's artificial regions: time while recording was off, pauses to flush trace
# buffers, calls deeper than the call-path depth limit (profiles only).
ARTIFICIAL_REGIONS = ("MEASUREMENT OFF", "TRACE BUFFER FLUSH", "COLLAPSE")


class Region:
    """A region definition. ``display`` is the name the reports show: ``name``, with
    ``:line`` added when several regions share the name (two ``<genexpr>`` of one module),
    so that they stay apart in tables, stacks and diffs (see disambiguate)."""
    __slots__ = ("id", "name", "file", "line", "paradigm", "role", "display", "end",
                 "canonical")

    def __init__(self, id, name, file="", line=0, paradigm="user", role="function", end=0,
                 canonical=""):
        self.id = id
        # The mangled name: for C functions (paradigm compiler) cProfile's spelling of them,
        # "<built-in method time.sleep>".
        self.canonical = canonical
        self.name = name
        self.file = file
        self.line = line if line and line > 0 else 0
        self.end = end if end and end >= self.line else 0
        self.paradigm = paradigm
        self.role = role
        self.display = name

    @property
    def where(self):
        """file:line, the file alone, or "" when the region has no source."""
        if self.file and self.line:
            return "%s:%d" % (self.file, self.line)
        return self.file or ""

    @property
    def is_program(self):
        """Whether this is the program root (Score-P's program region: paradigm measurement,
        role artificial, not one of the other artificial regions)."""
        return (self.paradigm in ("measurement", "measurement_system") and
                self.role == "artificial" and self.name not in ARTIFICIAL_REGIONS)

    @property
    def kind(self):
        """"mpi", "io" (a POSIX or ISO C I/O call: paradigm io in the profile, role file
        io in the trace), "measurement" (the program root and the tool's own regions) or
        "code"."""
        if self.paradigm == "mpi":
            return "mpi"
        if self.paradigm == "io" or self.role in IO_ROLES:
            return "io"
        if self.paradigm in ("measurement", "measurement_system") or self.role == "artificial":
            return "measurement"
        return "code"

    def __repr__(self):
        return "Region(%d, %r)" % (self.id, self.name)


def disambiguate(regions):
    """Sets ``display`` of each region: its name, or for names that several regions
    share, ``name:line`` (``name (file:line)`` when even those are equal)."""
    by_name = {}
    for r in regions:
        by_name.setdefault(r.name, []).append(r)
    for name, same in by_name.items():
        if len(same) == 1:
            same[0].display = name
            continue
        lines = {}
        for r in same:
            lines.setdefault(r.line, []).append(r)
        for r in same:
            if r.line and len(lines[r.line]) == 1:
                r.display = "%s:%d" % (name, r.line)
            elif r.file:
                r.display = "%s (%s)" % (name, r.where)
            else:
                r.display = "%s #%d" % (name, r.id)


class Location:
    """A thread (CUBE location, OTF2 location). ``rank`` is the index of its Rank."""
    __slots__ = ("index", "name", "rank", "thread")

    def __init__(self, index, name, rank, thread):
        self.index = index
        self.name = name
        self.rank = rank
        self.thread = thread

    def __repr__(self):
        return "Location(%d, %r, rank=%d)" % (self.index, self.name, self.rank)


class Rank:
    """A process: an MPI rank ("MPI Rank 3") or the one process of a serial run."""
    __slots__ = ("index", "name", "locations")

    def __init__(self, index, name, locations):
        self.index = index
        self.name = name
        self.locations = locations

    def __repr__(self):
        return "Rank(%d, %r)" % (self.index, self.name)


class Node:
    """A call path. ``params`` are (name, value) pairs of a parameter split: such a node is
    one value of its parent's region, not a call of its own. ``recursive`` is true when an
    ancestor has the same region (its time is already in that ancestor's)."""
    __slots__ = ("id", "parent", "region", "children", "params", "depth", "recursive")

    def __init__(self, id, parent, region, params=()):
        self.id = id
        self.parent = parent
        self.region = region
        self.children = []
        self.params = list(params)
        self.depth = 0 if parent is None else parent.depth + 1
        self.recursive = False

    @property
    def label(self):
        if not self.params:
            return self.region.display
        return "%s [%s]" % (self.region.display,
                            ", ".join("%s=%s" % (k, v) for k, v in self.params))

    def path(self):
        nodes = []
        node = self
        while node is not None:
            nodes.append(node)
            node = node.parent
        nodes.reverse()
        return nodes

    def __repr__(self):
        return "Node(%d, %r)" % (self.id, self.label)


class RegionStat:
    """A region summed over its call paths. Times in seconds; ``incl`` counts recursion
    once. ``per_loc_*`` are lists by location index."""
    __slots__ = ("region", "visits", "excl", "incl", "min", "max", "per_loc_visits",
                 "per_loc_excl", "per_loc_incl")

    def __init__(self, region, nloc):
        self.region = region
        self.visits = 0
        self.excl = 0.0
        self.incl = 0.0
        self.min = None
        self.max = None
        self.per_loc_visits = [0] * nloc
        self.per_loc_excl = [0.0] * nloc
        self.per_loc_incl = [0.0] * nloc


class MetricValues:
    """A metric recorded at every enter and leave (rusage, perf, PAPI, Python allocations):
    its names, unit (CUBE's, exponent included: "10^-6 s") and description, and per node id
    its inclusive and exclusive values summed over locations. ``per_loc``: the metric's
    total per location index when the reports show it per rank (the wait states), else
    None."""
    __slots__ = ("name", "display", "unit", "description", "incl", "excl", "per_loc")

    def __init__(self, name, display, unit, description, incl, excl, per_loc=None):
        self.per_loc = per_loc
        self.name = name
        self.display = display
        self.unit = unit
        self.description = description
        self.incl = incl
        self.excl = excl

    def scale(self):
        """(factor, unit) that turn a value into a plain unit: 10^-6 s -> seconds, 2^10
        Bytes -> bytes."""
        unit = self.unit or ""
        base, _sp, rest = unit.partition(" ")
        if "^" in base and rest:
            b, _c, e = base.partition("^")
            try:
                return float(int(b) ** int(e)), rest
            except ValueError:
                pass
        return 1.0, unit

    def format(self, value):
        factor, unit = self.scale()
        v = value * factor
        low = unit.lower()
        if low in ("s", "sec", "seconds"):
            return format_seconds(v)
        if low in ("bytes", "byte"):
            return format_bytes(int(v))
        return format_count(int(v)) if float(v).is_integer() else "%.3g" % v

    def by_region(self, nodes):
        """{region id: (exclusive, inclusive)}: exclusive summed over the region's call
        paths, inclusive over its outermost ones (recursion once)."""
        out = {}
        for n in nodes:
            if n.params:
                continue
            ex, inc = out.get(n.region.id, (0, 0))
            ex += self.excl[n.id] + sum(self.excl[c.id] for c in n.children if c.params)
            if not getattr(n, "recursive", False):
                inc += self.incl[n.id]
            out[n.region.id] = (ex, inc)
        return out


class Sampling:
    """How a sampled experiment (--sampling, SCOREP_ENABLE_UNWINDING) was measured: its
    rate, clock ("wall" or "cpu") and sample count. Its times are estimates and the visits
    of Python frames are not counted (a frame's visits are the activations samples saw),
    so the reports show samples instead. With the CPU clock ``idle`` is per location the
    wall time no sample and no recorded region covers (the thread was not on a CPU, or ran
    no sampled code), taken out of the program root: the CPU shares add up to 100%."""
    __slots__ = ("rate_hz", "clock", "samples", "idle")

    def __init__(self, rate_hz, clock, samples):
        self.rate_hz = rate_hz
        self.clock = clock
        self.samples = samples
        self.idle = None

    def describe(self):
        return "sampled: %s samples at %g Hz (%s clock), times are estimates" % (
            format_count(self.samples), self.rate_hz, self.clock)


class CallTree:
    """``visits[n][l]`` and ``incl[n][l]`` (seconds) per node id and location index;
    ``mins``/``maxs`` (seconds per visit, 0 where never visited) when the source has them.
    ``source`` says where it came from: "profile" or "trace".

    ``folded`` (cube.Profile.folded, location ids being location indexes): the calls each
    COLLAPSE node holds, per function and per caller -> callee pair. The call-tree views
    keep COLLAPSE, as Score-P; the per-function views (``flat``, analysis.call_stats) put
    the folded calls where they belong, so that their totals do not depend on the depth
    limit."""

    def __init__(self, regions, ranks, locations, nodes, visits, incl, mins=None, maxs=None,
                 source="profile", folded=None):
        self.regions = regions
        self.ranks = ranks
        self.locations = locations
        self.nodes = nodes
        self.roots = [n for n in nodes if n.parent is None]
        self.visits = visits
        self.incl = incl
        self.mins = mins
        self.maxs = maxs
        self.source = source
        self.folded = folded or None
        # {node id: (bytes read, bytes written)} of I/O calls, when the profile holds
        # Score-P's io_bytes metrics (the trace gives bytes per file instead)
        self.io_bytes = None
        # The metrics recorded at enters and leaves (MetricValues), from the profile.
        self.metrics = []
        # Sampled experiments: samples per node and location (Score-P's hits) and how
        # they were taken (Sampling); None otherwise.
        self.hits = None
        self.sampling = None
        self._excl = None
        # Only the regions that ran: a defined but unused twin changes no name.
        disambiguate(list(self.regions_that_ran().values()))
        self._mark_recursion()

    def regions_that_ran(self):
        """{region id: Region} of the call paths and of the folded calls."""
        ran = {n.region.id: n.region for n in self.nodes}
        by_id = None
        for functions, pairs in (self.folded or {}).values():
            if by_id is None:
                by_id = {r.id: r for r in self.regions}
            for f in functions:
                ran.setdefault(f[1], by_id[f[1]])
            for e in pairs:
                ran.setdefault(e[1], by_id[e[1]])
                ran.setdefault(e[2], by_id[e[2]])
        return ran

    def folded_at(self, node):
        """(functions, pairs) the COLLAPSE node holds, or None (not COLLAPSE, or a profile
        without folded calls: then COLLAPSE counts as a function of its own)."""
        if self.folded is None or node.region.name != "COLLAPSE":
            return None
        return self.folded.get(node.id)

    def _mark_recursion(self):
        # Iterative DFS with a count of each region on the current path.
        on_path = {}
        for root in self.roots:
            stack = [(root, False)]
            while stack:
                node, leaving = stack.pop()
                rid = node.region.id
                if leaving:
                    on_path[rid] -= 1
                    continue
                node.recursive = on_path.get(rid, 0) > 0
                on_path[rid] = on_path.get(rid, 0) + 1
                stack.append((node, True))
                for child in reversed(node.children):
                    stack.append((child, False))

    @property
    def excl(self):
        """Exclusive time per node and location: own inclusive minus the children's."""
        if self._excl is None:
            # Rounding of stored doubles can leave +-1e-18 where the truth is 0 (no clock
            # resolves a picosecond).
            self._excl = [[v if v > 1e-12 else 0.0 for v in row]
                          for row in self.unclamped_excl()]
        return self._excl

    def unclamped_excl(self):
        """Exclusive time per node and location as computed, rounding and all: own inclusive
        minus the children's (sums of it add up to the inclusive times exactly)."""
        nloc = len(self.locations)
        out = []
        for node in self.nodes:
            row = list(self.incl[node.id])
            for child in node.children:
                crow = self.incl[child.id]
                for i in range(nloc):
                    row[i] -= crow[i]
            out.append(row)
        return out

    def samples_by_region(self, locations=None):
        """{region id: samples whose innermost frame was the region} (sampled trees)."""
        cols = range(len(self.locations)) if locations is None else locations
        out = {}
        for n in self.nodes:
            out[n.region.id] = out.get(n.region.id, 0) + sum(self.hits[n.id][l] for l in cols)
        return out

    def take_out_idle(self):
        """CPU-clock sampling: the program root's exclusive time per location is time no
        CPU sample stands for; it moves into ``sampling.idle`` and out of the root."""
        excl = self.excl
        idle = [0.0] * len(self.locations)
        for root in self.roots:
            if root.region.is_program:
                for l, v in enumerate(excl[root.id]):
                    idle[l] += v
                    self.incl[root.id][l] -= v
        self.sampling.idle = idle
        self._excl = None

    def preorder(self):
        order = []
        stack = list(reversed(self.roots))
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(reversed(node.children))
        return order

    def total_time(self, locations=None):
        """Run time summed over locations: the roots' inclusive time."""
        cols = range(len(self.locations)) if locations is None else locations
        return sum(self.incl[r.id][l] for r in self.roots for l in cols)

    def location_time(self, loc):
        return sum(self.incl[r.id][loc] for r in self.roots)

    def total_visits(self, locations=None):
        cols = range(len(self.locations)) if locations is None else locations
        total = 0
        for n in self.nodes:
            folded = self.folded_at(n)
            if folded is not None:  # the calls it holds instead of its visits
                wanted = set(cols)
                total += sum(e[3] for e in folded[1] if e[0] in wanted)
            elif not n.params:
                total += sum(self.visits[n.id][l] for l in cols)
        return total

    def flat(self):
        """RegionStat per region that was visited, in region id order."""
        nloc = len(self.locations)
        excl = self.excl
        stats = {}
        regions = None
        for node in self.nodes:
            folded = self.folded_at(node)
            if folded is not None:
                regions = regions or self.regions_that_ran()
                self._add_folded(stats, regions, node, folded, nloc)
                continue
            rid = node.region.id
            st = stats.get(rid)
            if st is None:
                st = stats[rid] = RegionStat(node.region, nloc)
            erow = excl[node.id]
            for i in range(nloc):
                st.per_loc_excl[i] += erow[i]
            if not node.recursive:
                irow = self.incl[node.id]
                for i in range(nloc):
                    st.per_loc_incl[i] += irow[i]
            if not node.params:
                vrow = self.visits[node.id]
                for i in range(nloc):
                    st.per_loc_visits[i] += vrow[i]
                if self.mins is not None:
                    for i in range(nloc):
                        if vrow[i]:
                            lo, hi = self.mins[node.id][i], self.maxs[node.id][i]
                            st.min = lo if st.min is None else min(st.min, lo)
                            st.max = hi if st.max is None else max(st.max, hi)
        for st in stats.values():
            st.visits = sum(st.per_loc_visits)
            st.excl = sum(st.per_loc_excl)
            st.incl = sum(st.per_loc_incl)
        return [stats[k] for k in sorted(stats)]

    @staticmethod
    def _add_folded(stats, regions, node, folded, nloc):
        """The calls a COLLAPSE node holds, added to their functions' RegionStats: visits
        and exclusive time of every call, inclusive time of a function not active on the
        node's call path (its outermost folded activations)."""
        functions, pairs = folded
        on_path = {n.region.id for n in node.path()}
        for l, caller, callee, calls, _, _, _, excl in pairs:
            st = stats.get(callee)
            if st is None:
                st = stats[callee] = RegionStat(regions[callee], nloc)
            st.per_loc_visits[l] += calls
            st.per_loc_excl[l] += excl
        for l, rid, _, once, lo, hi in functions:
            st = stats[rid]
            if rid not in on_path:
                st.per_loc_incl[l] += once
            st.min = lo if st.min is None else min(st.min, lo)
            st.max = hi if st.max is None else max(st.max, hi)

    def restrict(self, locations):
        """The same tree with only these location columns (e.g. one rank)."""
        locations = sorted(locations)
        keep_ranks = sorted({self.locations[l].rank for l in locations})
        rank_map = {r: i for i, r in enumerate(keep_ranks)}
        new_locs = []
        for i, l in enumerate(locations):
            old = self.locations[l]
            new_locs.append(Location(i, old.name, rank_map[old.rank], old.thread))
        ranks = [Rank(rank_map[r], self.ranks[r].name,
                      [i for i, l in enumerate(new_locs) if l.rank == rank_map[r]])
                 for r in keep_ranks]

        def cols(rows):
            return None if rows is None else [[row[l] for l in locations] for row in rows]

        tree = CallTree.__new__(CallTree)
        tree.regions = self.regions
        tree.ranks = ranks
        tree.locations = new_locs
        tree.nodes = self.nodes
        tree.roots = self.roots
        tree.visits = cols(self.visits)
        tree.incl = cols(self.incl)
        tree.mins = cols(self.mins)
        tree.maxs = cols(self.maxs)
        tree.source = self.source
        tree.hits = cols(self.hits)
        tree.sampling = None
        if self.sampling is not None:
            tree.sampling = Sampling(self.sampling.rate_hz, self.sampling.clock,
                                     sum(sum(row) for row in tree.hits) if tree.hits else 0)
            if self.sampling.idle is not None:
                tree.sampling.idle = [self.sampling.idle[l] for l in locations]
        tree.folded = None
        if self.folded is not None:
            new = {l: i for i, l in enumerate(locations)}
            tree.folded = {
                c: ([(new[f[0]],) + tuple(f[1:]) for f in fs if f[0] in new],
                    [(new[e[0]],) + tuple(e[1:]) for e in es if e[0] in new])
                for c, (fs, es) in self.folded.items()}
        tree._excl = None
        return tree

    def rank_values(self, per_loc):
        """Sums of a per-location list per rank."""
        return [sum(per_loc[l] for l in rank.locations) for rank in self.ranks]


# ---- formatting and parsing shared by the reports ------------------------------------

def format_seconds(s):
    """Seconds with a unit that keeps 3-4 significant digits: 1.23 s, 45.6 ms, 789 us."""
    if s is None:
        return "-"
    a = abs(s)
    if a >= 100:
        return "%.0f s" % s
    # A value that rounds to 1000 of a unit is shown in the next one (999.7 ns is "1 us",
    # not "1e+03 ns").
    if a >= 0.9995:
        return "%.3g s" % s if a < 10 else "%.1f s" % s
    if a >= 0.9995e-3:
        return "%.3g ms" % (s * 1e3)
    if a >= 0.9995e-6:
        return "%.3g us" % (s * 1e6)
    if a == 0:
        return "0 s"
    return "%.3g ns" % (s * 1e9)


def format_count(n):
    return "{:,}".format(int(n))


def location_offsets(loc, nloc):
    """For calls sorted by location (``loc[i]`` the location of call i): ``offsets[l]`` ..
    ``offsets[l + 1]`` are location l's calls."""
    offsets = [0] * (nloc + 1)
    for l in loc:
        offsets[l + 1] += 1
    for i in range(nloc):
        offsets[i + 1] += offsets[i]
    return offsets


def format_bytes(n):
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return "%.1f %s" % (n / size, unit)
    return "%d B" % n


_DUR_UNITS = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}


def parse_duration(text):
    """'10us', '1.5ms', '2s', '500ns' or a plain number of microseconds -> ns (int)."""
    t = text.strip().lower()
    for unit in sorted(_DUR_UNITS, key=len, reverse=True):
        if t.endswith(unit):
            number = t[:-len(unit)].strip()
            scale = _DUR_UNITS[unit]
            break
    else:
        number, scale = t, 1e3
    try:
        value = float(number)
    except ValueError:
        raise ValueError("%r is not a duration (e.g. 10us, 1.5ms, 2s)" % text)
    if value < 0 or math.isnan(value) or math.isinf(value):
        raise ValueError("%r is not a duration (e.g. 10us, 1.5ms, 2s)" % text)
    return int(round(value * scale))


def parse_size(text):
    """'300M', '1G', '500k', '1000' (bytes) -> bytes."""
    t = text.strip().upper().rstrip("B")
    scale = 1
    if t and t[-1] in "KMGT":
        scale = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}[t[-1]]
        t = t[:-1]
    try:
        value = float(t)
    except ValueError:
        raise ValueError("%r is not a size (e.g. 300M, 1G)" % text)
    if value <= 0 or math.isnan(value) or math.isinf(value):
        raise ValueError("%r is not a size (e.g. 300M, 1G)" % text)
    return int(value * scale)


def format_duration_option(ns):
    """ns as the shortest --min-duration text that parses back to at most ns."""
    for unit, scale in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns >= scale:
            return "%g%s" % (math.floor(ns / scale * 100) / 100, unit)
    return "%dns" % ns


# Scalasca's wait-state metrics as the engine defined them when the reader module is not
# built (the reader carries the engine's own table).
_WAIT_STATE_NAMES = ("mpi_latesender", "mpi_latesender_wo", "mpi_barrier_wait",
                     "mpi_barrier_completion", "mpi_wait_nxn", "mpi_nxn_completion",
                     "mpi_latebroadcast", "mpi_earlyreduce", "mpi_earlyscan",
                     "mpi_init_completion", "mpi_finalize_wait")


def wait_state_table():
    """The wait-state engine's metrics in its order (core/waitstates.h): [(name, parent
    name or None)], from the reader module, which runs the engine offline, so that a
    metric the engine adds appears in the reports without a change here."""
    try:
        from scorep import _reader
        table = _reader.WAIT_STATE_METRICS
    except (ImportError, AttributeError):
        return [(name, "mpi_latesender" if name == "mpi_latesender_wo" else None)
                for name in _WAIT_STATE_NAMES]
    return [(name, table[parent][0] if parent >= 0 else None) for name, parent in table]


def mpi_time_of(profile):
    """Exclusive time of the MPI regions, all locations."""
    time = profile.values("time", inclusive=False)
    return sum(sum(time[c.id]) for c in profile.cnodes
               if (c.region.paradigm or "").split(":", 1)[0] == "mpi")
