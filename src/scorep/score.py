"""scorep-score: estimates the OTF2 trace and the SCOREP_TOTAL_MEMORY of a tracing run from a
CUBE4 profile (``profile.cubex``), shows what a filter file would leave out (``-f``) and writes
an initial filter file (``-g``), like Score-P's tool of the same name.

Usage: ``scorep-score [options] <experiment directory | profile.cubex>`` (also
``python -m scorep.score``); ``-h`` lists the options.

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

import datetime
import math
import os
import sys

__all__ = ["main", "estimate", "Estimate", "ScoreError", "compressed_size",
           "readable_bytes"]

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

FILTER_FILE_NAME = "initial_scorep.filter"

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

SORT_KEYS = {
    "maxbuffer": "maxbuffer", "maxbuf": "maxbuffer", "totaltime": "totaltime",
    "visits": "visits", "name": "name", "timepervisit": "timepervisit",
}

# -g defaults: Score-P's (a region is listed when it holds at least 1 % of max_buf and one
# visit takes at most 1 us), all conditions must hold.
GENERATE_DEFAULTS = {"bufferpercent": 1.0, "timepervisit": 1.0, "visits": 0,
                     "bufferabsolute": 0.0, "type": "usr"}

USAGE = """\
Usage: scorep-score [options] <experiment directory | profile.cubex>

Estimates the size of an OTF2 trace and the SCOREP_TOTAL_MEMORY a tracing run needs from a
CUBE4 profile, and helps to filter regions out of the measurement.

Options:
  -r            list every region after the groups
  -s MODE       sort rows by MODE: maxbuffer (default; also maxbuf), totaltime, visits,
                timepervisit or name
  -f FILE       show the effect of the Score-P filter file FILE: '+' marks regions it
                leaves out; the groups are shown before (-) and after filtering (*-FLT,
                FLT = what is left out); the estimates are for the filtered measurement
  -g [LIST]     write the initial filter file ./initial_scorep.filter; it excludes every
                region that meets all conditions of LIST, KEY=VALUE[,KEY=VALUE]*:
                  bufferpercent=P   holds at least P % of max_buf (default 1)
                  timepervisit=U    takes at most U microseconds per visit (default 1)
                  visits=N          is visited at least N times (default 0)
                  bufferabsolute=M  holds at least M MiB of max_buf (default 0)
                  type=T            is of type usr, com or both (default usr)
                an existing file of that name is moved aside first
  -m            show mangled (canonical, module:qualname) region names
  --ranks       instead of the estimate, the load balance over the MPI ranks (over the
                threads when there is one process): per region the min, mean, max and
                standard deviation of its time per rank, the ranks with the least and the
                most, and max/mean; sorted by the largest max (-s totaltime, visits or name
                sort by total, visits or name); with -r every region, else the top 20
  -h, --help    show this help and exit
  --version     show scorep's version and exit

Use the filter file with `python -m scorep --filter=FILE ...` or SCOREP_FILTERING_FILE=FILE.
"""


class ScoreError(Exception):
    """Something that ends scorep-score with one line on stderr; ``status`` is the exit code
    (2 for wrong usage)."""

    def __init__(self, message, status=1):
        Exception.__init__(self, message)
        self.status = status


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


def readable_bytes(count):
    """Score-P's rendering of a byte count: whole units of 1024 rounded up, switching to the
    next unit above 4 of it, so that it can be given to SCOREP_TOTAL_MEMORY as it is. (Score-P
    adds 1 even when the division is exact; this does not.)"""
    exponent = 0
    while count > 4 * 1024 ** (exponent + 1) and exponent < 6:
        exponent += 1
    # Rounded up, so that the hint never asks for less than the estimate.
    value = -(-count // 1024 ** exponent)
    return "%d%s" % (value, (" bytes", "kB", "MB", "GB", "TB", "PB", "EB")[exponent])


def with_commas(number):
    return "{:,}".format(int(number))


def fixed(value, digits):
    text = "%.*f" % (digits, value)
    # Exclusive times derived by subtraction can be a hair below zero.
    return text[1:] if text.startswith("-") and float(text) == 0 else text


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


# ---- output --------------------------------------------------------------------------------

def _sort(items, mode):
    if mode == "maxbuffer":
        return sorted(items, key=lambda r: -r.max_buf)
    if mode == "totaltime":
        return sorted(items, key=lambda r: -r.time)
    if mode == "visits":
        return sorted(items, key=lambda r: -r.visits)
    if mode == "timepervisit":
        return sorted(items, key=lambda r: _per_visit(r))
    return sorted(items, key=lambda r: r.name)


def _per_visit(row):
    return row.time / row.visits * 1e6 if row.visits else 0.0


class _Table:
    """Score-P's columns; widths start at the headers' and grow to fit every row shown."""

    def __init__(self, total_time):
        self.total_time = total_time
        self.widths = {"type": 8, "bytes": 10, "visits": 6, "time": 7, "per_visit": 14}

    def fit(self, rows):
        w = self.widths
        for row in rows:
            w["type"] = max(w["type"], len(row.type))
            w["bytes"] = max(w["bytes"], len(with_commas(row.max_buf)))
            w["visits"] = max(w["visits"], len(with_commas(row.visits)))
            w["time"] = max(w["time"], len(fixed(row.time, 2)))
            w["per_visit"] = max(w["per_visit"], len(fixed(_per_visit(row), 2)))

    def header(self):
        w = self.widths
        return "flt %*s %*s %*s %*s time[%%] %*s  region" % (
            w["type"], "type", w["bytes"], "max_buf[B]", w["visits"], "visits",
            w["time"], "time[s]", w["per_visit"], "time/visit[us]")

    def line(self, row, symbol, name):
        w = self.widths
        share = 100.0 * row.time / self.total_time if self.total_time else 0.0
        return " %s  %*s %*s %*s %*s %7s %*s  %s" % (
            symbol, w["type"], row.type, w["bytes"], with_commas(row.max_buf),
            w["visits"], with_commas(row.visits), w["time"], fixed(row.time, 2),
            fixed(share, 1), w["per_visit"], fixed(_per_visit(row), 2), name)


def _region_symbol(row):
    if row.filtered is None:
        return " "
    return "+" if row.filtered else "-"


def _display_name(row, mangled):
    return row.region.mangled_name if mangled else row.region.name


def format_report(est, sort="maxbuffer", show_regions=False, mangled=False):
    """The text scorep-score prints (without the -g message)."""
    scenario = est.scenario
    memory = scenario.total_memory
    lines = [
        "Estimated aggregate size of event trace:                   %s"
        % readable_bytes(scenario.total_bytes),
        "Estimated requirements for largest trace buffer (max_buf): %s"
        % readable_bytes(scenario.max_buf),
        "Estimated memory requirements (SCOREP_TOTAL_MEMORY):       %s" % readable_bytes(memory),
        "(hint: When tracing set SCOREP_TOTAL_MEMORY=%s to avoid intermediate flushes"
        % readable_bytes(memory),
        " or reduce requirements using USR regions filters.)",
        "",
    ]
    all_group, groups = est.groups()
    shown = [all_group] + groups
    filtered = None
    if est.filter is not None:
        f_all, f_groups = est.filtered_groups()
        filtered = [f_all] + _sort(f_groups, sort)
        shown += filtered
    regions = _sort(est.rows, sort) if show_regions else []
    table = _Table(all_group.time)
    table.fit(shown + regions)
    lines.append(table.header())
    for group in [all_group] + _sort(groups, sort):
        lines.append(table.line(group, group.symbol, group.name))
    if filtered is not None:
        lines.append("")
        for group in filtered:
            lines.append(table.line(group, group.symbol, group.name))
    if show_regions:
        lines.append("")
        for row in regions:
            lines.append(table.line(row, _region_symbol(row), _display_name(row, mangled)))
    return "\n".join(lines) + "\n"


# ---- -g: the initial filter file -----------------------------------------------------------

def parse_generate_options(text):
    """-g's KEY=VALUE[,KEY=VALUE]* (case and blanks do not matter, as in Score-P)."""
    options = dict(GENERATE_DEFAULTS)
    for item in (text or "").split(","):
        token = "".join(item.split()).lower()
        if not token:
            continue
        key, sep, value = token.partition("=")
        if not sep or key not in GENERATE_DEFAULTS:
            raise ScoreError("-g: %r is not KEY=VALUE with KEY one of %s" % (
                item.strip(), ", ".join(sorted(GENERATE_DEFAULTS))), 2)
        if key == "type":
            if value not in ("usr", "com", "both"):
                raise ScoreError("-g: type=%s: expected usr, com or both" % value, 2)
            options[key] = value
            continue
        try:
            number = int(value) if key == "visits" else float(value)
        except ValueError:
            raise ScoreError("-g: %s=%s is not a number" % (key, value), 2)
        if number < 0 or not math.isfinite(number):
            raise ScoreError("-g: %s=%s must not be negative" % (key, value), 2)
        if key == "bufferpercent" and number > 100:
            raise ScoreError("-g: bufferpercent=%s: a percentage lies in 0-100" % value, 2)
        options[key] = number
    return options


def _escape_pattern(name):
    """A name as a literal filter pattern: wildcards, spaces, '#' and '\\' escaped."""
    return "".join("\\" + c if c in "\\*?[]! #" else c for c in name)


def filter_candidates(est, options, sort="maxbuffer"):
    """The regions -g excludes, in the order of the sort key."""
    max_buf = est.scenario.max_buf
    types = {"usr": ("USR",), "com": ("COM",), "both": ("USR", "COM")}[options["type"]]
    chosen = []
    for row in _sort(est.rows, sort):
        if row.filtered or row.type not in types or not row.visits:
            continue
        share = 100.0 * row.max_buf / max_buf if max_buf else 0.0
        if share >= options["bufferpercent"] and \
                _per_visit(row) <= options["timepervisit"] and \
                row.visits >= options["visits"] and \
                row.max_buf / float(1 << 20) >= options["bufferabsolute"]:
            chosen.append(row)
    return chosen


def format_filter_file(est, options, candidates, filter_path=None):
    max_buf = est.scenario.max_buf
    total_time = est.total_time
    lines = [
        "# Initial filter file, starting point for further adaptation, written by",
        "# scorep-score -g from %s." % est.profile.path,
        "#",
        "# Considerations:",
        "#  - check possible wildcard options",
        "#  - check selected functions for relevancy",
        "#    (w.r.t. your knowledge of the application)",
        "#",
        "# Generated with the following parameters:",
        "#  - A region has to use at least %g%% of the estimated trace buffer (max_buf)."
        % options["bufferpercent"],
        "#  - A region has to have a time/visits value of at most %g us." % options["timepervisit"],
    ]
    if options["visits"]:
        lines.append("#  - A region has to have at least %d visits." % options["visits"])
    if options["bufferabsolute"]:
        lines.append("#  - A region has to use at least %g MiB of max_buf."
                     % options["bufferabsolute"])
    lines.append("#  - A region has to be of type %s." % {
        "usr": "USR", "com": "COM", "both": "USR or COM"}[options["type"]])
    lines += [
        "#",
        "# Each excluded region comes with its numbers from the profile; MANGLED matches the",
        "# canonical name (module:qualname), so only that function is left out.",
        "# Use it with: python -m scorep --filter=%s <script>" % FILTER_FILE_NAME,
        "SCOREP_REGION_NAMES_BEGIN",
    ]
    if not candidates:
        lines.append("    # No region meets all of the conditions above.")
    seen = set()
    for row in candidates:
        mangled = row.region.mangled_name or row.region.name
        share = 100.0 * row.max_buf / max_buf if max_buf else 0.0
        time_share = 100.0 * row.time / total_time if total_time else 0.0
        lines += [
            "    # type=%s max_buf=%s (%s%% of max_buf) visits=%s, time=%ss (%s%%), "
            "time/visit=%sus" % (row.type, with_commas(row.max_buf), fixed(share, 1),
                                 with_commas(row.visits), fixed(row.time, 2),
                                 fixed(time_share, 1), fixed(_per_visit(row), 2)),
            "    # name='%s'" % row.region.name,
            "    # file='%s'" % row.region.file,
        ]
        if mangled in seen:
            lines.append("    # (same canonical name as a region above)")
        else:
            seen.add(mangled)
            lines.append("    EXCLUDE MANGLED %s" % _escape_pattern(mangled))
    previous = [r for r in est.rows if r.filtered]
    if previous:
        lines += ["", "    # Regions left out by the filter file given with -f: %s"
                  % (filter_path or est.filter.path)]
        for row in previous:
            mangled = row.region.mangled_name or row.region.name
            if mangled in seen:
                continue
            seen.add(mangled)
            lines += ["    # name='%s'" % row.region.name,
                      "    # file='%s'" % row.region.file,
                      "    EXCLUDE MANGLED %s" % _escape_pattern(mangled)]
    lines.append("SCOREP_REGION_NAMES_END")
    return "\n".join(lines) + "\n"


def _move_aside(path):
    if not os.path.lexists(path):
        return None
    stamp = datetime.datetime.fromtimestamp(os.lstat(path).st_mtime).strftime("%Y%m%d_%H%M%S")
    target = "%s-%s" % (path, stamp)
    n = 1
    while os.path.lexists(target):
        n += 1
        target = "%s-%s-%d" % (path, stamp, n)
    os.rename(path, target)
    return target


def write_filter_file(est, options, sort="maxbuffer", directory="."):
    """Writes initial_scorep.filter into ``directory``; returns (path, moved_to, candidates)."""
    candidates = filter_candidates(est, options, sort)
    text = format_filter_file(est, options, candidates)
    path = os.path.abspath(os.path.join(directory, FILTER_FILE_NAME))
    try:
        moved = _move_aside(path)
        with open(path, "w") as out:
            out.write(text)
    except OSError as error:
        raise ScoreError("cannot write %s: %s" % (path, error.strerror or error))
    return path, moved, candidates


def format_generate_message(path, moved, candidates):
    lines = ["", "An initial filter file template has been generated: '%s'" % path]
    if candidates:
        lines.append("It excludes %d region(s): %s" % (
            len(candidates), ", ".join(r.region.name for r in candidates)))
    else:
        lines.append("No region meets the conditions: it excludes nothing.")
    if moved:
        lines.append("Moved existing filter file to: '%s'" % moved)
    lines += [
        "",
        "To use this file for filtering, pass it to the measurement:",
        "",
        "    python -m scorep --filter=%s <script>" % FILTER_FILE_NAME,
        "",
        "or set SCOREP_FILTERING_FILE=%s. The file is annotated with comments;" % FILTER_FILE_NAME,
        "check that the selection suits you and add or remove regions as needed.",
    ]
    return "\n".join(lines) + "\n"


# ---- --ranks: the load balance over the ranks -------------------------------------------

RANK_TOP_REGIONS = 20


def rank_balance(profile):
    """(unit, unit names, rows): unit is "rank" (one per process) or "thread" (one process);
    each row is (region, per-unit exclusive seconds, per-unit visits, (min, mean, max,
    stddev)) for every region visited somewhere. Each unit's value sums its threads."""
    from scorep.report.analysis import balance_stats
    from scorep.report.model import ReportError
    from scorep.report.readers import tree_from_profile
    try:
        tree = tree_from_profile(profile)
    except ReportError as error:
        raise ScoreError(_one_line(error))
    if len(tree.ranks) > 1:
        unit, names = "rank", [r.name for r in tree.ranks]
        units = [r.locations for r in tree.ranks]
    else:
        unit, names = "thread", [l.name for l in tree.locations]
        units = [[l.index] for l in tree.locations]
    rows = []
    for stat in tree.flat():
        if not stat.visits and not stat.excl:
            continue
        times = [sum(stat.per_loc_excl[l] for l in locs) for locs in units]
        visits = [sum(stat.per_loc_visits[l] for l in locs) for locs in units]
        rows.append((stat.region, times, visits, balance_stats(times)))
    return unit, names, rows


def format_rank_balance(profile, sort="maxbuffer", show_all=False, mangled=False):
    unit, names, rows = rank_balance(profile)
    by_name = {r.name: r for r in profile.regions}
    def label(region):
        cube_region = by_name.get(region.name)
        if mangled and cube_region is not None and cube_region.mangled_name:
            return cube_region.mangled_name
        return region.name
    keys = {
        "totaltime": lambda row: (-sum(row[1]), row[0].name),
        "visits": lambda row: (-sum(row[2]), row[0].name),
        "name": lambda row: (row[0].name,),
    }
    rows.sort(key=keys.get(sort, lambda row: (-row[3][2], row[0].name)))
    shown = rows if show_all else rows[:RANK_TOP_REGIONS]
    title = "Exclusive time per %s of each region, over %d %ss" % (unit, len(names), unit)
    if unit == "thread":  # ranks are their own numbers; threads need their names
        title += " (%s)" % ", ".join("%d = %s" % (i, n) for i, n in enumerate(names))
    lines = [title, ""]
    header = "%10s %10s %10s %10s %8s %6s %6s %12s  region" % (
        "min[s]", "mean[s]", "max[s]", "stddev[s]", "max/mean", "min@", "max@", "visits")
    lines.append(header)
    for region, times, visits, (lo, mean, hi, dev) in shown:
        ratio = "%8.2f" % (hi / mean) if mean > 0 else "%8s" % "-"
        lines.append("%10s %10s %10s %10s %s %6d %6d %12s  %s" % (
            fixed(lo, 6), fixed(mean, 6), fixed(hi, 6), fixed(dev, 6), ratio,
            times.index(lo), times.index(hi), with_commas(sum(visits)), label(region)))
    if len(shown) < len(rows):
        lines.append("(%d more regions: -r lists all)" % (len(rows) - len(shown)))
    return "\n".join(lines) + "\n"


# ---- command line --------------------------------------------------------------------------

class Options:
    def __init__(self):
        self.path = None
        self.show_regions = False
        self.sort = "maxbuffer"
        self.filter_file = None
        self.generate = None  # None, or the -g options
        self.mangled = False
        self.ranks = False
        self.help = False
        self.version = False


def parse_args(argv):
    opts = Options()
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-h", "--help"):
            opts.help = True
        elif arg == "--version":
            opts.version = True
        elif arg == "-r":
            opts.show_regions = True
        elif arg == "-m":
            opts.mangled = True
        elif arg == "--ranks":
            opts.ranks = True
        elif arg in ("-s", "-f"):
            if i + 1 >= len(argv):
                raise ScoreError("%s needs a value" % arg, 2)
            i += 1
            if arg == "-s":
                mode = SORT_KEYS.get(argv[i].lower())
                if mode is None:
                    raise ScoreError("-s %s: unknown sorting mode (use maxbuffer, totaltime, "
                                     "visits, timepervisit or name)" % argv[i], 2)
                opts.sort = mode
            else:
                opts.filter_file = argv[i]
        elif arg.startswith("-s") and len(arg) > 2:
            mode = SORT_KEYS.get(arg[2:].lower())
            if mode is None:
                raise ScoreError("%s: unknown sorting mode" % arg, 2)
            opts.sort = mode
        elif arg == "-g":
            # The list is optional: the next argument is it only when it has KEY=VALUE form
            # and names no file, so `-g profile.cubex` keeps working.
            following = argv[i + 1] if i + 1 < len(argv) else ""
            if "=" in following and not following.startswith("-") and \
                    not os.path.exists(following):
                i += 1
                opts.generate = parse_generate_options(argv[i])
            else:
                opts.generate = parse_generate_options("")
        elif arg.startswith("-g") and "=" in arg:
            opts.generate = parse_generate_options(arg[2:])
        elif arg.startswith("-") and arg != "-":
            raise ScoreError("unknown option %s (see scorep-score --help)" % arg, 2)
        else:
            if opts.path is not None:
                raise ScoreError("one profile only (got %s and %s)" % (opts.path, arg), 2)
            opts.path = arg
        i += 1
    if opts.ranks and (opts.filter_file is not None or opts.generate is not None):
        raise ScoreError("--ranks does not go with -f or -g", 2)
    if opts.path is None and not (opts.help or opts.version):
        raise ScoreError("no profile given: scorep-score [options] "
                         "<experiment directory | profile.cubex> (see --help)", 2)
    return opts


def _one_line(error):
    return " ".join(str(error).split()) or type(error).__name__


def run(argv, out):
    opts = parse_args(argv)
    if opts.help:
        out.write(USAGE)
        return 0
    if opts.version:
        from scorep._version import __version__
        out.write("scorep-score (scorep %s)\n" % __version__)
        return 0
    from scorep import cube
    try:
        profile = cube.read(opts.path)
    except cube.CubeError as error:
        raise ScoreError(_one_line(error))
    if opts.ranks:
        out.write(format_rank_balance(profile, opts.sort, opts.show_regions, opts.mangled))
        out.flush()
        return 0
    filter = None
    if opts.filter_file is not None:
        from scorep._filter import Filter, FilterError
        if not os.path.isfile(opts.filter_file):
            raise ScoreError("%s: no such filter file" % opts.filter_file)
        try:
            filter = Filter(opts.filter_file)
        except FilterError as error:
            raise ScoreError(_one_line(error))
        except ImportError as error:
            raise ScoreError("-f needs the measurement core (scorep._bindings): %s"
                             % _one_line(error))
    est = estimate(profile, filter)
    text = format_report(est, opts.sort, opts.show_regions, opts.mangled)
    if opts.generate is not None:
        path, moved, candidates = write_filter_file(est, opts.generate, opts.sort)
        text += format_generate_message(path, moved, candidates)
    out.write(text)
    out.flush()
    return 0


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    try:
        return run(list(argv), sys.stdout)
    except ScoreError as error:
        sys.stderr.write("scorep-score: %s\n" % _one_line(error))
        return error.status
    except BrokenPipeError:
        # `scorep-score ... | head`: the reader is gone; flushing at exit would fail again.
        sys.stdout = None
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("scorep-score: interrupted\n")
        return 130
    except Exception as error:  # never a traceback: one line naming what went wrong
        sys.stderr.write("scorep-score: %s: %s\n" % (type(error).__name__, _one_line(error)))
        return 1


if __name__ == "__main__":
    sys.exit(main())
