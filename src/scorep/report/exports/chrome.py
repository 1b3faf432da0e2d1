"""Chrome/Perfetto trace events (.json): what ui.perfetto.dev, chrome://tracing and
speedscope open. One complete ("X") event per call with ts/dur in microseconds with three
decimals (ns precision), per thread in (start, depth) order; one pid per rank with its
name, one tid per thread with its name; the region's file and line in each event's args;
MPI messages as flow arrows (s/f); buffer flushes on a lane of their own. The events are written by the C reader in a second pass
(scorep/_native/reader/rd_chrome.c).

Viewers load the whole file into memory: Perfetto gives up around 1 GB of JSON,
chrome://tracing far earlier. Above --max-size (300 MB by default) nothing is written;
the error names the --min-duration and --max-depth that would fit."""

import json
import os

from scorep.report.model import (ReportError, disambiguate, format_bytes, format_count,
                                 format_duration_option)

__all__ = ["estimate", "check_size", "write", "BYTES_PER_EVENT"]

# Measured: {"ph":"X","pid":1,"tid":1,"ts":123456.789,"dur":12.345,"name":,"cat":"python"}
# plus ",\n" is about 82 bytes without the name and the args (file and line), which
# args_bytes() adds as the mean over the regions.
BYTES_PER_EVENT = 82
DEFAULT_MAX_SIZE = 300 * 10**6


def _first_bucket(min_ns):
    from scorep import _reader
    return _reader.bucket(min_ns) if min_ns > 0 else 0


def args_bytes(scan):
    """The mean length of the per-region args (file and line) of an event."""
    regions = [r for r in scan.regions if r.file]
    if not regions:
        return 0
    return sum(len(_args(r)) for r in regions) // len(regions)


def estimate(scan, min_ns=0, max_depth=None, per_event=None, names_in_events=True):
    """(calls, bytes) that an export with these caps would hold, from the scan's
    histogram of durations per depth. per_event: bytes per call without its name
    (default: a Chrome event with its args); names_in_events: each event repeats the
    region's name (JSON) rather than referring to it (speedscope, Perfetto)."""
    if per_event is None:
        per_event = BYTES_PER_EVENT + args_bytes(scan)
    counts, names = scan.histogram()
    first = _first_bucket(min_ns)
    depth_end = len(counts) if max_depth is None else min(len(counts), max_depth + 1)
    calls = nbytes = 0
    for d in range(depth_end):
        row, nrow = counts[d], names[d]
        for b in range(first, len(row)):
            if row[b]:
                calls += row[b]
                nbytes += (nrow[b] if names_in_events else 0) + per_event * row[b]
    return calls, nbytes


def suggestions(scan, max_size, min_ns=0, max_depth=None, **kind):
    """--min-duration and --max-depth values that bring the export under max_size."""
    from scorep import _reader
    out = []
    for b in range(_first_bucket(min_ns), _reader.BUCKETS):
        floor = _reader.bucket_floor(b)
        if floor < min_ns:
            continue
        calls, nbytes = estimate(scan, floor, max_depth, **kind)
        if nbytes <= max_size:
            out.append("--min-duration %s (~%s calls, ~%s)" % (
                format_duration_option(floor), format_count(calls), format_bytes(nbytes)))
            break
    best = None
    limit = _reader.DEPTHS - 1 if max_depth is None else max_depth
    for d in range(limit + 1):
        calls, nbytes = estimate(scan, min_ns, d, **kind)
        if nbytes > max_size:
            break
        best = (d, calls, nbytes)
    if best is not None:
        out.append("--max-depth %d (~%s calls, ~%s)" % (best[0], format_count(best[1]),
                                                        format_bytes(best[2])))
    return out


def check_size(scan, path, min_ns, max_depth, max_size, force,
               viewers="Perfetto and chrome://tracing", **kind):
    """(calls, bytes) of an export within --max-size, or a ReportError naming the
    --min-duration and --max-depth that would fit. kind: estimate's per_event and
    names_in_events of the format."""
    calls, nbytes = estimate(scan, min_ns, max_depth, **kind)
    if nbytes <= max_size or force:
        return calls, nbytes
    hint = suggestions(scan, max_size, min_ns, max_depth, **kind)
    raise ReportError(
        "%s would hold %s calls (~%s), more than %s load (--max-size %s); keep fewer calls "
        "with %s, or write it anyway with --force" % (
            path, format_count(calls), format_bytes(nbytes), viewers, format_bytes(max_size),
            " or ".join(hint) if hint else "--min-duration/--max-depth"))


def _category(region):
    if region.paradigm == "user" and region.file:
        return "python"
    return region.paradigm or "unknown"


def _args(region):
    args = {}
    if region.file:
        args["file"] = region.file
        if region.line:
            args["line"] = region.line
    if region.name != region.display:
        args["region"] = region.name
    if not args:
        return ""
    return ',"args":' + json.dumps(args, ensure_ascii=True, separators=(",", ":"))


def write(exp, path, min_ns=0, max_depth=None):
    """Writes the events; the experiment's scan must have been made with a durations
    file. Returns the writer's counts (complete, flows, flushes, bytes)."""
    scan = exp.scan
    if scan is None or not scan.opts.get("durations_path"):
        raise ReportError("internal: the trace was scanned without call durations")
    defs = scan.defs
    nloc = len(scan.locations)
    pids = [scan.locations[l].rank + 1 for l in range(nloc)]  # pid 0 is the idle task
    tids = [scan.locations[l].thread + 1 for l in range(nloc)]
    flush_tids = [1000000 + t for t in tids]
    flush_locs = {loc for _, _, loc in scan.messages()["flushes"]}
    flush_locs |= {l for l, s in enumerate(scan.loc_stats) if s["flushes"]}
    single = len(scan.ranks) == 1
    meta = []
    for rank in scan.ranks:
        pid = rank.index + 1
        name = "%s (%s)" % (exp.program, rank.name) if single else rank.name
        meta.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                     "args": {"name": name}})
        meta.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
                     "args": {"sort_index": rank.index}})
    for l, loc in enumerate(scan.locations):
        meta.append({"ph": "M", "name": "thread_name", "pid": pids[l], "tid": tids[l],
                     "args": {"name": loc.name}})
        meta.append({"ph": "M", "name": "thread_sort_index", "pid": pids[l], "tid": tids[l],
                     "args": {"sort_index": loc.thread}})
        if l in flush_locs:
            meta.append({"ph": "M", "name": "thread_name", "pid": pids[l],
                         "tid": flush_tids[l],
                         "args": {"name": "%s: trace buffer flushes" % loc.name}})
    header = '{"traceEvents":[\n' + ",\n".join(
        json.dumps(m, ensure_ascii=True, separators=(",", ":")) for m in meta)
    other = {"exporter": "scorep-report", "experiment": exp.path, "program": exp.program,
             "time": "microseconds since the start of the trace",
             "min_duration_ns": min_ns, "max_depth": max_depth}
    footer = '\n],"displayTimeUnit":"ns","otherData":%s}\n' % json.dumps(
        other, ensure_ascii=True, separators=(",", ":"))
    names = [None] * len(defs["regions"])
    cats = [None] * len(defs["regions"])
    disambiguate(scan.regions)
    for r in scan.regions:
        # ASCII-escaped JSON strings: valid UTF-8 whatever the file names hold.
        names[r.id] = json.dumps(r.display, ensure_ascii=True)
        # The C writer puts this text verbatim after "cat": in each event of the region:
        # the category, then the region's source as args (Perfetto shows them with the
        # slice, speedscope and chrome://tracing ignore them).
        cats[r.id] = json.dumps(_category(r), ensure_ascii=True) + _args(r)
    tmp = path + ".part"
    try:
        stats = scan.trace.write_chrome(
            scan.raw, tmp, scan.opts["durations_path"], header, footer, names, cats, pids,
            tids, flush_tids, min_ns, 0xFFFFFFFF if max_depth is None else max_depth)
        os.replace(tmp, path)
    except RuntimeError as error:
        raise ReportError(" ".join(str(error).split())) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return stats
