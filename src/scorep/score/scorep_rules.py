"""Score-P's own scorep-score rules, for profiles that Score-P wrote: the same bytes, groups
and memory hint as its tool prints.

Followed from Score-P's source (src/tools/score/): SCOREP_Score_Estimator.cpp (events per
region, bytes per call path, the memory hint, the filter), SCOREP_Score_Event.cpp (which
event a region's visit writes), SCOREP_Score_EventList.hpp (the region names of MPI, SHMEM,
thread and I/O events), SCOREP_Score_Profile.cpp (types, dynamic and omitted regions,
processes, program arguments), SCOREP_Score_Types.hpp (type order, what can be filtered),
SCOREP_Score_Group.cpp (rows, the filter file entries).

- The size of each event comes from ``otf2-estimator``, the OTF2 library's estimator, given
  the number of region and metric definitions and the profile's
  ``Score-P::DefinitionCounters::*`` attributes, exactly as Score-P's tool asks it.
- A visit of a region writes: Enter and Leave (not for regions of paradigm measurement, not
  for ``MEASUREMENT OFF`` and the artificial ``instance=``/``iteration=`` children of dynamic
  regions), ProgramBegin (with the root region's ``numberOfArguments``) and ProgramEnd for a
  root region, the events its name stands for (MpiSend for ``MPI_Send``, MpiCollectiveBegin
  and End for ``MPI_Allreduce``, IoCreateHandle for ``open``, ...), a Metric record per
  enter and leave with -c, two MeasurementOnOff records for ``MEASUREMENT OFF``; each event
  but MpiCollectiveBegin and a few others (as in Score-P) with a timestamp. Where Score-P
  registers two events under one name, the first one counts (its tool keeps them in a map).
- A call path's bytes: visits x (bytes per visit + parameters x (ParameterInt or
  ParameterString + timestamp)); the visits of a dynamic region's children count for the
  parent (and are never filtered). Call paths without visits are skipped, time included.
- max_buf is per process (a location group of type process, its accelerator contexts
  added), not per location: Score-P's trace buffers belong to the process.
- SCOREP_TOTAL_MEMORY = max(max_buf, 2 MiB) + 2 MiB x the most locations of one process;
  above 4 GiB - 1 Score-P warns instead of hinting.
"""

import subprocess

from scorep.score import model
from scorep.score.model import ScoreError, paradigm

TIMESTAMP = "Timestamp"
MEMORY_PER_LOCATION = 2 * 1024 * 1024
MAX_TOTAL_MEMORY = (1 << 32) - 1

# ---- region names per event (SCOREP_Score_EventList.hpp) --------------------------------

MPI_SEND = {"MPI_Bsend", "MPI_Rsend", "MPI_Ssend", "MPI_Sendrecv", "MPI_Sendrecv_replace",
            "MPI_Send"}
MPI_ISEND = {"MPI_Ibsend", "MPI_Irsend", "MPI_Issend", "MPI_Isend", "MPI_Bsend_init",
             "MPI_Rsend_init", "MPI_Send_init", "MPI_Ssend_init"}
MPI_IRECV = {"MPI_Irecv", "MPI_Irecv_init"}
MPI_RECV = {"MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Recv"}
_COLLECTIVES = ("allgather", "allgatherv", "allreduce", "alltoall", "alltoallv", "alltoallw",
                "barrier", "bcast", "exscan", "gather", "gatherv", "reduce", "reduce_scatter",
                "reduce_scatter_block", "scan", "scatter", "scatterv")
MPI_COLLECTIVE = {"MPI_" + c.capitalize() for c in _COLLECTIVES}
MPI_NON_BLOCKING_COLLECTIVE = {"MPI_I" + c for c in _COLLECTIVES}
THREAD_ACQUIRE_LOCK = {"omp_set_lock", "omp_set_nest_lock", "pthread_mutex_unlock",
                       "pthread_cond_wait", "pthread_cond_timedwait"}
THREAD_RELEASE_LOCK = {"omp_unset_lock", "omp_unset_nest_lock", "pthread_mutex_unlock",
                       "pthread_cond_wait", "pthread_cond_timedwait"}
_SHMEM_TYPES = ("char", "short", "int", "long", "float", "double", "longlong", "longdouble")
RMA_OP = ({"shmem_%s_%s" % (t, op) for t in _SHMEM_TYPES for op in ("p", "put", "g", "get")} |
          {"shmem_%s_i%s" % (t, op) for t in _SHMEM_TYPES[1:] for op in ("put", "get")} |
          {"shmem_%s%s" % (op, bits) for op in ("put", "get", "iput", "iget")
           for bits in (16, 32, 64, 128)} |
          {"shmem_putmem", "shmem_getmem"} |
          {"hipMemcpy" + s for s in ("", "WithStream", "HtoD", "FromSymbol", "DtoH", "DtoD",
                                     "Async", "HtoDAsync", "FromSymbolAsync", "DtoHAsync",
                                     "DtoDAsync")})
RMA_OP_COMPLETE_REMOTE = {"shmem_barrier_all"}
RMA_ATOMIC = ({"shmem_%s_%s" % (t, op) for t in ("short", "int", "long", "longlong")
               for op in ("swap", "cswap", "fadd", "finc", "add", "inc")} |
              {"shmem_swap", "shmem_float_swap", "shmem_double_swap"})
RMA_COLLECTIVE = ({"shmem_barrier_all", "shmem_barrier", "shmem_broadcast32",
                   "shmem_broadcast64", "shmem_collect32", "shmem_collect64",
                   "shmem_fcollect32", "shmem_fcollect64"} |
                  {"shmem_%s_%s_to_all" % (t, op) for t in ("short", "int", "long", "longlong")
                   for op in ("and", "or", "xor")} |
                  {"shmem_%s_%s_to_all" % (t, op)
                   for t in ("short", "int", "long", "float", "double", "longlong", "longdouble")
                   for op in ("max", "min", "sum", "prod")} |
                  {"shmem_complex%s_%s_to_all" % (t, op) for t in "fd" for op in ("sum", "prod")})
RMA_WAIT_CHANGE = {"shmem_%swait%s" % (t, until) for t in ("short_", "int_", "long_",
                                                           "longlong_", "")
                   for until in ("", "_until")}
RMA_LOCK = {"shmem_set_lock", "shmem_test_lock"}
RMA_RELEASE_LOCK = {"shmem_clear_lock"}
IO_CREATE = {"MPI_File_open", "creat", "creat64", "open", "open64", "openat", "fdopen", "fopen",
             "fopen64", "freopen"}
IO_DELETE = {"MPI_File_close", "MPI_File_delete", "unlink", "unlinkat"}
IO_SEEK = {"MPI_File_seek", "MPI_File_seek_shared", "lseek", "lseek64", "fseek", "fseeko",
           "fseeko64", "fsetpos", "rewind"}
_MPI_FILE_RW = ("read", "read_all", "read_at", "read_at_all", "read_ordered", "read_shared",
                "write", "write_all", "write_at", "write_at_all", "write_ordered",
                "write_shared")
IO_BLOCKING_TRANSFER = ({"MPI_File_" + op for op in _MPI_FILE_RW} |
                        {"fdatasync", "fsync", "pread", "pread64", "pwrite", "pwrite64", "read",
                         "syncfs", "write", "preadv", "pwritev", "readv", "writev",
                         "lio_listio", "fflush", "fgetc", "fgets", "fputc", "fprintf", "fputs",
                         "fread", "fscanf", "fwrite", "getc", "getchar", "gets", "printf",
                         "putchar", "puts", "scanf", "vfprintf", "vfscanf", "vscanf",
                         "vprintf"})
_SPLIT = ("read_all", "read_at_all", "read_ordered", "write_all", "write_at_all",
          "write_ordered")
IO_NONBLOCKING_TRANSFER_BEGIN = ({"MPI_File_i" + op for op in ("read", "read_all", "read_at",
                                                                "read_at_all", "read_shared",
                                                                "write", "write_all",
                                                                "write_at", "write_at_all",
                                                                "write_shared")} |
                                 {"MPI_File_%s_begin" % op for op in _SPLIT} |
                                 {"sync", "aio_read", "aio_write"})
IO_NONBLOCKING_TRANSFER_END = ({"MPI_File_%s_end" % op for op in _SPLIT} |
                               {"sync", "aio_error", "aio_return"})
IO_CLOSE = {"close", "closedir", "fclose"}
IO_DUPLICATE = {"dup", "dup2", "dup3", "fcntl"}
IO_ACQUIRE_LOCK = {"lockf", "flockfile", "ftrylockfile"}
IO_OPERATION_CANCELLED = {"aio_cancel"}
IO_RELEASE_LOCK = {"funlockfile"}

# (event, regions: a set of names, a tuple of name prefixes, or a rule; with a timestamp),
# in the order Score-P's estimator registers them. A later event of a name already
# registered is ignored there (std::map::insert): kept here so that the list reads like the
# source, skipped when the events are collected.
_NAMED_EVENTS = [
    ("MpiSend", MPI_SEND, True), ("MpiIsend", MPI_ISEND, True),
    ("MpiIsendComplete", MPI_ISEND, True), ("MpiIrecvRequest", MPI_IRECV, True),
    ("MpiRecv", MPI_RECV, True), ("MpiIrecv", MPI_IRECV, True),
    ("MpiCollectiveBegin", MPI_COLLECTIVE, False), ("MpiCollectiveEnd", MPI_COLLECTIVE, True),
    ("NonBlockingCollectiveRequest", MPI_NON_BLOCKING_COLLECTIVE, False),
    ("NonBlockingCollectiveComplete", MPI_NON_BLOCKING_COLLECTIVE, True),
    ("ThreadAcquireLock", THREAD_ACQUIRE_LOCK, True),
    ("ThreadReleaseLock", THREAD_RELEASE_LOCK, True),
    ("RmaPut", RMA_OP, True), ("RmaOpCompleteBlocking", RMA_OP, True),
    ("RmaOpCompleteRemote", RMA_OP_COMPLETE_REMOTE, True),
    ("RmaAtomic", RMA_ATOMIC, False), ("RmaOpCompleteBlocking", RMA_ATOMIC, True),
    ("RmaCollectiveBegin", RMA_COLLECTIVE, True), ("RmaCollectiveEnd", RMA_COLLECTIVE, True),
    ("RmaWaitChange", RMA_WAIT_CHANGE, False), ("RmaRequestLock", RMA_LOCK, False),
    ("RmaReleaseLock", RMA_RELEASE_LOCK, False),
    ("ThreadFork", ("!$omp parallel",), True), ("ThreadJoin", ("!$omp parallel",), True),
    ("ThreadTeamBegin", ("!$omp parallel",), True),
    ("ThreadTeamEnd", ("!$omp parallel",), True),
    ("ThreadTaskCreate", ("!$omp task ",), False),
    ("ThreadTaskComplete", ("!$omp task ",), True),
    ("ThreadTaskSwitch", ("!$omp task",), True),
    ("ThreadCreate", ("pthread_create",), True), ("ThreadBegin", ("pthread_create",), True),
    ("ThreadWait", ("pthread_join",), True), ("ThreadEnd", ("pthread_create",), True),
    ("BufferFlush", ("TRACE BUFFER FLUSH",), True),
    ("MeasurementOnOff", ("MEASUREMENT OFF",), False),
    ("IoDestroyHandle", IO_CREATE, True), ("IoCreateHandle", IO_CREATE, True),
    ("IoDestroyHandle", IO_DELETE, True), ("IoDeleteFile", IO_DELETE, True),
    ("IoSeek", IO_SEEK, True),
    ("IoOperationComplete", IO_BLOCKING_TRANSFER, True),
    ("IoOperationBegin", IO_BLOCKING_TRANSFER, True),
    ("IoOperationIssued", IO_NONBLOCKING_TRANSFER_BEGIN, True),
    ("IoOperationBegin", IO_NONBLOCKING_TRANSFER_BEGIN, True),
    ("IoOperationComplete", IO_NONBLOCKING_TRANSFER_END, True),
    ("IoOperationTest", IO_NONBLOCKING_TRANSFER_END, True),
    ("IoDestroyHandle", IO_CLOSE, True),
    ("IoDuplicateHandle", IO_DUPLICATE, True), ("IoDestroyHandle", IO_DUPLICATE, True),
    ("IoTryLock", IO_ACQUIRE_LOCK, True), ("IoAcquireLock", IO_ACQUIRE_LOCK, True),
    ("IoOperationCancelled", IO_OPERATION_CANCELLED, True),
    ("IoReleaseLock", IO_RELEASE_LOCK, True),
]


def otf2_event_sizes(definitions, names):
    """Event sizes from ``otf2-estimator`` (OTF2's estimator: what Score-P's tool runs):
    ``definitions`` maps definition names to their counts (set in this order), ``names`` are
    the events asked for ("Enter", "Metric 2", "ProgramBegin 4", ...)."""
    script = ["set %s %d" % item for item in definitions.items()]
    script += ["get %s" % name for name in names] + ["exit"]
    try:
        done = subprocess.run(["otf2-estimator"], input="\n".join(script) + "\n",
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=60)
    except FileNotFoundError:
        raise ScoreError("this needs otf2-estimator, the OTF2 library's event size estimator "
                         "(Debian package otf2-tools), as Score-P's scorep-score does; it is "
                         "not on PATH") from None
    except (OSError, subprocess.SubprocessError) as error:
        raise ScoreError("otf2-estimator failed: %s" % error) from None
    if done.returncode != 0:
        why = " ".join(done.stderr.split()) or "exit status %d" % done.returncode
        raise ScoreError("otf2-estimator failed: %s" % why)
    sizes = {}
    for line in done.stdout.splitlines():
        name, sep, number = line.rpartition(" ")
        if sep and number.isdigit():
            sizes[name] = int(number)
    missing = [name for name in names if name not in sizes]
    if missing:
        raise ScoreError("otf2-estimator gave no size for %s" % ", ".join(missing))
    return sizes


def is_dynamic(region):
    """The artificial children of a dynamic region (cubelib names them)."""
    return region.paradigm == "user" and (region.name.startswith("instance=") or
                                          region.name.startswith("iteration="))


def omitted(region):
    """Regions whose visits write no Enter/Leave."""
    return paradigm(region) == "measurement" or (
        region.paradigm == "user" and region.name == "MEASUREMENT OFF") or is_dynamic(region)


def number_of_arguments(profile):
    """The program's argument count from its root region's attribute, -1 without one
    (then Score-P counts no ProgramBegin/ProgramEnd)."""
    count = -1
    for region in profile.regions:
        text = region.attrs.get("Score-P::ProgramArguments::numberOfArguments")
        if text is not None:
            try:
                value = int(text.strip())
            except ValueError:
                value = 0
            count = max(count, value)
    return count


class ScorePModel:
    """Units are the processes."""

    def __init__(self, est):
        profile = est.profile
        self.has_hits = any(m.uniq_name == "hits" for m in profile.metrics)
        groups = profile.location_groups
        processes = [g for g in groups if g.type == "process"] or list(groups)
        self.units = [g.name for g in processes]
        unit_of_group = {g.id: i for i, g in enumerate(processes)}
        by_name = {g.name: i for i, g in enumerate(processes)}
        for group in groups:
            if group.type == "accelerator":
                creator = group.attrs.get("Creating location group", "")
                if creator in by_name:
                    unit_of_group[group.id] = by_name[creator]
        self.unit_of_location = [unit_of_group.get(loc.group.id) for loc in profile.locations]
        self.max_locations = max((len(g.locations) for g in groups), default=0)
        self.root_regions = set(root.region.id for root in profile.roots)
        self.nargs = number_of_arguments(profile)
        self.events = self._events(est.dense)
        definitions = {"Region": len(profile.regions), "Metric": len(profile.metrics)}
        prefix = "Score-P::DefinitionCounters::"
        for key, value in sorted(profile.attrs.items()):
            if key.startswith(prefix) and len(key) > len(prefix):
                try:
                    definitions[key[len(prefix):]] = int(value.strip())
                except ValueError:
                    continue
        names = [TIMESTAMP] + [name for name, _rule, _ts in self.events]
        sizes = otf2_event_sizes(definitions, names)
        self.timestamp = sizes[TIMESTAMP]
        self.sizes = {}
        for name, _rule, has_timestamp in self.events:
            size = sizes[name]
            if name.startswith("Metric "):
                size *= 2  # a metric set at the enter and one at the leave
            elif name == "MeasurementOnOff":
                size = 2 * (size + self.timestamp)  # off and on again
            self.sizes[name] = size + (self.timestamp if has_timestamp else 0)
        self.bytes_per_parameter = {"numeric": self.sizes["ParameterInt"],
                                    "string": self.sizes["ParameterString"]}
        self.bytes_per_hit = self.sizes.get("CallingContextSample", 0)

    def _events(self, dense):
        events = [("Enter", "enter", True), ("Leave", "enter", True)]
        if self.has_hits:
            events += [("CallingContextEnter", "calling context", True),
                       ("CallingContextLeave", "calling context", True),
                       ("CallingContextSample", "never", True)]
        if dense > 0:
            events.append(("Metric %d" % dense, "metric", True))
        events += [("ParameterInt", "never", True), ("ParameterString", "never", True)]
        if self.nargs >= 0:
            events += [("ProgramBegin %d" % self.nargs, "root", True),
                       ("ProgramEnd", "root", True)]
        events += _NAMED_EVENTS
        seen, unique = set(), []
        for event in events:
            if event[0] not in seen:
                seen.add(event[0])
                unique.append(event)
        return unique

    def _contributes(self, rule, region):
        if rule == "never":
            return False
        if rule == "enter":
            return not self.has_hits and not omitted(region)
        if rule == "calling context":
            return self.has_hits and not is_dynamic(region)
        if rule == "metric":
            return not is_dynamic(region)
        if rule == "root":
            return region.id in self.root_regions and \
                paradigm(region) not in ("cuda", "opencl")
        if isinstance(rule, tuple):
            return any(region.name.startswith(prefix) for prefix in rule)
        return region.name in rule

    def bytes_per_visit(self, region):
        if paradigm(region) == "sampling":  # samples are not entered
            return 0
        return sum(self.sizes[name] for name, rule, _ts in self.events
                   if self._contributes(rule, region))

    def fill(self, est):
        profile = est.profile
        per_visit = [self.bytes_per_visit(region) for region in profile.regions]
        hit_values = profile.values("hits", inclusive=False) if self.has_hits else None
        nunits = len(self.units)
        for cnode in profile.cnodes:
            visits, hits, times = [0] * nunits, [0] * nunits, [0.0] * nunits
            cvisits = est.visit_values[cnode.id]
            ctime = est.time_values[cnode.id]
            chits = hit_values[cnode.id] if hit_values is not None else None
            for loc, unit in enumerate(self.unit_of_location):
                if unit is None:
                    continue
                visits[unit] += int(cvisits[loc])
                times[unit] += ctime[loc]
                if chits is not None:
                    hits[unit] += int(chits[loc])
            region = cnode.region
            type_ = est.types[region.id]
            dynamic = is_dynamic(region) and cnode.parent is not None
            if dynamic:
                parent = cnode.parent.region
                row, bytes_per_visit, bytes_per_call = est.all_rows[parent.id], \
                    per_visit[parent.id], 0
            else:
                row = est.all_rows[region.id]
                bytes_per_call = sum(self.bytes_per_parameter.get(kind, 0)
                                     for kind, _key, _value in cnode.parameters)
                bytes_per_visit = per_visit[region.id] + bytes_per_call
            for unit in range(nunits):
                v, h = visits[unit], hits[unit]
                if not v and not h:
                    continue
                if dynamic:
                    est.add(type_, row, unit, v * bytes_per_visit, v, 0, times[unit],
                            dynamic=True)
                else:
                    est.add(type_, row, unit, v * bytes_per_visit + h * self.bytes_per_hit,
                            v, h, times[unit])

    def scenario(self, est, filtered):
        unit_bytes = [0] * len(self.units)
        for part in est.parts(filtered=False if filtered else None):
            for i, value in enumerate(part.bytes):
                unit_bytes[i] += value
        return Scenario(unit_bytes, self.max_locations)


class Scenario(model.Scenario):
    """What Score-P's tool reports: bytes per process, and its memory hint."""

    def __init__(self, unit_bytes, max_locations):
        model.Scenario.__init__(self, unit_bytes)
        self.max_locations = max_locations

    @property
    def total_memory(self):
        return max(self.max_buf, MEMORY_PER_LOCATION) + \
            MEMORY_PER_LOCATION * self.max_locations

    @property
    def memory_warning(self):
        """Score-P cannot give a location group more than 4 GiB - 1 of memory."""
        return self.total_memory > MAX_TOTAL_MEMORY
