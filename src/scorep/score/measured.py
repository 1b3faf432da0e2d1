"""The byte and memory model of our own traces: what scorep-score estimates for a profile
this tool wrote. The sizes are the ones our trace writer really produces (measured); the
memory model is our core's (chunks of the SCOREP_TOTAL_MEMORY budget).

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
- ProgramBegin: 9 + 2 + name id + argc + one id per argument, plus its attribute list
  with the process id (6 bytes + the pid compressed: 9 bytes for pids below 65536, which is
  assumed), ProgramEnd: 9 + 2 + exit status (12 bytes for 0). argc is the program root's
  ``Score-P::ProgramArguments::numberOfArguments`` (the program's own arguments, argv[1:]);
- per location file: a chunk header of 18 bytes and 2 closing bytes (20 bytes), plus about 30
  bytes per further 256 KiB chunk (its header, an end marker, the unused tail: measured 61
  bytes more for 3 chunks than 24 n predicts, 257 more for 10). These framing bytes are
  counted in the SCOREP row, for the unfiltered trace also when a filter is given (so that
  SCOREP-FLT equals SCOREP, as in Score-P; the filtered trace's framing is smaller by at most
  30 bytes per 256 KiB chunk it saves);
- ids the profile does not hold are estimated: parameter ids from the number of parameter
  names, string ids from the number of definitions; region ids are the profile's (with MPI a
  rank's trace uses its local ids, of the same magnitude). MPI events (MpiSend/Recv,
  Isend/Irecv and their completions, collective begin/end) are computed from the OTF2
  encoding, not measured. So are, for call paths of Score-P's artificial regions, a
  ``MEASUREMENT OFF`` visit (two MeasurementOnOff records, 12 bytes each) and a
  ``TRACE BUFFER FLUSH`` visit (one BufferFlush record, 19 bytes); other non-root regions of
  paradigm measurement write no events. Regions dropped by a rewind are counted;
- I/O calls (regions of paradigm io, with SCOREP_IO_POSIX=true): besides enter and leave the
  I/O events our wrappers write for a call on a handle the measurement knows (a file, not
  a socket or a pipe; the profile cannot tell them apart, so every visit is counted with
  its events), computed from the OTF2 encoding and checked against traces
  (tests/test_io.py): IoCreateHandle 15 + handle id bytes (open, creat, fdopen; fopen
  creates the stream's and its descriptor's), IoDestroyHandle 11 + handle (close; fclose:
  two), IoSeek 14 + handle for an offset of 0 (lseek, fseek), IoOperationBegin and
  IoOperationComplete 14 and 12 + handle + twice the size of the bytes moved (read,
  write, their p/v variants, fread, fwrite; the bytes per visit are the call path's
  io_bytes_read + io_bytes_written over its visits) and with unknown bytes for flushes
  (fsync, fdatasync, fflush), IoDuplicateHandle 13 + two handles (dup, dup2, dup3). Handle
  ids are estimated from the number of handles the profile's calls create (plus the ten
  or so open at the start);
- with -c N (hardware counters, which our measurement does not record): per enter and per
  leave one OTF2 Metric record with N values, of the size ``otf2-estimator`` gives (it shares
  the event's timestamp); the memory hint does not include them.

- sampling (a profile with Score-P's ``hits`` metric, --sampling): a Python function's
  visits write no events (it is sampled); every hit is a CallingContextSample, 16 bytes
  (timestamp, type, length, the calling context, the unwind distance and the interrupt
  generator, compressed; measured: 3 104 bytes for 194 more samples) plus 1 for calling-context
  ids from 256 on, and 2 raw records; a recorded region (user, MPI, I/O) is entered with a
  CallingContextEnter, 4 bytes more than an Enter (measured: 28 000 bytes for 1 000 more
  visits of a user region, against 24 000). The hits column is shown, as Score-P's
  scorep-score shows it for sampled profiles;

Against the trace of the same run (tests/test_score.py, SIZE_TOLERANCE = 1 %) the estimate
missed by 2 bytes or less per program argument beyond the first, and by a few bytes per
256 KiB chunk.

max_buf[B] is the estimate of one location's trace (its ``.evt`` file) in these bytes; the
largest over the locations is max_buf, and group and region rows show their share on the
location where it is largest (as Score-P does).

Memory model (SCOREP_TOTAL_MEMORY)
----------------------------------
The budget is split into chunks (the core's ``CHUNK_SIZE``, 256 KiB); a flush happens when
a location needs a chunk and the budget has none left (``src/scorep/_native/core/memory.h``).
Per location:

- trace: our event path stores raw records (``TRACE_RECORD_SIZE``, 16 bytes; enter, leave:
  one record; a parameter, ProgramEnd, MpiSend/Recv: two; Isend/Irecv, MpiCollectiveEnd:
  three; ProgramBegin, MpiCollectiveBegin: one) in chunks of (262144 - 16) / 16 = 16 383
  records; a record group never straddles chunks, so 16 381 are counted per chunk; at least
  one chunk;
- profile: call-path nodes come in blocks of ``PROFILE_BLOCK_NODES`` (2 048; 128-byte nodes, two cache lines)
  per chunk; every call path visited on the location is a node, parameter call paths included,
  plus the root;
- at the end each location also takes one chunk to encode its records into OTF2.

SCOREP_TOTAL_MEMORY = the largest sum over the locations of one process, in chunks, times the
chunk size, at least 1 MiB (the smallest value the measurement accepts), printed rounded up.
The run itself needs the chunks without the encoding chunks (``Scenario.max_run_chunks``): a
budget of exactly that many does not flush, one chunk less flushes once
(``tests/test_score.py`` checks both, and that the printed hint does not flush). Profiling
is assumed to stay on in the tracing run (Score-P's default); without it the hint is high by
the node blocks.
"""

from scorep import _native
from scorep.measure.config import MIN_TOTAL_MEMORY
from scorep._errors import MeasurementError, one_line
from scorep.score import model
from scorep.score.model import ScoreError, paradigm

TIMESTAMP_BYTES = 9
EVT_FILE_BYTES = 20          # chunk header (18) and the closing bytes (2) of one .evt file
EVT_EXTRA_CHUNK_BYTES = 30   # header, end marker and unused tail of every further chunk
MEASUREMENT_ON_OFF_BYTES = TIMESTAMP_BYTES + 3   # type, length, mode
PROCESS_ID_ATTRIBUTE_BYTES = 6 + 3               # ProgramBegin's attribute list, pid < 65536
BUFFER_FLUSH_BYTES = TIMESTAMP_BYTES + 10        # type, length, the 8-byte stop time

SAMPLE_BYTES = TIMESTAMP_BYTES + 2 + 2 + 2 + 1    # cc id and unwind distance below 256
CONTEXT_ENTER_EXTRA_BYTES = 4    # CallingContextEnter beyond Enter (length, unwind distance)
# Regions a program names itself (user regions, instrumenter sections, the error region):
# recorded with sampling too, where Python functions are sampled.
_NAMED_PREFIXES = ("user:", "user_instrumenter:", "error_region")
_COLLECTIVE_ROLES = ("barrier", "one2all", "all2one", "all2all", "other collective")


IO_PRECREATED_HANDLES = 10   # standard streams and inherited descriptors, roughly


def trace_records():
    """Raw trace records per event, as the trace substrate's decoder walks them
    (``_bindings.TRACE_RECORDS``: a record with a 64-bit value takes a payload record)."""
    return _native.constant("TRACE_RECORDS")


def io_calls():
    """The I/O events a visit of each I/O region writes, as the I/O adapter's table says
    (``_bindings.IO_CALLS``: region -> (events, count), events one of create, destroy,
    seek, transfer, flush, duplicate, none)."""
    return _native.constant("IO_CALLS")


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


def core_sizes():
    """(chunk bytes, raw records per chunk, profile nodes per chunk) as the core defines
    them."""
    try:
        chunk = _native.constant("CHUNK_SIZE")
        record = _native.constant("TRACE_RECORD_SIZE")
        nodes = _native.constant("PROFILE_BLOCK_NODES")
        header = _native.constant("TRACE_CHUNK_HEADER_SIZE")
    except MeasurementError as error:
        raise ScoreError("scoring a profile of this tool needs its measurement core: %s"
                         % one_line(error))
    # Two slots of slack: a three-record group that does not fit moves on to the next chunk.
    return chunk, (chunk - header) // record - 2, nodes


class MeasuredModel:
    """Units are the profile's locations: each writes one ``.evt`` file."""

    def __init__(self, est):
        profile = est.profile
        # A sampled profile (Score-P's hits metric): samples, not visits, of Python functions.
        self.sampling = any(m.uniq_name == "hits" for m in profile.metrics)
        self.has_hits = self.sampling
        self.hit_values = profile.values("hits", inclusive=False) if self.sampling else None
        self.sample_bytes = SAMPLE_BYTES + (1 if len(profile.cnodes) >= 256 else 0)
        self.units = [location.name for location in profile.locations]
        self.chunk_bytes, self.records_per_chunk, self.nodes_per_chunk = core_sizes()
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
        argc = 0
        for attrs in [root.region.attrs for root in profile.roots] + [profile.attrs]:
            for key in ("Score-P::ProgramArguments::numberOfArguments",
                        "scorep::program_argument_count"):
                if key in attrs:
                    try:
                        argc = max(argc, int(attrs[key]))
                    except ValueError:
                        pass
        begin = TIMESTAMP_BYTES + 2 + self.string_id_bytes + compressed_size(argc) + \
            argc * self.string_id_bytes + PROCESS_ID_ATTRIBUTE_BYTES
        end = TIMESTAMP_BYTES + 2 + compressed_size(0)
        self.program_bytes = begin + end
        self.nprocs = max(1, len(profile.location_groups))
        self.records = trace_records()
        self._io_setup(est)
        self.metric_bytes = 0
        if est.dense:
            from scorep.score.scorep_rules import otf2_event_sizes
            name = "Metric %d" % est.dense
            self.metric_bytes = 2 * otf2_event_sizes({"Metric": est.dense}, [name])[name]

    def fill(self, est):
        profile = est.profile
        rows = est.all_rows
        nloc = len(self.units)
        roots = set(id(r) for r in profile.roots)
        root_row = None
        folded = profile.folded() or {}
        for cnode in profile.cnodes:
            region = cnode.region
            if region.name == "COLLAPSE" and cnode.id in folded:
                # The calls COLLAPSE holds are in the trace as what they are: counted in
                # their own functions' rows.
                self._fill_folded(est, folded[cnode.id][1])
                continue
            row = rows[region.id]
            is_root = id(cnode) in roots
            if cnode.parameters:
                per_visit = sum(self._parameter_bytes(p) for p in cnode.parameters)
                records = self.records["parameter"] * len(cnode.parameters)
                counts_visits = False
            elif is_root and region.paradigm == "measurement":
                per_visit = self.program_bytes
                records = self.records["program_begin"] + self.records["program_end"]
                counts_visits = True
                if row.type == "SCOREP":
                    root_row = row
            else:
                per_visit, records = self._region_bytes(region)
                counts_visits = True
                if (region.paradigm or "").lower() == "io":
                    extra, extra_records = self._io_bytes(region, cnode, est)
                    per_visit += extra
                    records += extra_records
            if self.sampling and not cnode.parameters and not is_root and \
                    paradigm(region) not in ("measurement", "mpi", "io") and \
                    region.name != "MEASUREMENT OFF":
                if region.name.startswith(_NAMED_PREFIXES):
                    per_visit += CONTEXT_ENTER_EXTRA_BYTES
                else:
                    per_visit, records = 0, 0  # a Python function: sampled
            cvisits = est.visit_values[cnode.id]
            ctime = est.time_values[cnode.id]
            chits = self.hit_values[cnode.id] if self.sampling else [0] * nloc
            for i in range(nloc):
                v, h = cvisits[i], int(chits[i])
                est.add(row.type, row, i, v * per_visit + h * self.sample_bytes,
                        v if counts_visits else 0, h, ctime[i])
                if v or h:
                    row.records[i] += v * records + h * self.records["sample"]
                    row.nodes[i] += 1
                elif is_root:
                    # Our profile gives every location the root node, visited or not.
                    row.nodes[i] += 1
        if root_row is not None:
            # Framing of each location's .evt file (a location without events writes none):
            # the measurement's own bytes, in the SCOREP row.
            for i in range(nloc):
                events = sum(r.bytes[i] for r in rows)
                if events:
                    chunks = -(-(events + EVT_FILE_BYTES) // self.chunk_bytes)
                    framing = EVT_FILE_BYTES + EVT_EXTRA_CHUNK_BYTES * (chunks - 1)
                    est.add(root_row.type, root_row, i, framing, 0, 0, 0.0)

    def _fill_folded(self, est, pairs):
        regions = est.profile.regions
        for l, _, callee, calls, _, _, _, excl in pairs:
            row = est.all_rows[callee]
            per_visit, records = self._region_bytes(regions[callee])
            est.add(row.type, row, l, calls * per_visit, calls, 0, excl)
            row.records[l] += calls * records
            row.nodes[l] += 1

    def _io_setup(self, est):
        """What the I/O model needs from the profile: bytes moved per call path and the
        size of a handle id."""
        profile = est.profile
        self.io_calls = io_calls()
        self.io_values = []
        for name in ("io_bytes_read", "io_bytes_written"):
            try:
                self.io_values.append(profile.values(name, inclusive=False))
            except KeyError:
                pass
        handles = IO_PRECREATED_HANDLES
        for cnode in profile.cnodes:
            region = cnode.region
            if (region.paradigm or "").lower() == "io":
                events, count = self.io_calls.get(region.name, ("none", 0))
                created = count if events in ("create", "duplicate") else 0
                if created:
                    handles += created * int(sum(est.visit_values[cnode.id]))
        self.handle_bytes = compressed_size(handles)

    def _io_bytes(self, region, cnode, est):
        """Bytes and raw records of one visit's I/O events (beyond enter and leave)."""
        h = self.handle_bytes
        rec = self.records
        events, count = self.io_calls.get(region.name, ("none", 0))
        if events == "create":
            return count * (TIMESTAMP_BYTES + 6 + h), count * rec["io_create_handle"]
        if events == "destroy":
            return count * (TIMESTAMP_BYTES + 2 + h), count * rec["io_destroy_handle"]
        if events == "seek":
            return TIMESTAMP_BYTES + 5 + h, rec["io_seek"]
        if events == "duplicate":
            return TIMESTAMP_BYTES + 4 + 2 * h, rec["io_duplicate_handle"]
        if events in ("transfer", "flush"):
            if events == "flush":
                value = compressed_size(2**64 - 1)
            else:
                visits = sum(est.visit_values[cnode.id])
                moved = sum(sum(values[cnode.id]) for values in self.io_values)
                value = compressed_size(int(round(moved / visits)) if visits else 0)
            # begin: type, length, handle, mode, flags, bytes, matching id 1 (2 bytes);
            # complete: type, length, handle, bytes, matching id
            return (2 * TIMESTAMP_BYTES + 6 + h + value + 6 + h + value - 2), \
                rec["io_operation_begin"] + rec["io_operation_complete"]
        return 0, 0

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
        """Bytes and raw records of one visit: enter and leave plus what an MPI call adds,
        or the records Score-P's artificial regions stand for."""
        if paradigm(region) == "measurement":
            if region.name.startswith("TRACE BUFFER FLUSH"):
                return BUFFER_FLUSH_BYTES, self.records["buffer_flush"]
            return 0, 0
        if region.paradigm == "user" and region.name == "MEASUREMENT OFF":
            return 2 * MEASUREMENT_ON_OFF_BYTES, \
                self.records["measurement_on"] + self.records["measurement_off"]
        enter = TIMESTAMP_BYTES + 1 + compressed_size(region.id)
        size = 2 * enter + self.metric_bytes
        records = self.records["enter"] + self.records["leave"]
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

    def scenario(self, est, filtered):
        rows = [r for r in est.all_rows if not (filtered and r.filtered)]
        return Scenario(self, est.profile, rows)


class Scenario(model.Scenario):
    """The trace and memory a measurement would need: all regions, or without the ones a
    filter leaves out. ``unit_bytes``: per location."""

    def __init__(self, measured, profile, rows):
        nloc = len(profile.locations)
        model.Scenario.__init__(self, [0] * nloc)
        self.chunk_bytes = measured.chunk_bytes
        self.records = [0] * nloc
        self.nodes = [0] * nloc
        for row in rows:
            for i in range(nloc):
                self.unit_bytes[i] += row.bytes[i]
                self.records[i] += row.records[i]
                self.nodes[i] += row.nodes[i]
        self.trace_chunks = [max(1, -(-r // measured.records_per_chunk)) for r in self.records]
        self.profile_chunks = [max(1, -(-n // measured.nodes_per_chunk)) for n in self.nodes]
        # Chunks per process (location group) during the run, and with the encoding chunks.
        self.run_chunks = {}
        self.total_chunks = {}
        for i, location in enumerate(profile.locations):
            group = location.group.id
            need = self.trace_chunks[i] + self.profile_chunks[i]
            self.run_chunks[group] = self.run_chunks.get(group, 0) + need
            self.total_chunks[group] = self.total_chunks.get(group, 0) + need + 1

    @property
    def location_bytes(self):
        return self.unit_bytes

    @property
    def max_run_chunks(self):
        return max(self.run_chunks.values()) if self.run_chunks else 0

    @property
    def total_memory(self):
        """The SCOREP_TOTAL_MEMORY (bytes) that avoids flushes."""
        chunks = max(self.total_chunks.values()) if self.total_chunks else 1
        return max(chunks * self.chunk_bytes, MIN_TOTAL_MEMORY)
