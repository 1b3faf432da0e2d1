"""scorep-score -g: the initial filter file."""

import math
import os

from scorep._errors import UsageError
from scorep._files import move_aside
from scorep.score.formatting import _per_visit, _sort, fixed, with_commas
from scorep.score.model import ScoreError

FILTER_FILE_NAME = "initial_scorep.filter"


# -g defaults: Score-P's (a region is listed when it holds at least 1 % of max_buf and one
# visit takes at most 1 us), all conditions must hold.
GENERATE_DEFAULTS = {"bufferpercent": 1.0, "timepervisit": 1.0, "visits": 0,
                     "bufferabsolute": 0.0, "type": "usr"}


def parse_generate_options(text):
    """-g's KEY=VALUE[,KEY=VALUE]* (case and blanks do not matter, as in Score-P)."""
    options = dict(GENERATE_DEFAULTS)
    for item in (text or "").split(","):
        token = "".join(item.split()).lower()
        if not token:
            continue
        key, sep, value = token.partition("=")
        if not sep or key not in GENERATE_DEFAULTS:
            raise UsageError("-g: %r is not KEY=VALUE with KEY one of %s" % (
                item.strip(), ", ".join(sorted(GENERATE_DEFAULTS))))
        if key == "type":
            if value not in ("usr", "com", "both"):
                raise UsageError("-g: type=%s: expected usr, com or both" % value)
            options[key] = value
            continue
        try:
            number = int(value) if key == "visits" else float(value)
        except ValueError:
            raise UsageError("-g: %s=%s is not a number" % (key, value))
        if number < 0 or not math.isfinite(number):
            raise UsageError("-g: %s=%s must not be negative" % (key, value))
        if key == "bufferpercent" and number > 100:
            raise UsageError("-g: bufferpercent=%s: a percentage lies in 0-100" % value)
        options[key] = number
    return options


def escape_pattern(name):
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
            lines.append("    EXCLUDE MANGLED %s" % escape_pattern(mangled))
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
                      "    EXCLUDE MANGLED %s" % escape_pattern(mangled)]
    lines.append("SCOREP_REGION_NAMES_END")
    return "\n".join(lines) + "\n"


def write_filter_file(est, options, sort="maxbuffer", directory="."):
    """Writes initial_scorep.filter into ``directory``; returns (path, moved_to, candidates)."""
    candidates = filter_candidates(est, options, sort)
    text = format_filter_file(est, options, candidates)
    path = os.path.abspath(os.path.join(directory, FILTER_FILE_NAME))
    try:
        moved = move_aside(path)
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


