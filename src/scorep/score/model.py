"""scorep-score's model of a profile: region types, the bytes the trace of the same run
would take and the SCOREP_TOTAL_MEMORY it would need.

Region types
------------
Paradigm ``mpi`` -> MPI, ``io`` -> IO, ``measurement`` (the program's root region) -> SCOREP,
``openmp``/``pthread``/... -> their Score-P names. User regions (``user``, ``compiler``, Python
functions) are COM when a region of one of those paradigms (not SCOREP) is called somewhere
below one of their call paths, USR otherwise. Only USR and COM regions can be filtered (the
measurement filters nothing else either).

Visits, time
------------
visits: enters, i.e. the visits of the region's call paths; a call path that a parameter split
off (a cnode with a parameter) holds parameter events, not enters, and adds no visits. time[s]:
exclusive time summed over call paths (parameter call paths included) and locations, so the
group rows add up to ALL.

Byte model (OTF2 bytes written by our trace substrate, measured)
----------------------------------------------------------------
Measured by tracing known programs (SCOREP_ENABLE_TRACING=true) and comparing
``traces/<location>.evt`` with the events ``otf2-print`` lists, on libotf2 3.0.2:

- every event is preceded by a 9-byte timestamp record (type byte + 8 bytes); our timestamps
  are nanoseconds and never repeat, so every event pays it;
- Enter / Leave: 1 type byte + the region id compressed: 12 bytes each for ids 1..255, 13 for
  256..65535 (OTF2's compression: 1 byte for 0, else 1 + the significant bytes). A program
  calling ``tiny()`` n times: ``evt = 219 + 24 n`` bytes for n = 0, 1 000, 10 000; 300
  functions with ids 5..304 called 10 more times: +73 000 bytes = 10 x (251 x 24 + 49 x 26);
- parameter events (``scorep.user.parameter_*``): 9 + 1 type + 1 length + parameter id
  compressed + value compressed (int64/uint64 as 64-bit, so negative ints take 9 bytes; a string
  is its string id): ``parameter_int("i", 0)`` 14 bytes, value 1000 16, -1 22,
  ``parameter_uint(70000)`` 17, ``parameter_string`` 15; a loop setting five parameters grew the
  file by exactly the predicted 10 867 bytes per 100 iterations;
- ProgramBegin: 9 + 2 + name id + argc + one id per argument (17 bytes for one argument),
  ProgramEnd: 9 + 2 + exit status (12 bytes for 0). The profile does not know argc; one argument
  (the script) is assumed;
- per location file: a chunk header of 18 bytes and 2 closing bytes (20 bytes), plus about 30
  bytes per further 256 KiB chunk (its header, an end marker, the unused tail: measured 61
  bytes more for 3 chunks than 24 n predicts, 257 more for 10). These framing bytes are
  counted in the SCOREP row;
- ids the profile does not hold are estimated: parameter ids from the number of parameter
  names, string ids from the number of definitions; region ids are the profile's (with MPI a
  rank's trace uses its local ids, of the same magnitude). MPI events (MpiSend/Recv,
  Isend/Irecv and their completions, collective begin/end) are computed from the OTF2
  encoding, not measured. Not in the profile, so not estimated: MeasurementOnOff events
  (scorep.user.disable_recording) and BufferFlush records; regions dropped by a rewind are
  counted.

Against the trace of the same run (tests/test_score.py, SIZE_TOLERANCE = 1 %) the estimate
missed by 2 bytes or less per program argument beyond the first, and by a few bytes per
256 KiB chunk.

max_buf[B] is the estimate of one location's trace (its ``.evt`` file) in these bytes; the
largest over the locations is max_buf, and group and region rows show their share on the
location where it is largest (as Score-P does).

Memory model (SCOREP_TOTAL_MEMORY)
----------------------------------
The budget is split into 256 KiB chunks; a flush happens when a location needs a chunk and
the budget has none left (``src/scorep/_native/core/memory.h``). Per location:

- trace: our event path stores 16-byte raw records (enter, leave: one record; a parameter,
  ProgramEnd, MpiSend/Recv: two; Isend/Irecv, MpiCollectiveEnd: three; ProgramBegin,
  MpiCollectiveBegin: one) in chunks of (262144 - 16) / 16 = 16 383 records; a record group
  never straddles chunks, so 16 381 are counted per chunk; at least one chunk;
- profile: call-path nodes come in blocks of 2 048 (``SP_PROFILE_BLOCK_NODES``; 88-byte nodes)
  per chunk; every call path visited on the location is a node, parameter call paths included,
  plus the root;
- at the end each location also takes one chunk to encode its records into OTF2.

SCOREP_TOTAL_MEMORY = the largest sum over the locations of one process, in chunks, times
256 KiB, at least 1 MiB (the smallest value the measurement accepts), printed rounded up.
The run itself needs the chunks without the encoding chunks (``Scenario.max_run_chunks``): a
budget of exactly that many does not flush, one chunk less flushes once
(``tests/test_score.py`` checks both, and that the printed hint does not flush). Profiling
is assumed to stay on in the tracing run (Score-P's default); without it the hint is high by
the node blocks.
"""

from scorep._errors import ScorepError

# ---- the models (see the module docstring) ------------------------------------------------

CHUNK_BYTES = 256 * 1024
RAW_RECORD_BYTES = 16
RAW_CHUNK_HEADER_BYTES = 16
# Two slots of slack: a three-record group that does not fit moves on to the next chunk.
RAW_RECORDS_PER_CHUNK = (CHUNK_BYTES - RAW_CHUNK_HEADER_BYTES) // RAW_RECORD_BYTES - 2
PROFILE_NODES_PER_CHUNK = 2048
MIN_TOTAL_MEMORY = 1 << 20

TIMESTAMP_BYTES = 9
EVT_FILE_BYTES = 20          # chunk header (18) and the closing bytes (2) of one .evt file
EVT_CHUNK_BYTES = CHUNK_BYTES  # the OTF2 event chunk size of our archives
EVT_EXTRA_CHUNK_BYTES = 30   # header, end marker and unused tail of every further chunk

# Raw records per event (trace.h: a record with a 64-bit value takes a payload record).
RECORDS_ENTER_LEAVE = 2
RECORDS_PARAMETER = 2
RECORDS_PROGRAM = 3          # ProgramBegin 1, ProgramEnd 2


_PARADIGM_TYPES = {
    "mpi": "MPI", "io": "IO", "posix": "IO", "isoc": "IO", "measurement": "SCOREP",
    "openmp": "OMP", "pthread": "PTHREAD", "shmem": "SHMEM", "cuda": "CUDA",
    "opencl": "OPENCL", "openacc": "OPENACC", "memory": "MEMORY", "kokkos": "KOKKOS",
    "hip": "HIP", "libwrap": "LIB",
}
# Ties in the group rows keep this order (Score-P's order of types).
_TYPE_ORDER = ["ALL", "FLT", "USR", "COM", "MPI", "SHMEM", "OMP", "PTHREAD", "CUDA", "OPENCL",
               "OPENACC", "MEMORY", "IO", "KOKKOS", "HIP", "LIB", "SCOREP"]
_FILTERABLE = ("USR", "COM")
# Calling these makes a user region COM; allocations and the measurement itself do not.
_NOT_COMMUNICATION = ("USR", "COM", "SCOREP", "MEMORY")
_COLLECTIVE_ROLES = ("barrier", "one2all", "all2one", "all2all", "other collective")


class ScoreError(ScorepError):
    """Something that ends scorep-score with one line on stderr (exit status 1; usage
    errors are scorep._errors.UsageError, status 2)."""


def compressed_size(value):
    """Bytes OTF2 writes for a compressed integer: 1 for 0, else 1 + the significant bytes;
    signed values are written as 64-bit unsigned, so negative ones take 9."""
    if isinstance(value, float):
        if not value.is_integer():
            return 9
        value = int(value)
    if value < 0:
        return 9
    if value == 0:
        return 1
    return 1 + (value.bit_length() + 7) // 8



# ---- the estimate --------------------------------------------------------------------------

class RegionRow:
    """One region's numbers: visits and time over all locations, bytes, raw records and
    profile nodes per location."""

    def __init__(self, region, type_, nloc):
        self.region = region
        self.type = type_
        self.visits = 0
        self.time = 0.0
        self.bytes = [0] * nloc
        self.records = [0] * nloc
        self.nodes = [0] * nloc
        self.filtered = None  # None: no filter given; else whether -f leaves it out

    @property
    def name(self):
        return self.region.name

    @property
    def max_buf(self):
        return max(self.bytes) if self.bytes else 0

    @property
    def total_bytes(self):
        return sum(self.bytes)


class Group:
    """A row summing regions (ALL, USR, ..., FLT, or one of the *-FLT rows)."""

    def __init__(self, type_, name, nloc, symbol=" "):
        self.type = type_
        self.name = name
        self.symbol = symbol
        self.visits = 0
        self.time = 0.0
        self.bytes = [0] * nloc

    def add(self, row):
        self.visits += row.visits
        self.time += row.time
        for i, value in enumerate(row.bytes):
            self.bytes[i] += value

    @property
    def max_buf(self):
        return max(self.bytes) if self.bytes else 0

    @property
    def total_bytes(self):
        return sum(self.bytes)


class Scenario:
    """The trace and memory a measurement would need: all regions, or without the ones a
    filter leaves out."""

    def __init__(self, estimate, rows):
        nloc = len(estimate.profile.locations)
        self.location_bytes = [0] * nloc
        records = [0] * nloc
        nodes = [0] * nloc
        for row in rows:
            for i in range(nloc):
                self.location_bytes[i] += row.bytes[i]
                records[i] += row.records[i]
                nodes[i] += row.nodes[i]
        # Framing of each location's .evt file (a location without events writes none).
        self.framing = [0] * nloc
        for i in range(nloc):
            if self.location_bytes[i]:
                chunks = -(-(self.location_bytes[i] + EVT_FILE_BYTES) // EVT_CHUNK_BYTES)
                self.framing[i] = EVT_FILE_BYTES + EVT_EXTRA_CHUNK_BYTES * (chunks - 1)
                self.location_bytes[i] += self.framing[i]
        self.records = records
        self.nodes = nodes
        self.trace_chunks = [max(1, -(-r // RAW_RECORDS_PER_CHUNK)) for r in records]
        self.profile_chunks = [max(1, -(-n // PROFILE_NODES_PER_CHUNK)) for n in nodes]
        # Chunks per process (location group) during the run, and with the encoding chunks.
        self.run_chunks = {}
        self.total_chunks = {}
        for i, location in enumerate(estimate.profile.locations):
            group = location.group.id
            need = self.trace_chunks[i] + self.profile_chunks[i]
            self.run_chunks[group] = self.run_chunks.get(group, 0) + need
            self.total_chunks[group] = self.total_chunks.get(group, 0) + need + 1

    @property
    def total_bytes(self):
        return sum(self.location_bytes)

    @property
    def max_buf(self):
        return max(self.location_bytes) if self.location_bytes else 0

    @property
    def max_run_chunks(self):
        return max(self.run_chunks.values()) if self.run_chunks else 0

    @property
    def total_memory(self):
        """The SCOREP_TOTAL_MEMORY (bytes) that avoids flushes."""
        chunks = max(self.total_chunks.values()) if self.total_chunks else 1
        return max(chunks * CHUNK_BYTES, MIN_TOTAL_MEMORY)


class Estimate:
    """The estimate for one profile; build it with :func:`estimate`.

    ``rows``: a RegionRow per visited region, in region id order. ``unfiltered`` and
    ``filtered`` (None without a filter) are Scenarios; ``scenario`` is the one the summary
    lines report (the filtered one when there is a filter)."""

    def __init__(self, profile, filter=None):
        self.profile = profile
        self.filter = filter
        try:
            visits = profile.values("visits", inclusive=False)
            times = profile.values("time", inclusive=False)
        except KeyError as error:
            raise ScoreError("%s: not a Score-P profile: %s" % (
                profile.path, str(error).strip("'\"").split(": ", 1)[-1]))
        nloc = len(profile.locations)
        if nloc == 0:
            raise ScoreError("%s: the profile has no locations" % profile.path)
        self.types = self._region_types()
        self._sizes()
        by_region = {}
        roots = set(id(r) for r in profile.roots)
        for cnode in profile.cnodes:
            region = cnode.region
            row = by_region.get(region.id)
            if row is None:
                row = by_region[region.id] = RegionRow(region, self.types[region.id], nloc)
            is_root = id(cnode) in roots
            if cnode.parameters:
                per_visit = sum(self._parameter_bytes(p) for p in cnode.parameters)
                records = RECORDS_PARAMETER * len(cnode.parameters)
                counts_visits = False
            elif is_root and region.paradigm == "measurement":
                per_visit = self.program_bytes
                records = RECORDS_PROGRAM
                counts_visits = True
            else:
                per_visit, records = self._region_bytes(region)
                counts_visits = True
            cvisits = visits[cnode.id]
            ctime = times[cnode.id]
            for i in range(nloc):
                v = cvisits[i]
                row.time += ctime[i]
                if v:
                    if counts_visits:
                        row.visits += v
                    row.bytes[i] += v * per_visit
                    row.records[i] += v * records
                    row.nodes[i] += 1
                elif is_root:
                    # Our profile gives every location the root node, visited or not.
                    row.nodes[i] += 1
        self.all_rows = [by_region[rid] for rid in sorted(by_region)]
        if filter is not None:
            for row in self.all_rows:
                row.filtered = row.type in _FILTERABLE and bool(filter.excludes(
                    row.region.name, row.region.mangled_name, row.region.file or None))
        self.unfiltered = Scenario(self, self.all_rows)
        self.filtered = None
        if filter is not None:
            self.filtered = Scenario(self, [r for r in self.all_rows if not r.filtered])
        self.scenario = self.filtered or self.unfiltered
        self._framing_row = self._framing_owner(by_region)
        self.rows = [r for r in self.all_rows if r.total_bytes or r.visits]
        self.total_time = sum(r.time for r in self.all_rows)

    # -- region types -------------------------------------------------------------------------

    def _region_types(self):
        profile = self.profile
        base = {}
        for region in profile.regions:
            paradigm = (region.paradigm or "").strip().lower()
            base[region.id] = _PARADIGM_TYPES.get(paradigm, "USR")
        # A user region is COM when a communication region lies below one of its call paths.
        below = {}
        for cnode in reversed(profile.deep_order()):
            node = profile.cnodes[cnode]
            flag = False
            for child in node.children:
                if below[child.id] or base[child.region.id] not in _NOT_COMMUNICATION:
                    flag = True
                    break
            below[cnode] = flag
        types = dict(base)
        for cnode in profile.cnodes:
            if below[cnode.id] and base[cnode.region.id] == "USR":
                types[cnode.region.id] = "COM"
        return types

    # -- event sizes --------------------------------------------------------------------------

    def _sizes(self):
        profile = self.profile
        keys = set()
        strings = set()
        for cnode in profile.cnodes:
            for kind, key, value in cnode.parameters:
                keys.add(key)
                if kind == "string":
                    strings.add(value)
        # Parameter ids start at 1 (0 is the measurement's own "leave-region").
        self.parameter_id_bytes = compressed_size(max(1, len(keys)))
        # Region names, canonical names and files come first among the strings.
        self.string_id_bytes = compressed_size(2 * len(profile.regions) + len(keys) + len(strings))
        argc = 1
        for key in ("Score-P::ProgramArguments::numberOfArguments",
                    "scorep::program_argument_count"):
            if key in profile.attrs:
                try:
                    argc = int(profile.attrs[key])
                except ValueError:
                    pass
        begin = TIMESTAMP_BYTES + 2 + compressed_size(1) + compressed_size(argc) + \
            argc * self.string_id_bytes
        end = TIMESTAMP_BYTES + 2 + compressed_size(0)
        self.program_bytes = begin + end
        self.nprocs = max(1, len(profile.location_groups))

    def _parameter_bytes(self, parameter):
        kind, _key, value = parameter
        if kind == "string":
            value_bytes = self.string_id_bytes
        else:
            try:
                value_bytes = compressed_size(value)
            except TypeError:
                value_bytes = 9
        return TIMESTAMP_BYTES + 2 + self.parameter_id_bytes + value_bytes

    def _region_bytes(self, region):
        """Bytes and raw records of one visit: enter and leave plus what an MPI call adds."""
        enter = TIMESTAMP_BYTES + 1 + compressed_size(region.id)
        size, records = 2 * enter, RECORDS_ENTER_LEAVE
        if (region.paradigm or "").lower() != "mpi":
            return size, records
        role = (region.role or "").lower()
        name = region.name.lower()
        peer = compressed_size(self.nprocs)
        # receiver/sender, communicator, tag, message length
        p2p = TIMESTAMP_BYTES + 2 + peer + 2 + 2 + 5
        request = TIMESTAMP_BYTES + 2 + 3
        if role in _COLLECTIVE_ROLES:
            size += TIMESTAMP_BYTES + 2                                  # MpiCollectiveBegin
            size += TIMESTAMP_BYTES + 2 + 1 + 2 + peer + 5 + 5          # MpiCollectiveEnd
            records += 1 + 3
        elif role == "point2point":
            short = name.rsplit(":", 1)[-1].rsplit(".", 1)[-1]
            if "sendrecv" in short:
                size += 2 * p2p
                records += 4
            elif any(s in short for s in ("isend", "ibsend", "issend", "irsend")):
                size += p2p + 3 + request                                # Isend + its completion
                records += 3 + 2
            elif "irecv" in short:
                size += request + p2p + 3                                # IrecvRequest + Irecv
                records += 2 + 3
            elif "send" in short or "recv" in short:
                size += p2p
                records += 2
        return size, records

    def _framing_owner(self, by_region):
        """The framing bytes of the .evt files are the measurement's: they go to the row of
        the program's root region (SCOREP)."""
        for root in self.profile.roots:
            if self.types[root.region.id] == "SCOREP":
                row = by_region[root.region.id]
                break
        else:
            return None
        for i, value in enumerate(self.unfiltered.framing):
            row.bytes[i] += value
        return row

    # -- groups ---------------------------------------------------------------------------------

    def groups(self):
        """The group rows without a filter: ALL first, then the types present."""
        nloc = len(self.profile.locations)
        symbol = "-" if self.filter is not None else " "
        all_group = Group("ALL", "ALL", nloc, symbol)
        by_type = {}
        for row in self.rows:
            group = by_type.get(row.type)
            if group is None:
                group = by_type[row.type] = Group(row.type, row.type, nloc, symbol)
            group.add(row)
            all_group.add(row)
        return all_group, self._ordered(by_type)

    def filtered_groups(self):
        """The group rows after filtering: ALL-FLT, FLT (what is left out), <type>-FLT."""
        nloc = len(self.profile.locations)
        all_group = Group("ALL", "ALL-FLT", nloc, "*")
        flt = Group("FLT", "FLT", nloc, "+")
        by_type = {}
        for row in self.rows:
            if row.filtered:
                flt.add(row)
                continue
            group = by_type.get(row.type)
            if group is None:
                symbol = "*" if row.type in _FILTERABLE else "-"
                group = by_type[row.type] = Group(row.type, row.type + "-FLT", nloc, symbol)
            group.add(row)
            all_group.add(row)
        # Framing of the filtered trace differs from the unfiltered one.
        if self._framing_row is not None and self._framing_row.type in by_type:
            delta = [f - u for f, u in zip(self.filtered.framing, self.unfiltered.framing)]
            group = by_type[self._framing_row.type]
            for i, d in enumerate(delta):
                group.bytes[i] += d
                all_group.bytes[i] += d
        groups = self._ordered(by_type)
        if flt.visits or flt.total_bytes:
            groups.insert(0, flt)
        return all_group, groups

    @staticmethod
    def _ordered(by_type):
        order = {t: i for i, t in enumerate(_TYPE_ORDER)}
        return [by_type[t] for t in sorted(by_type, key=lambda t: (order.get(t, len(order)), t))]


def estimate(profile, filter=None):
    """The Estimate of a profile read with :func:`scorep.cube.read`; ``filter`` is a
    :class:`scorep._filter.Filter` or None."""
    return Estimate(profile, filter)


