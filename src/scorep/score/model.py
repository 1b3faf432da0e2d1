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
