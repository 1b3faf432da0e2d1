"""Reading an experiment: the directory's files, the CUBE4 profile (scorep.cube), the OTF2
trace (through the C reader scorep._reader) and the configuration the run used.

Either source gives a CallTree; the profile is preferred when both exist (it holds
parameter splits and needs no pass over events). The trace adds what only events tell:
the timeline, buffer flushes, messages."""

import array
import os
import re

from scorep.report.model import (reads_input, CallTree, Location, MetricValues, Node, Rank, Region, ReportError,
                                 Sampling, PARADIGMS, ROLES, mpi_time_of,
                                 wait_state_table)

__all__ = ["Experiment", "TraceScan", "open_trace"]

NS = 1e-9


def _one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__


def _resolve(path, base_name=None):
    """(directory, profile file or None, trace anchor or None) for an experiment
    directory, a .cubex file or a traces.otf2 anchor. In a directory the profile is
    <base_name>.cubex: the base name given, else SCOREP_PROFILING_BASE_NAME of the run's
    scorep.cfg, else profile.cubex, else the only .cubex there is."""
    path = os.path.abspath(os.fspath(path))
    if not os.path.exists(path):
        raise ReportError("%s: no such file or directory" % path)
    if os.path.isdir(path):
        directory = path
        profiles = sorted(n for n in os.listdir(path) if n.endswith(".cubex"))
        if base_name is None:
            base_name = dict(read_cfg(path)).get("SCOREP_PROFILING_BASE_NAME") or None
        profile = None
        if base_name and base_name + ".cubex" in profiles:
            profile = os.path.join(path, base_name + ".cubex")
        elif "profile.cubex" in profiles:
            profile = os.path.join(path, "profile.cubex")
        elif len(profiles) == 1:
            profile = os.path.join(path, profiles[0])
        elif profiles:
            raise ReportError("%s holds several profiles (%s): name one of them"
                              % (path, ", ".join(profiles)))
        anchors = sorted(n for n in os.listdir(path) if n.endswith(".otf2"))
        trace = None
        if "traces.otf2" in anchors:
            trace = os.path.join(path, "traces.otf2")
        elif len(anchors) == 1:
            trace = os.path.join(path, anchors[0])
        return directory, profile, trace
    directory = os.path.dirname(path)
    if path.endswith(".cubex"):
        return directory, path, None
    if path.endswith(".otf2"):
        return directory, None, path
    raise ReportError("%s is neither an experiment directory, a .cubex profile nor an "
                      ".otf2 trace anchor" % path)


def read_cfg(directory):
    """scorep.cfg as [(NAME, value)] (quotes removed), [] when absent."""
    path = os.path.join(directory, "scorep.cfg")
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, value = line.split("=", 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out.append((name.strip(), value))
    return out


_NOTE = re.compile(r"flush|drop|fold|collapse|lost|overhead|cost|warn|truncat|incomplete|fail",
                   re.IGNORECASE)


def manifest_notes(text):
    """Lines of MANIFEST.md that report on the measurement (flushes, dropped or folded
    data, ...) rather than list files."""
    notes = []
    for line in (text or "").splitlines():
        s = line.strip().lstrip("-*").strip()
        if not s or s.startswith("#") or s.startswith("`"):
            continue
        if _NOTE.search(s):
            notes.append(s)
    return notes


@reads_input
def open_trace(anchor):
    try:
        from scorep import _reader
    except ImportError as error:
        import sys
        raise ReportError(
            "the OTF2 reader (scorep._reader) is not built for this Python (%d.%d): %s; "
            "run 'make build' in the scorep checkout" % (sys.version_info[0],
                                                         sys.version_info[1],
                                                         _one_line(error))) from None
    try:
        return _reader.open(anchor)
    except RuntimeError as error:
        raise ReportError(_one_line(error)) from None


# ---- trace --------------------------------------------------------------------------

class TraceScan:
    """One pass over a trace (scorep._reader) with its definitions turned into the report
    model: regions and locations by index, ranks = location groups with locations."""

    @reads_input
    def __init__(self, trace, defs, scan, opts):
        self.trace = trace
        self.defs = defs
        self.raw = scan
        self.opts = opts
        self.summary = scan.summary
        self.loc_stats = scan.locations()
        self.regions = []
        for ref, r in enumerate(defs["regions"]):
            if r is None:
                self.regions.append(Region(ref, "<region %d>" % ref))
            else:
                name, canonical, file, begin, end, role, paradigm = r
                self.regions.append(Region(ref, name, file, begin,
                                           PARADIGMS.get(paradigm, "unknown"),
                                           ROLES.get(role, "unknown"), end, canonical))
        groups = defs["location_groups"]
        group_order = sorted({loc[4] for loc in defs["locations"]})
        rank_of_group = {g: i for i, g in enumerate(group_order)}
        self.ranks = []
        for g in group_order:
            name = groups[g][0] if g < len(groups) and groups[g] else "process %d" % g
            self.ranks.append(Rank(rank_of_group[g], name, []))
        self.locations = []
        for i, (lid, name, ltype, events, group) in enumerate(defs["locations"]):
            rank = self.ranks[rank_of_group[group]]
            self.locations.append(Location(i, name, rank.index, len(rank.locations)))
            rank.locations.append(i)
        self.rank_of_group = rank_of_group
        self.span_ns = defs["length_ns"]
        self._tree = None
        self._messages = None
        self._io = None

    @property
    @reads_input
    def events(self):
        return self.summary["events"]

    @property
    @reads_input
    def calls(self):
        return self.summary["calls"]

    @reads_input
    def tree(self):
        if self._tree is not None:
            return self._tree
        if not self.opts.get("tree"):
            raise ReportError("internal: the trace was scanned without a call tree")
        parents, regions = self.raw.tree()
        parents = array.array("I", parents)
        regions = array.array("I", regions)
        if regions and max(regions) >= len(self.regions):
            raise ReportError("%s is damaged: its events refer to region %d, which its "
                              "definitions do not define" % (self.trace, max(regions)))
        nodes = []
        for i in range(len(parents)):
            p = parents[i]
            parent = None if p == 0xFFFFFFFF else nodes[p]
            node = Node(i, parent, self.regions[regions[i]])
            if parent is not None:
                parent.children.append(node)
            nodes.append(node)
        n = len(nodes)
        nloc = len(self.locations)
        visits = [[0] * nloc for _ in range(n)]
        incl = [[0.0] * nloc for _ in range(n)]
        mins = [[0.0] * nloc for _ in range(n)]
        maxs = [[0.0] * nloc for _ in range(n)]
        for l in range(nloc):
            st = array.array("Q", self.raw.node_stats(l))
            for i in range(n):
                v = st[4 * i]
                if v:
                    visits[i][l] = v
                    incl[i][l] = st[4 * i + 1] * NS
                    mins[i][l] = st[4 * i + 2] * NS
                    maxs[i][l] = st[4 * i + 3] * NS
        self._add_program_root(nodes, visits, incl, mins, maxs)
        self._tree = CallTree(self.regions, self.ranks, self.locations, nodes, visits, incl,
                              mins, maxs, source="trace")
        return self._tree

    def _add_program_root(self, nodes, visits, incl, mins, maxs):
        """The profile roots every call path in the program's region (paradigm
        measurement, role artificial), whose time is the whole run; the trace has that
        region but no events for it, only ProgramBegin/ProgramEnd. Adding the root makes
        both trees alike: the same total, the time outside any function visible."""
        program = [r for r in self.regions if r.is_program]
        if len(program) != 1 or not nodes:
            return
        root = Node(len(nodes), None, program[0])
        nloc = len(self.locations)
        row_v, row_t = [0] * nloc, [0.0] * nloc
        for l, st in enumerate(self.loc_stats):
            children = sum(incl[n.id][l] for n in nodes if n.parent is None)
            if st["program_begin"] != 2**64 - 1 and st["program_end"] != 2**64 - 1:
                span = (st["program_end"] - st["program_begin"]) * NS
            else:
                span = children  # a thread: its calls are all it did
            if span > 0 or children > 0:
                row_v[l] = 1
                row_t[l] = max(span, children)
        for n in nodes:
            if n.parent is None:
                n.parent = root
                root.children.append(n)
        # Depths grew by one; recompute in preorder (parents before children).
        root.depth = 0
        stack = list(root.children)
        while stack:
            n = stack.pop()
            n.depth = n.parent.depth + 1
            stack.extend(n.children)
        nodes.append(root)
        visits.append(row_v)
        incl.append(row_t)
        mins.append(list(row_t))
        maxs.append(list(row_t))

    @reads_input
    def flush_stats(self):
        """(count, seconds) of buffer flushes over all locations."""
        return (sum(s["flushes"] for s in self.loc_stats),
                sum(s["flush_ns"] for s in self.loc_stats) * NS)

    @reads_input
    def messages(self):
        """Point-to-point and collective statistics by rank index, matched message pairs
        (for drawing) and flushes."""
        if self._messages is not None:
            return self._messages
        m = self.raw.messages()
        rank = self.rank_of_group
        p2p = []
        for src, dst, count, nbytes in m["p2p"]:
            p2p.append((rank.get(src, src), rank.get(dst, dst), count, nbytes))
        colls = [(rank.get(g, g), op, count, sent, recvd)
                 for g, op, count, sent, recvd in m["collectives"]]
        recv_by = {(key, seq): (t, loc) for t, key, seq, nbytes, loc in m["recvs"]}
        pairs = []
        for t, key, seq, nbytes, loc in m["sends"]:
            r = recv_by.get((key, seq))
            if r is not None:
                pairs.append((loc, t, r[1], r[0], nbytes))
        self._messages = {
            "p2p": p2p, "collectives": colls, "pairs": pairs,
            "sends_total": m["sends_total"], "recvs_total": m["recvs_total"],
            "pairs_capped": m["sends_total"] > len(m["sends"]) or
            m["recvs_total"] > len(m["recvs"]),
            "flushes": m["flushes"], "flushes_total": m["flushes_total"],
        }
        return self._messages

    @reads_input
    def io(self):
        """The I/O the trace records (None when it has no I/O events): "targets" (one per
        file, or per handle without a file such as a standard stream: kind, name,
        paradigms, reads, writes, flushes, failed, bytes_read, bytes_written, ns, creates,
        destroys, seeks, duplicates), "callers" ((target index, calling Region or None,
        I/O function's Region or None, operations, bytes read, bytes written, ns)),
        "calls" (calls of I/O functions) and "unknown_calls" (those without any I/O event:
        a socket, a pipe, a descriptor closed twice or never opened)."""
        if self._io is not None:
            return self._io or None
        raw = self.raw.io()
        nregions = len(self.regions)

        def region(ref):
            return self.regions[ref] if ref is not None and ref < nregions else None
        callers = [(t, region(r), region(f), ops, rd, wr, ns)
                   for t, r, f, ops, rd, wr, ns in raw["callers"]]
        self._io = {"targets": raw["targets"], "callers": callers, "calls": raw["calls"],
                    "unknown_calls": raw["unknown_calls"]}
        if not raw["targets"] and not raw["calls"]:
            self._io = {}
            return None
        return self._io

    @reads_input
    def histogram(self):
        """(calls, name bytes) as lists [depth][bucket]."""
        from scorep import _reader
        counts, names = self.raw.histogram()
        counts = array.array("Q", counts)
        names = array.array("Q", names)
        b = _reader.BUCKETS
        return ([counts[d * b:(d + 1) * b] for d in range(_reader.DEPTHS)],
                [names[d * b:(d + 1) * b] for d in range(_reader.DEPTHS)])


# ---- profile ------------------------------------------------------------------------

@reads_input
def tree_from_profile(profile):
    # A region group is part of the CUBE paradigm ("user:__main__"); the reports use the
    # paradigm alone.
    regions = [Region(r.id, r.name, r.file, r.begin_line,
                      (r.paradigm or "user").split(":", 1)[0],
                      r.role or "function", r.end_line, r.mangled_name or "")
               for r in profile.regions]
    ranks = [Rank(g.id, g.name, []) for g in profile.location_groups]
    locations = []
    for loc in profile.locations:
        rank = ranks[loc.group.id]
        locations.append(Location(loc.id, loc.name, rank.index, len(rank.locations)))
        rank.locations.append(loc.id)
    nodes = [None] * len(profile.cnodes)
    for c in profile._deep:  # parents before children, children in document order
        parent = nodes[c.parent.id] if c.parent is not None else None
        node = Node(c.id, parent, regions[c.region.id],
                    [(k, v) for _, k, v in c.parameters])
        if parent is not None:
            parent.children.append(node)
        nodes[c.id] = node
    names = {m.uniq_name for m in profile.metrics}
    if "visits" not in names or "time" not in names:
        raise ReportError("%s has no visits/time metrics: not a Score-P call-path profile"
                          % profile.path)
    visits = profile.values("visits", inclusive=False)
    incl = profile.values("time", inclusive=True)
    mins = maxs = None
    if "min_time" in names and "max_time" in names:
        mins = profile.values("min_time", inclusive=False)
        maxs = profile.values("max_time", inclusive=False)
    from scorep import cube
    try:
        folded = profile.folded()
    except cube.CubeError as error:
        raise ReportError(str(error))
    tree = CallTree(regions, ranks, locations, nodes, visits, incl, mins, maxs,
                    source="profile", folded=folded)
    if "hits" in names:
        tree.hits = profile.values("hits", inclusive=False)
    # The metrics recorded at every enter and leave (SCOREP_METRIC_*, --memory): per call
    # path, summed over locations.
    for metric in cube.recorded_metrics(profile):
        incl = profile.values(metric, inclusive=True)
        excl = profile.values(metric, inclusive=False)
        tree.metrics.append(MetricValues(metric.uniq_name, metric.disp_name, metric.uom,
                                         metric.descr, [sum(incl[c.id]) for c in profile.cnodes],
                                         [sum(excl[c.id]) for c in profile.cnodes]))
    # Scalasca's wait-state metrics (a traced MPI run): the HTML report's metric selector
    # draws the call tree and the region table by them as by a recorded metric. Each with
    # its parts (Late Sender with its Wrong Order time), as the terminal report counts it.
    table = [(n, parent) for n, parent in wait_state_table() if n in names]
    if "mpi_latesender" in names and table:
        excl_of = {n: profile.values(n, inclusive=False) for n, _ in table}
        incl_of = {n: profile.values(n, inclusive=True) for n, _ in table}
        children = {}
        for n, parent in table:
            if parent in excl_of:
                children.setdefault(parent, []).append(n)

        def total(of, n, cid):
            return sum(of[n][cid]) + sum(total(of, child, cid) for child in children.get(n, ()))

        def per_location(n):
            row = [0.0] * len(profile.locations)
            for c in profile.cnodes:
                for l, v in enumerate(excl_of[n][c.id]):
                    row[l] += v
            for child in children.get(n, ()):
                row = [a + b for a, b in zip(row, per_location(child))]
            return row

        for n, _parent in table:
            metric = profile.metric(n)
            tree.metrics.append(MetricValues(
                n, metric.disp_name, metric.uom or "sec", metric.descr,
                [total(incl_of, n, c.id) for c in profile.cnodes],
                [total(excl_of, n, c.id) for c in profile.cnodes],
                per_location(n) if (metric.uom or "sec") == "sec" else None))
    # Score-P's I/O metrics (SCOREP_IO_POSIX): bytes per call path, summed over locations.
    if "io_bytes_read" in names and "io_bytes_written" in names:
        read = profile.values("io_bytes_read", inclusive=False)
        written = profile.values("io_bytes_written", inclusive=False)
        tree.io_bytes = {}
        for c in profile.cnodes:
            r, w = sum(read[c.id]), sum(written[c.id])
            if r or w:
                tree.io_bytes[c.id] = (r, w)
    return tree


# ---- the experiment -----------------------------------------------------------------

def _unfinished_experiment(directory):
    """What is left of a measurement that never wrote its results (the process was killed
    by SIGKILL, os._exit or a crash before the end), or None."""
    if not directory or not os.path.isfile(os.path.join(directory, "scorep.cfg")) or \
            os.path.exists(os.path.join(directory, "MANIFEST.md")):
        return None
    spills = [name for name in os.listdir(directory) if name.startswith(".scorep-spill-")]
    lost = sum(os.path.getsize(os.path.join(directory, name)) for name in spills)
    text = ("the measurement did not finish: its process ended before writing the results "
            "(killed by SIGKILL, ended by os._exit or a crash); only scorep.cfg is there")
    if spills:
        text += (", and %d spill file(s) with %d bytes of raw trace records that cannot be "
                 "turned into a trace (remove them: %s)"
                 % (len(spills), lost, os.path.join(directory, ".scorep-spill-*")))
    return text


class Experiment:
    """An experiment directory (or a single profile or trace file). ``source`` picks the
    call tree: "auto" (profile when there is one), "profile" or "trace". ``tree`` has the
    import system's frames folded into ``import X`` nodes (scorep.report.imports) unless
    ``show_imports``; ``recorded_tree`` is the call tree as recorded."""

    @reads_input
    def __init__(self, path, source="auto", base_name=None, show_imports=False):
        self.path = os.path.abspath(os.fspath(path))
        self.directory, self.profile_path, self.trace_path = _resolve(path, base_name)
        if self.profile_path is None and self.trace_path is None:
            unfinished = _unfinished_experiment(self.directory)
            if unfinished:
                raise ReportError("%s: %s" % (self.path, unfinished))
            raise ReportError("%s holds neither a profile (profile.cubex) nor a trace "
                              "(traces.otf2): is it a scorep experiment directory?"
                              % self.path)
        if source == "profile" and self.profile_path is None:
            raise ReportError("%s has no profile (profile.cubex): profiling was off "
                              "(SCOREP_ENABLE_PROFILING=false)" % self.path)
        if source == "trace" and self.trace_path is None:
            raise ReportError("%s has no trace (traces.otf2): run with "
                              "SCOREP_ENABLE_TRACING=true" % self.path)
        self.source = source
        self.config = read_cfg(self.directory) if self.directory else []
        self.manifest = None
        try:
            with open(os.path.join(self.directory, "MANIFEST.md"), encoding="utf-8",
                      errors="replace") as f:
                self.manifest = f.read()
        except OSError:
            pass
        self.profile = None
        if self.profile_path is not None:
            from scorep import cube
            try:
                self.profile = cube.read(self.profile_path)
            except cube.CubeError as error:
                raise ReportError(_one_line(error)) from None
        self._trace = None
        self._defs = None
        self.scan = None
        self._tree = None
        self._recorded_tree = None
        self.show_imports = show_imports
        self.trace_error = None  # why the trace could not be read, when it could not
        # Wait states replayed from the trace (replay_wait_states), when asked for
        self.replayed_wait_states = None

    # -- sources --

    @property
    def has_profile(self):
        return self.profile is not None

    @property
    def has_trace(self):
        return self.trace_path is not None

    @property
    def tree_from_trace(self):
        return self.source == "trace" or self.profile is None

    @reads_input
    def trace(self):
        if self._trace is None:
            self._trace = open_trace(self.trace_path)
        return self._trace

    @reads_input
    def definitions(self):
        if self._defs is None:
            self._defs = self.trace().definitions()
        return self._defs

    @reads_input
    def run_scan(self, timeline_limit=0, timeline_min_ns=0, timeline_max_depth=0xFFFFFFFF,
                 density_bins=0, message_limit=0, flush_limit=0, durations_path=None):
        """One pass over the trace with what the requested reports need; the call tree is
        built when it comes from the trace."""
        opts = dict(tree=self.tree_from_trace, timeline_limit=timeline_limit,
                    timeline_min_ns=timeline_min_ns, timeline_max_depth=timeline_max_depth,
                    density_bins=density_bins, message_limit=message_limit,
                    flush_limit=flush_limit)
        kwargs = dict(opts)
        if durations_path:
            kwargs["durations_path"] = durations_path
        trace = self.trace()
        try:
            raw = trace.scan(**kwargs)
        except RuntimeError as error:
            raise ReportError(_one_line(error)) from None
        opts["durations_path"] = durations_path
        self.scan = TraceScan(trace, self.definitions(), raw, opts)
        return self.scan

    @reads_input
    def replay_wait_states(self):
        """Scalasca's wait states replayed from the trace (scorep-report --wait-states): the
        MPI operations of every rank read from the archive with its clock offsets and
        replayed by the engine the ranks run at the end of a traced run, one thread per
        rank. A dict: values {(metric, location group name, location name, call path):
        seconds}, each metric with its parts; table [(metric, parent)]; mpi_time (from the
        profile when there is one, else from the trace); ranks, violations, unmatched."""
        if not self.has_trace:
            raise ReportError("%s has no trace (traces.otf2): wait states are replayed from "
                              "a trace; run with SCOREP_ENABLE_TRACING=true" % self.path)
        trace = self.trace()
        try:
            raw = trace.wait_states()
        except RuntimeError as error:
            raise ReportError(_one_line(error)) from None
        defs = self.definitions()
        regions = [r[0] if r else "<region %d>" % i for i, r in enumerate(defs["regions"])]
        # The profile roots every call path in the program's region, which the trace has
        # no events of (only ProgramBegin/End): the same root here, as the trace's tree
        # has it, gives the paths of both sources alike.
        program = [r[0] for r in defs["regions"] if r and Region(
            0, r[0], paradigm=PARADIGMS.get(r[6], "unknown"), role=ROLES.get(r[5], "unknown"),
            canonical=r[1]).is_program]
        root = tuple(program) if len(program) == 1 else ()
        groups = defs["location_groups"]
        table = [(name, raw["metrics"][parent][0] if parent >= 0 else None)
                 for name, parent in raw["metrics"]]
        values = {}
        for location, _rank, path, seconds, _counts in raw["rows"]:
            loc = defs["locations"][location]
            group = groups[loc[4]][0] if loc[4] < len(groups) and groups[loc[4]] else \
                "process %d" % loc[4]
            names = root + tuple(regions[r] if r < len(regions) else "<region %d>" % r
                                 for r in path)
            for (metric, _parent), v in zip(table, seconds):
                if v > 0:
                    key = (metric, group, loc[1], names)
                    values[key] = values.get(key, 0.0) + v
        if self.has_profile:
            mpi_time = mpi_time_of(self.profile)
        else:
            mpi_time = self._trace_mpi_time()
        return {"values": values, "table": table, "mpi_time": mpi_time,
                "ranks": raw["ranks"], "violations": raw["violations"],
                "unmatched": raw["unmatched"]}

    def _trace_mpi_time(self):
        """Exclusive time of the MPI regions in the trace's call tree, all locations."""
        tree = self.recorded_tree
        excl = tree.excl
        return sum(sum(excl[n.id]) for n in tree.nodes if n.region.paradigm == "mpi")

    @property
    @reads_input
    def recorded_tree(self):
        """The call tree as recorded, importlib's frames and all."""
        if self._recorded_tree is None:
            if self.tree_from_trace:
                if self.scan is None:
                    self.run_scan()
                self._recorded_tree = self.scan.tree()
            else:
                self._recorded_tree = tree_from_profile(self.profile)
                self._mark_sampled(self._recorded_tree)
        return self._recorded_tree

    @property
    @reads_input
    def tree(self):
        """The call tree the reports show: folded imports unless show_imports."""
        if self._tree is None:
            tree = self.recorded_tree
            if not self.show_imports:
                from scorep.report.imports import fold_imports
                tree = fold_imports(tree)
            self._tree = tree
        return self._tree

    def sampling_event(self):
        """(rate in Hz, "wall" or "cpu") of a sampled run (SCOREP_ENABLE_UNWINDING with a
        sampling event in scorep.cfg), else None."""
        if self.cfg("SCOREP_ENABLE_UNWINDING", "").lower() not in ("true", "1", "yes", "on"):
            return None
        event = self.cfg("SCOREP_SAMPLING_EVENTS", "wall@1000").strip()
        if not event:
            return None  # calling contexts only, no samples
        name, _at, period = event.partition("@")
        try:
            period_us = float(period) if period else 1000.0
        except ValueError:
            period_us = 1000.0
        clock = "cpu" if name.strip().lower() in ("cpu", "timer") else "wall"
        return (1e6 / period_us if period_us > 0 else 0.0), clock

    def _mark_sampled(self, tree):
        # A sampled profile (its samples in `hits`): samples and estimated times instead of
        # visits; with the CPU clock the root's uncovered time is idle, shown apart.
        event = self.sampling_event()
        if tree.hits is None or event is None:
            return
        tree.sampling = Sampling(event[0], event[1], sum(sum(row) for row in tree.hits))
        if event[1] == "cpu":
            tree.take_out_idle()

    # -- what the run was --

    def cfg(self, name, default=None):
        for key, value in self.config:
            if key == name:
                return value
        return default

    @property
    def program(self):
        """The measured program's name: the profile says it, else the program root region
        (paradigm measurement, role artificial) of the call tree or the trace."""
        if self.profile is not None:
            name = self.profile.attrs.get("Score-P::ProgramName")
            if name:
                return name
        regions = self._tree.regions if self._tree is not None else \
            self.scan.regions if self.scan is not None else []
        for r in regions:
            if r.is_program:
                return r.name
        return os.path.basename(self.directory)

    def missing(self):
        """What this experiment lacks, one sentence each, with how to get it."""
        out = []
        if self.profile is None:
            out.append("no profile (profile.cubex): profiling was off; the call tree is "
                       "rebuilt from the trace, without parameter splits")
        if not self.has_trace:
            out.append("no trace (traces.otf2): tracing was off; no timeline, Chrome JSON, "
                       "buffer flushes or MPI messages (run with SCOREP_ENABLE_TRACING=true)")
        elif self.trace_error:
            out.append("the trace could not be read (%s): no timeline, buffer flushes or MPI "
                       "messages" % self.trace_error)
        return out

    def depth_limit(self):
        value = None
        if self.profile is not None:
            value = self.profile.attrs.get("scorep::max_callpath_depth")
        value = value or self.cfg("SCOREP_PROFILING_MAX_CALLPATH_DEPTH")
        try:
            return int(value) if value else None
        except ValueError:
            return None

    def files_size(self):
        """(profile bytes, trace bytes) on disk."""
        prof = os.path.getsize(self.profile_path) if self.profile_path else 0
        trace = 0
        if self.trace_path:
            base = self.trace_path[:-len(".otf2")]
            for p in (self.trace_path, base + ".def"):
                if os.path.exists(p):
                    trace += os.path.getsize(p)
            if os.path.isdir(base):
                for entry in os.scandir(base):
                    if entry.is_file():
                        trace += entry.stat().st_size
        return prof, trace

    def measurement_facts(self):
        """The measurement's own cost and what it lost: [(severity, text)] with severity
        "info" or "warn"."""
        from scorep.report.model import format_bytes, format_count, format_seconds
        facts = []
        prof_bytes, trace_bytes = self.files_size()
        if self.profile is not None:
            facts.append(("info", "profile: %s on disk, %s call paths" % (
                format_bytes(prof_bytes), format_count(len(self.profile.cnodes)))))
        scan = self.scan
        flushes_said = False
        if scan is not None:
            facts.append(("info", "trace: %s on disk, %s events, %s calls recorded" % (
                format_bytes(trace_bytes), format_count(scan.events),
                format_count(scan.calls))))
            n, secs = scan.flush_stats()
            run = max((s["last"] - s["first"]) * NS for s in scan.loc_stats) \
                if scan.loc_stats else 0.0
            if n:
                flushes_said = True
                facts.append(("warn", "the trace buffers were flushed to disk %d time(s) "
                              "during the run: the program stood still for %s (%.1f%% of "
                              "the run); raise SCOREP_TOTAL_MEMORY (now %s) or filter "
                              "regions" % (n, format_seconds(secs),
                                           100.0 * secs / run if run else 0.0,
                                           self.cfg("SCOREP_TOTAL_MEMORY", "?"))))
            else:
                facts.append(("info", "no trace buffer flush during the run"))
            off = sum(s["off_count"] for s in scan.loc_stats)
            if off:
                facts.append(("info", "recording was switched off %d time(s) for %s in "
                              "total (those calls are not in the trace)" % (
                                  off, format_seconds(sum(s["off_ns"] for s in
                                                          scan.loc_stats) * NS))))
            bad = sum(s["unmatched_leaves"] for s in scan.loc_stats)
            open_ = sum(s["unclosed"] for s in scan.loc_stats)
            if bad or open_:
                facts.append(("warn", "%d leave(s) without an enter and %d call(s) never "
                              "left (closed at the end of their thread)" % (bad, open_)))
        if scan is None and self.profile is not None:
            # Without a trace the profile's MEASUREMENT OFF call paths tell the same.
            off = [c for c in self.profile.cnodes if c.region.name == "MEASUREMENT OFF"]
            if off:
                visits = self.profile.values("visits", inclusive=False)
                incl = self.profile.values("time", inclusive=True)
                facts.append(("info", "recording was switched off %d time(s) for %s in "
                              "total (MEASUREMENT OFF in the profile)" % (
                                  sum(sum(visits[c.id]) for c in off),
                                  format_seconds(sum(sum(incl[c.id]) for c in off)))))
        tree = self._tree
        if tree is not None and len(tree.roots) == 1 and tree.roots[0].region.kind == "measurement":
            root = tree.roots[0]
            outside = sum(tree.excl[root.id])
            total = tree.total_time()
            if total > 0:
                facts.append(("info", "%s (%.1f%%) of the run is outside any recorded function: "
                              "interpreter start-up and shut-down, uninstrumented or filtered "
                              "code" % (format_seconds(outside), 100.0 * outside / total)))
        if tree is not None and getattr(tree, "imports_folded", False):
            folded = self.recorded_tree
            from scorep.report.imports import is_import_machinery
            paths = sum(1 for n in folded.nodes if is_import_machinery(n.region))
            facts.append(("info", "imports folded: %d call paths of importlib's frames are in "
                          "'import NAME' nodes (one per imported module) and '(import "
                          "system)'; --show-imports shows them as recorded" % paths))
        limit = self.depth_limit()
        if self.profile is not None:
            collapsed = any(c.region.name == "COLLAPSE" for c in self.profile.cnodes)
            if collapsed or (limit and max(profile_depths(self.profile), default=0) > limit):
                facts.append(("warn", "call paths reach SCOREP_PROFILING_MAX_CALLPATH_DEPTH"
                              "%s: deeper calls are summed up in COLLAPSE call paths" %
                              ("=%d" % limit if limit else "")))
        for note in manifest_notes(self.manifest):
            # The measurement's own line on flushes says what the trace's scan said above.
            if flushes_said and note.startswith("the trace buffers were flushed"):
                continue
            facts.append(("warn", "MANIFEST.md: " + note))
        return facts


def profile_depths(profile):
    """Call-path length of every cnode (a root has 1)."""
    depth = {}
    for c in profile._deep:  # parents first
        depth[c.id] = 1 if c.parent is None else depth[c.parent.id] + 1
    return depth.values()
