"""scorep-score's estimate of a profile: region types, rows and groups, the bytes the trace of
the same run would take and the SCOREP_TOTAL_MEMORY it would need.

Two byte and memory models fill the same rows:

- profiles written by this tool (``Creator`` "scorep ...", Score-P's say "Score-P ..."): the bytes
  our trace writer really produces, measured (:mod:`scorep.score.measured`);
- profiles written by Score-P: Score-P's own rules, so that the numbers are the ones its
  scorep-score prints (:mod:`scorep.score.scorep_rules`).

Region types (Score-P's ``SCOREP_Score_Profile::get_definition_type`` and
``calculate_calltree_types``)
--------------------------------------------------------------------------------------------
The paradigm decides (a paradigm ``unknown``, or none, is replaced by the region's
description):
``mpi`` MPI, ``shmem`` SHMEM, ``openmp`` OMP, ``pthread`` PTHREAD, ``cuda`` CUDA, ``opencl``
OPENCL, ``openacc`` OPENACC, ``memory`` MEMORY, ``measurement`` SCOREP, ``libwrap:...`` LIB,
``kokkos:...`` KOKKOS, ``hip``/``hip:...`` HIP, ``io`` IO. When that gives ``unknown`` (old
profiles: no paradigm, description ``unknown``) the name decides: ``MPI_...`` MPI, ``shmem_...`` SHMEM, ``!$omp `` or
``omp_...`` OMP, ``pthread_...`` PTHREAD, ``cu``/``cuda`` followed by an upper-case letter
CUDA, ``cl`` followed by one OPENCL. Everything else (``user``, ``compiler``, Python
functions) is USR, and a USR region becomes COM when a region of a type after COM in
:data:`TYPE_ORDER` (MPI ... LIB, UNKNOWN; not SCOREP) lies below one of its call paths.

Only regions of the types marked ``*`` in :data:`FILTER_STATE` can be filtered (USR, COM,
CUDA, KOKKOS, HIP, LIB), and what a filter leaves out is counted as FLT.

Visits, time
------------
visits: enters, summed over call paths and locations (a call path a parameter split off
counts as Score-P counts it, see the models); time[s]: exclusive time, so that the group rows
add up to ALL.
"""

from scorep._errors import ScorepError

# Score-P's types in its order (SCOREP_Score_Types.hpp): ties in the group rows keep it, and
# a call path to a type after COM makes its USR callers COM.
TYPE_ORDER = ["ALL", "FLT", "USR", "SCOREP", "COM", "MPI", "OMP", "SHMEM", "PTHREAD", "CUDA",
              "OPENCL", "OPENACC", "MEMORY", "IO", "KOKKOS", "HIP", "LIB", "UNKNOWN"]
_COM = TYPE_ORDER.index("COM")
# '*' can be filtered, '-' cannot, '+' is what a filter left out.
FILTER_STATE = {"ALL": "*", "FLT": "+", "USR": "*", "SCOREP": "-", "COM": "*", "MPI": "-",
                "OMP": "-", "SHMEM": "-", "PTHREAD": "-", "CUDA": "*", "OPENCL": "-",
                "OPENACC": "-", "MEMORY": "-", "IO": "-", "KOKKOS": "*", "HIP": "*",
                "LIB": "*", "UNKNOWN": "-"}
FILTERABLE = tuple(t for t, state in FILTER_STATE.items() if state == "*" and t != "ALL")

_PARADIGM_TYPES = {"mpi": "MPI", "shmem": "SHMEM", "openmp": "OMP", "pthread": "PTHREAD",
                   "cuda": "CUDA", "opencl": "OPENCL", "openacc": "OPENACC",
                   "memory": "MEMORY", "measurement": "SCOREP", "hip": "HIP", "io": "IO"}
_PARADIGM_PREFIXES = (("libwrap:", "LIB"), ("kokkos:", "KOKKOS"), ("hip:", "HIP"))


class ScoreError(ScorepError):
    """Something that ends scorep-score with one line on stderr (exit status 1; usage
    errors are scorep._errors.UsageError, status 2)."""


# ---- regions ------------------------------------------------------------------------------

def paradigm(region):
    """The region's paradigm as Score-P's scorep-score reads it: a paradigm ``unknown`` (or
    none, which cubelib reports as unknown) is replaced by the region's description."""
    value = region.paradigm or "unknown"
    return (region.descr or "") if value == "unknown" else value


def _prefix_then_upper(name, prefix):
    return len(name) > len(prefix) and name.startswith(prefix) and name[len(prefix)].isupper()


def definition_type(region):
    """A region's type by its paradigm (or, for paradigm ``unknown``, its name)."""
    value = paradigm(region)
    if value in _PARADIGM_TYPES:
        return _PARADIGM_TYPES[value]
    for prefix, type_ in _PARADIGM_PREFIXES:
        if value.startswith(prefix):
            return type_
    if value == "unknown":
        name = region.name
        if name.startswith("MPI_"):
            return "MPI"
        if name.startswith("shmem_"):
            return "SHMEM"
        if name.startswith("!$omp ") or name.startswith("omp_"):
            return "OMP"
        if name.startswith("pthread_"):
            return "PTHREAD"
        if _prefix_then_upper(name, "cu") or _prefix_then_upper(name, "cuda"):
            return "CUDA"
        if _prefix_then_upper(name, "cl"):
            return "OPENCL"
    return "USR"


def classify(profile):
    """region id -> type, with USR regions that lead to communication made COM."""
    types = {region.id: definition_type(region) for region in profile.regions}
    # Post-order over the call tree (iterative: deep recursion must not overflow Python's
    # stack); a node is "on the path" when one of its subtrees holds a type after COM.
    on_path = {}
    for cnode in reversed(profile.deep_order()):
        node = profile.cnodes[cnode]
        below = any(on_path[child.id] for child in node.children)
        type_ = types[node.region.id]
        if below and type_ == "USR":
            types[node.region.id] = "COM"
        on_path[cnode] = below or TYPE_ORDER.index(type_) > _COM
    return types


def is_own_profile(profile):
    """Whether this tool wrote the profile (then its trace is ours and so is the model)."""
    return profile.attrs.get("Creator", "").startswith("scorep") or \
        any(key.startswith("scorep::") for key in profile.attrs)


# ---- rows and groups ----------------------------------------------------------------------

class Tally:
    """Visits, hits and time summed over locations, and bytes per unit (a location in our
    model, a process in Score-P's): what every row of the table shows. ``metrics``: the
    exclusive sums of the profile's recorded metrics (SCOREP_METRIC_*, --memory), by name."""

    def __init__(self, nunits):
        self.visits = 0
        self.hits = 0
        self.time = 0.0
        self.bytes = [0] * nunits
        self.metrics = {}

    def add(self, other):
        self.visits += other.visits
        self.hits += other.hits
        self.time += other.time
        for i, value in enumerate(other.bytes):
            self.bytes[i] += value

    @property
    def max_buf(self):
        """The bytes on the unit where they are most (Score-P's max_buf)."""
        return max(self.bytes) if self.bytes else 0

    @property
    def total_bytes(self):
        return sum(self.bytes)


class RegionRow(Tally):
    """One region's numbers; in our model also raw records and profile nodes per
    location."""

    def __init__(self, region, type_, nunits):
        Tally.__init__(self, nunits)
        self.region = region
        self.type = type_
        self.records = [0] * nunits
        self.nodes = [0] * nunits
        self.filtered = None  # None: no filter given; else whether -f leaves it out

    @property
    def name(self):
        return self.region.name


class Group(Tally):
    """A row summing regions (ALL, USR, ..., FLT, or one of the *-FLT rows)."""

    def __init__(self, type_, name, nunits, symbol=" "):
        Tally.__init__(self, nunits)
        self.type = type_
        self.name = name
        self.symbol = symbol


class Part(Tally):
    """What call paths of one region added to one type's group. A dynamic region's calls
    (Score-P's ``instance=``/``iteration=`` children) are charged to its parent's row but
    its own type's group, and no filter applies to them (as in Score-P)."""

    def __init__(self, type_, row, dynamic, nunits):
        Tally.__init__(self, nunits)
        self.type = type_
        self.row = row
        self.dynamic = dynamic


class Scenario:
    """The trace a measurement would write: bytes per unit. The models add their memory
    hint (``total_memory``, ``memory_warning``)."""

    memory_warning = False

    def __init__(self, unit_bytes):
        self.unit_bytes = unit_bytes

    @property
    def total_bytes(self):
        return sum(self.unit_bytes)

    @property
    def max_buf(self):
        return max(self.unit_bytes) if self.unit_bytes else 0


def recorded_metrics(profile):
    """The metrics a measurement recorded at enters and leaves (Score-P's dense metrics:
    rusage, PAPI, perf, the Python allocation counters): inclusive integer metrics of the
    profile's metric tree, beside Score-P's time."""
    return [m for m in profile.metrics
            if m.type == "INCLUSIVE" and m.uniq_name != "time" and m.parent is None and
            m.dtype in ("UINT64", "INT64")]


def _sum_metrics(target, rows):
    for row in rows:
        for name, value in row.metrics.items():
            target.metrics[name] = target.metrics.get(name, 0) + value


class Estimate:
    """The estimate for one profile; build it with :func:`estimate`.

    ``rows``: a RegionRow per region with bytes, in region id order. ``unfiltered`` and
    ``filtered`` (None without a filter) are the models' scenarios (``unit_bytes``,
    ``total_bytes``, ``max_buf``, ``total_memory``); ``scenario`` is the one the summary
    lines report (the filtered one when there is a filter). ``dense``: the hardware counters
    of -c."""

    def __init__(self, profile, filter=None, dense=0):
        self.profile = profile
        self.filter = filter
        self.dense = dense
        try:
            self.visit_values = profile.values("visits", inclusive=False)
            self.time_values = profile.values("time", inclusive=False)
        except KeyError as error:
            raise ScoreError("%s: not a Score-P profile: %s" % (
                profile.path, str(error).strip("'\"").split(": ", 1)[-1]))
        if not profile.locations:
            raise ScoreError("%s: the profile has no locations" % profile.path)
        self.types = classify(profile)
        self.own = is_own_profile(profile)
        # Columns of the recorded metrics for our own profiles; Score-P's own scorep-score
        # prints none, so its profiles keep its layout.
        self.metrics = recorded_metrics(profile) if self.own else []
        if self.own and not dense and self.metrics:
            # Our trace of the same run writes its metric records at every enter and leave.
            self.dense = len(self.metrics)
        if self.own:
            from scorep.score.measured import MeasuredModel as Model
        else:
            from scorep.score.scorep_rules import ScorePModel as Model
        self.model = Model(self)
        self.units = self.model.units
        nunits = len(self.units)
        self.has_hits = self.model.has_hits
        self.all_rows = [RegionRow(r, self.types[r.id], nunits) for r in profile.regions]
        self._parts = {}
        self.model.fill(self)
        if filter is not None:
            for row in self.all_rows:
                row.filtered = row.type in FILTERABLE and paradigm(row.region) != "sampling" \
                    and bool(filter.excludes(row.region.name, row.region.mangled_name,
                                             row.region.file or None))
        self._sum_recorded_metrics()
        self.rows = [row for row in self.all_rows if row.total_bytes > 0]
        self.unfiltered = self.model.scenario(self, filtered=False)
        self.filtered = self.model.scenario(self, filtered=True) if filter is not None else None
        self.scenario = self.filtered or self.unfiltered
        all_group, _ = self.groups()
        self.total_time = all_group.time

    def add(self, type_, row, unit, nbytes, visits, hits, time, dynamic=False):
        """What one call path did on one unit: counted in ``row`` and in type_'s group."""
        key = (type_, row.region.id, dynamic)
        part = self._parts.get(key)
        if part is None:
            part = self._parts[key] = Part(type_, row, dynamic, len(self.units))
        for target in (part, row):
            target.visits += visits
            target.hits += hits
            target.time += time
            target.bytes[unit] += nbytes

    def _sum_recorded_metrics(self):
        """Each region's exclusive value of every recorded metric, summed over its call
        paths and locations."""
        for metric in self.metrics:
            values = self.profile.values(metric, inclusive=False)
            for cnode in self.profile.cnodes:
                row = self.all_rows[cnode.region.id]
                row.metrics[metric.uniq_name] = row.metrics.get(metric.uniq_name, 0) + \
                    sum(values[cnode.id])

    def parts(self, filtered=None):
        """The parts, all (None), or those a filter keeps (False) or leaves out (True)."""
        for part in self._parts.values():
            if filtered is None:
                yield part
            elif not part.dynamic and bool(part.row.filtered) == filtered:
                yield part

    # -- groups ---------------------------------------------------------------------------

    def groups(self):
        """ALL and the type groups without a filter, in TYPE_ORDER; only those with bytes
        are shown (as in Score-P)."""
        nunits = len(self.units)
        symbol = "-" if self.filter is not None else " "
        all_group = Group("ALL", "ALL", nunits, symbol)
        by_type = {}
        for part in self.parts():
            group = by_type.get(part.type)
            if group is None:
                group = by_type[part.type] = Group(part.type, part.type, nunits, symbol)
            group.add(part)
            all_group.add(part)
        if self.metrics:
            for group in by_type.values():
                _sum_metrics(group, [r for r in self.all_rows if r.type == group.type])
            _sum_metrics(all_group, self.all_rows)
        return all_group, _ordered(by_type)

    def filtered_groups(self):
        """ALL-FLT, FLT (what the filter leaves out) and <type>-FLT."""
        nunits = len(self.units)
        all_group = Group("ALL", "ALL-FLT", nunits, FILTER_STATE["ALL"])
        by_type = {"FLT": Group("FLT", "FLT", nunits, FILTER_STATE["FLT"])}
        for part in self.parts(filtered=True):
            by_type["FLT"].add(part)
        for part in self.parts(filtered=False):
            group = by_type.get(part.type)
            if group is None:
                group = by_type[part.type] = Group(part.type, part.type + "-FLT", nunits,
                                                   FILTER_STATE.get(part.type, "-"))
            group.add(part)
            all_group.add(part)
        if self.metrics:
            kept = [r for r in self.all_rows if not r.filtered]
            _sum_metrics(by_type["FLT"], [r for r in self.all_rows if r.filtered])
            for group in by_type.values():
                if group.type != "FLT":
                    _sum_metrics(group, [r for r in kept if r.type == group.type])
            _sum_metrics(all_group, kept)
        return all_group, _ordered(by_type)


def _ordered(by_type):
    order = {t: i for i, t in enumerate(TYPE_ORDER)}
    return [by_type[t] for t in sorted(by_type, key=lambda t: (order.get(t, len(order)), t))]


def estimate(profile, filter=None, dense=0):
    """The Estimate of a profile read with :func:`scorep.cube.read`; ``filter`` is a
    :class:`scorep.measure.filter.Filter` or None; ``dense`` the number of hardware counters a
    tracing run would record per event (scorep-score -c)."""
    return Estimate(profile, filter, dense)
