"""Every call of a trace in time order, per thread: what the evented exports (speedscope's
time-ordered profile, Perfetto's protobuf trace) are made of.

The calls come from one pass of the C reader (scorep._reader) that keeps all calls at
least --min-duration long and at most --max-depth deep: such a set is closed under
"parent of" (a caller lasts at least as long as its callee and is less deep), so the
open/close events built from it nest properly."""

import array
import heapq

from scorep.report.model import ReportError, disambiguate, location_offsets

__all__ = ["TraceCalls", "scan_calls"]


class TraceCalls:
    """Columns of the kept calls, sorted by (location, start, depth); ``offsets[l]`` ..
    ``offsets[l + 1]`` are location l's calls."""

    def __init__(self, scan, start, dur, region, loc, depth):
        self.scan = scan
        self.start, self.dur, self.region, self.loc, self.depth = start, dur, region, loc, depth
        nloc = len(scan.locations)
        self.offsets = location_offsets(loc, nloc)

    def __len__(self):
        return len(self.start)

    def events(self, l):
        """(time ns, True for open / False for close, region id) of location l in time
        order; a callee closes before its caller, and before the next call opens when
        they share the timestamp."""
        start, dur, region = self.start, self.dur, self.region
        stack = []  # (end, region)
        for i in range(self.offsets[l], self.offsets[l + 1]):
            s = start[i]
            while stack and stack[-1][0] <= s:
                end, r = stack.pop()
                yield end, False, r
            end = s + dur[i]
            if stack and end > stack[-1][0]:
                end = stack[-1][0]  # never past the caller's end (rounding of the trace)
            yield s, True, region[i]
            stack.append((end, region[i]))
        while stack:
            end, r = stack.pop()
            yield end, False, r

    def merged_events(self, locations=None):
        """(time, location, open?, region) of all locations merged in time order; at one
        timestamp a location's own order is kept."""
        locations = range(len(self.scan.locations)) if locations is None else locations
        streams = [((t, l, seq, is_open, r) for seq, (t, is_open, r) in enumerate(self.events(l)))
                   for l in locations]
        for t, l, _, is_open, r in heapq.merge(*streams):
            yield t, l, is_open, r


def scan_calls(exp, min_ns=0, max_depth=None):
    """One pass over the experiment's trace keeping every call that --min-duration and
    --max-depth let through. The experiment's earlier scan (or a quick one) tells how many
    there are, so that the reader keeps them all."""
    if not exp.has_trace:
        raise ReportError("%s has no trace (traces.otf2): run with SCOREP_ENABLE_TRACING=true"
                          % exp.path)
    from scorep.report.exports.chrome import estimate
    if exp.scan is None:
        exp.run_scan()
    calls, _ = estimate(exp.scan, min_ns, max_depth, per_event=0)
    trace = exp.trace()
    try:
        raw = trace.scan(tree=False, timeline_limit=max(1, min(calls, exp.scan.calls) + 1),
                         timeline_min_ns=min_ns,
                         timeline_max_depth=0xFFFFFFFF if max_depth is None else max_depth)
    except RuntimeError as error:
        raise ReportError(" ".join(str(error).split())) from None
    from scorep.report.readers import TraceScan
    scan = TraceScan(trace, exp.definitions(), raw, {"tree": False})
    disambiguate(scan.regions)
    cols = raw.slices()
    if raw.summary["threshold_ns"] > min_ns:
        raise ReportError("internal: the trace reader dropped calls (kept %d of %d)"
                          % (raw.summary["slices"], exp.scan.calls))
    return TraceCalls(scan, array.array("Q", cols["start"]), array.array("Q", cols["dur"]),
                      array.array("I", cols["region"]), array.array("I", cols["loc"]),
                      array.array("I", cols["depth"]))
