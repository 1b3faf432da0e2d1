"""Line-level profiles (lines.json): reading them, the terminal view in line_profiler's
layout, and the .lprof export that line_profiler's own reader loads.

lines.json, written by the measurement's lines substrate, holds

    {"format": "scorep-lines 1",
     "functions": {"<region id>": {"name": "mod:f", "file": "/abs/mod.py", "first_line": 10}},
     "locations": [{"rank": 0, "thread": "MainThread",
                    "lines": [[<region id>, <line>, <hits>, <seconds>], ...]}]}

A line's time runs from its line event to the next line event, yield or return of the same
frame, so the time of calls made on a line is the line's (as line_profiler counts it); a
generator's time while it is suspended is not counted. Hits are line events (a loop's
header line is hit once more than its body).
"""

import inspect
import json
import linecache
import os
import pickle

from scorep.report.model import ReportError

FILE_NAME = "lines.json"
FORMAT = "scorep-lines 1"


class LineFunction:
    """One chosen function: per line (hits, seconds), summed over the locations asked for."""

    def __init__(self, name, file, first_line):
        self.name = name
        self.file = file
        self.first_line = first_line
        self.lines = {}

    def add(self, line, hits, seconds):
        old_hits, old_seconds = self.lines.get(line, (0, 0.0))
        self.lines[line] = (old_hits + hits, old_seconds + seconds)

    @property
    def total(self):
        return sum(seconds for _, seconds in self.lines.values())

    @property
    def short_name(self):
        """The function's own name, as line_profiler shows it (mod.Class:f -> f)."""
        return self.name.rsplit(":", 1)[-1]


class LineProfiles:
    """What lines.json holds: the chosen functions and each location's lines."""

    def __init__(self, path):
        self.path = path
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except OSError as error:
            raise ReportError("cannot read %s: %s" % (path, error.strerror)) from None
        except ValueError as error:
            raise ReportError("%s is not a line profile (%s)" % (path, error)) from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ReportError("%s is not a line profile of this scorep (format %r, expected "
                              "%r)" % (path, data.get("format") if isinstance(data, dict)
                                       else None, FORMAT))
        try:
            self.functions = {int(k): (v["name"], v["file"], int(v["first_line"]))
                              for k, v in data["functions"].items()}
            self.locations = [(int(loc["rank"]), str(loc["thread"]),
                               [(int(r), int(line), int(hits), float(seconds))
                                for r, line, hits, seconds in loc["lines"]])
                              for loc in data["locations"]]
        except (KeyError, TypeError, ValueError) as error:
            raise ReportError("%s is damaged: %s" % (path, error)) from None
        for _, _, entries in self.locations:
            for region, _, _, _ in entries:
                if region not in self.functions:
                    raise ReportError("%s is damaged: lines of an undefined function %d"
                                      % (path, region))

    def location_names(self):
        multi_rank = len({rank for rank, _, _ in self.locations}) > 1
        return ["rank %d, %s" % (rank, thread) if multi_rank else thread
                for rank, thread, _ in self.locations]

    def functions_of(self, locations=None):
        """[LineFunction] summed over `locations` (indices; None: all), by total time."""
        chosen = {}
        for index, (_, _, entries) in enumerate(self.locations):
            if locations is not None and index not in locations:
                continue
            for region, line, hits, seconds in entries:
                if region not in chosen:
                    chosen[region] = LineFunction(*self.functions[region])
                chosen[region].add(line, hits, seconds)
        return sorted(chosen.values(), key=lambda f: (-f.total, f.name))


def find(directory):
    """The experiment's line profiles, or None when it has none."""
    if not directory:
        return None
    path = os.path.join(directory, FILE_NAME)
    return LineProfiles(path) if os.path.exists(path) else None


def require(exp):
    profiles = find(exp.directory)
    if profiles is None:
        raise ReportError("%s has no line profiles (%s): measure with "
                          "--lines=PATTERNS (region names, e.g. --lines='mymod:hot_*') or "
                          "decorate functions with @scorep.user.lines" % (exp.path, FILE_NAME))
    return profiles


def source_block(function):
    """The function's source lines from its first line (the def, or its first decorator) to
    its end, as line_profiler finds them; [] when the file cannot be read."""
    if not function.file or not os.path.exists(function.file):
        return []
    linecache.checkcache(function.file)
    lines = linecache.getlines(function.file)
    if not 0 < function.first_line <= len(lines):
        return []
    try:
        return inspect.getblock(lines[function.first_line - 1:])
    except Exception:  # tokenizer trouble in unusual source: the rest of the file
        return lines[function.first_line - 1:]


TEMPLATE = "%6s %9s %12s %8s %8s  %-s"


def render_function(function, unit=1e-6):
    """One function in line_profiler's layout (times in `unit` seconds)."""
    total = function.total
    out = ["Total time: %g s" % total]
    block = source_block(function)
    if block:
        out += ["File: %s" % function.file,
                "Function: %s at line %d" % (function.short_name, function.first_line)]
    else:
        out += ["", "Could not find file %s" % function.file,
                "Continuing without the function's contents."]
        last = max(function.lines, default=function.first_line)
        block = [""] * (max(last - function.first_line + 1, 1))
    header = TEMPLATE % ("Line #", "Hits", "Time", "Per Hit", "% Time", "Line Contents")
    out += ["", header, "=" * len(header)]
    for offset, text in enumerate(block):
        line = function.first_line + offset
        hits, seconds = function.lines.get(line, (None, None))
        if hits is None:
            cells = ("", "", "", "")
        else:
            cells = (hits, "%5.1f" % (seconds / unit),
                     "%5.1f" % (seconds / unit / hits) if hits else "",
                     "%5.1f" % (100 * seconds / total) if total else "")
        out.append(TEMPLATE % ((line,) + cells + (text.rstrip("\r\n"),)))
    # Lines outside the function's source block (a file changed since the run).
    stray = sorted(line for line in function.lines
                   if not function.first_line <= line < function.first_line + len(block))
    for line in stray:
        hits, seconds = function.lines[line]
        out.append(TEMPLATE % (line, hits, "%5.1f" % (seconds / unit),
                               "%5.1f" % (seconds / unit / hits) if hits else "",
                               "%5.1f" % (100 * seconds / total) if total else "",
                               "(not in the function's source as it is now)"))
    return "\n".join(out) + "\n"


def render(profiles, per_location=False, unit=1e-6):
    """Every chosen function, summed over all locations, or per location (thread/rank)."""
    out = ["Timer unit: %g s" % unit, ""]
    groups = [(None, None)]
    if per_location:
        groups = [(name, [i]) for i, name in enumerate(profiles.location_names())]
    for name, locations in groups:
        functions = profiles.functions_of(locations)
        if name is not None:
            out.append("=== %s ===" % name)
            out.append("")
        if not functions:
            out.append("(no lines)")
            out.append("")
        for function in functions:
            out.append(render_function(function, unit))
    return "\n".join(out)


# ---- .lprof: line_profiler's own file ---------------------------------------------------

LPROF_UNIT = 1e-9


def lprof_timings(profiles):
    """{(file, first line, function name): [(line, hits, time in ns), ...]} as line_profiler's
    LineStats holds it. A line with time but no hit (a generator resumed on it after a
    profile started mid-call) counts one hit: line_profiler divides by the hits."""
    timings = {}
    for function in profiles.functions_of():
        key = (function.file, function.first_line, function.short_name)
        timings[key] = [(line, max(hits, 1), int(round(seconds / LPROF_UNIT)))
                        for line, (hits, seconds) in sorted(function.lines.items())]
    return timings


def line_stats_class():
    """Where line_profiler keeps its LineStats class (the module its pickles name): that of
    the installed line_profiler, else that of Debian 12's (4.0: line_profiler._line_profiler)."""
    try:
        from line_profiler import LineStats
        return LineStats.__module__, LineStats.__qualname__
    except ImportError:
        return "line_profiler._line_profiler", "LineStats"


def write_lprof(profiles, path):
    """A pickle of line_profiler's LineStats(timings, unit), written without needing
    line_profiler where the report is made: the class by reference, then its state.
    Returns the number of functions."""
    timings = lprof_timings(profiles)
    module, name = line_stats_class()
    state = pickle.dumps({"timings": timings, "unit": LPROF_UNIT}, protocol=2)
    # state: PROTO 2 ... STOP; its memo starts at 0, and the lines before it use none.
    body = state[2:-1]
    data = (b"\x80\x02"                                          # PROTO 2
            + b"c%s\n%s\n" % (module.encode(), name.encode())    # GLOBAL
            + b")"                                               # EMPTY_TUPLE
            + b"\x81"                                            # NEWOBJ
            + body                                               # the state dict
            + b"b"                                               # BUILD
            + b".")                                              # STOP
    with open(path, "wb") as f:
        f.write(data)
    return len(timings)
