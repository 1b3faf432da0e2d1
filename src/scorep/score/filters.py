"""scorep-score -g: the initial filter file, in the shape Score-P's tool writes it
(SCOREP_Score_Estimator::generateFilterFile, SCOREP_Score_Group::getFilterCandidate): one
``EXCLUDE`` followed, per region, by comment lines with its numbers and a ``MANGLED <name>``
line, the names escaped so that each matches only itself.

``-g all`` writes ``max_scorep.filter`` instead: every region that a filter can leave out
(types USR and COM), whatever its numbers, as the most a filter can save.
"""

import math
import os

from scorep._errors import UsageError
from scorep._files import move_aside
from scorep.score.formatting import Table, clean_name, fixed, per_visit, sort_rows, with_commas
from scorep.score.model import ScoreError

FILTER_FILE_NAME = "initial_scorep.filter"
ALL_FILTER_FILE_NAME = "max_scorep.filter"

# -g defaults: Score-P's (a region is listed when it holds at least 1 % of max_buf and one
# visit takes at most 1 us), all conditions must hold.
GENERATE_DEFAULTS = {"bufferpercent": 1.0, "timepervisit": 1.0, "visits": 0,
                     "bufferabsolute": 0.0, "type": "usr"}
_ALL = {"bufferpercent": 0.0, "timepervisit": math.inf, "visits": 0, "bufferabsolute": 0.0,
        "type": "both"}
_TYPES = {"usr": ("USR",), "com": ("COM",), "both": ("USR", "COM")}


def parse_generate_options(text):
    """-g's KEY=VALUE[,KEY=VALUE]* (case and blanks do not matter, as in Score-P), or
    ``all``. Returns the options, with "file" the name of the file to write."""
    options = dict(GENERATE_DEFAULTS, file=FILTER_FILE_NAME, all=False)
    for item in (text or "").split(","):
        token = "".join(item.split()).lower()
        if not token:
            continue
        if token == "all":
            options.update(_ALL, file=ALL_FILTER_FILE_NAME, all=True)
            continue
        key, sep, value = token.partition("=")
        if not sep or key not in GENERATE_DEFAULTS:
            raise UsageError("-g: %r is not all or KEY=VALUE with KEY one of %s" % (
                item.strip(), ", ".join(sorted(GENERATE_DEFAULTS))))
        if key == "type":
            if value not in _TYPES:
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


def filter_candidates(est, options, sort="maxbuffer"):
    """The regions -g excludes, in the order of the sort key: not already left out by -f,
    of the chosen types, meeting every threshold (against the max_buf the summary reports)."""
    max_buf = est.scenario.max_buf
    types = _TYPES[options["type"]]
    chosen = []
    for row in sort_rows(est.rows, sort):
        if row.filtered or row.type not in types:
            continue
        share = 100.0 * row.max_buf / max_buf if max_buf else math.nan
        time_per_visit = per_visit(row)
        if share >= options["bufferpercent"] and \
                time_per_visit <= options["timepervisit"] and \
                row.visits >= options["visits"] and \
                row.max_buf / float(1 << 20) >= options["bufferabsolute"]:
            chosen.append(row)
    return chosen


def common_prefix(est):
    """The longest common beginning of the source files of USR regions (Score-P's
    SCOREP_Score_Profile::getPathPrefix); comments show the files without it."""
    prefix = None
    for row in est.all_rows:
        file = row.region.file or ""
        if row.type not in ("USR", "COM") or not file:
            continue
        if prefix is None:
            prefix = file
        else:
            n = 0
            while n < len(prefix) and n < len(file) and prefix[n] == file[n]:
                n += 1
            prefix = prefix[:n]
    return prefix or ""


def _short(file, prefix):
    return file[len(prefix):] if prefix and file.startswith(prefix) else file


def _number(value):
    """A number as C++'s default stream output writes it (six significant digits)."""
    return "%g" % value


def format_filter_file(est, options, candidates, moved_filter=None):
    all_group, _ = est.groups()
    table = Table(est.total_time, False)
    table.fit([all_group] + est.rows)
    width = table.widths
    prefix = common_prefix(est)
    lines = [
        "# Initial filter file, starting point for further adaptation.",
        "# Written by scorep-score -g from %s." % est.profile.path,
        "#",
        "# Considerations:",
        "#  - check possible wildcard options",
        "#  - check selected functions for relevancy",
        "#    (w.r.t. your knowledge of the application)",
        "#",
        "# Generated with the following parameters:",
    ]
    if options["all"]:
        lines.append("#  - Every region that can be filtered, whatever its numbers "
                     "(scorep-score -g all).")
    else:
        lines += [
            "#  - A region has to use at least %s%% of the estimated trace buffer."
            % _number(options["bufferpercent"]),
            "#  - A region has to have a time/visits value of at most %s us."
            % _number(options["timepervisit"]),
        ]
        if options["visits"] > 0:
            lines.append("#  - A region has to have at least %d visits." % options["visits"])
        if options["bufferabsolute"] > 0:
            lines.append("#  - A region has to use at least %sM of memory."
                         % _number(options["bufferabsolute"]))
    lines += [
        "#  - A region that is of type %s." % {"usr": "USR", "com": "COM",
                                               "both": "COM or USR"}[options["type"]],
        "#",
        "# The file contains comments for each region providing additional information",
        "# regarding the respective region. MANGLED names are module:qualname, so each",
        "# pattern leaves out exactly one Python function.",
        "# The common prefix for the files is:",
        "# '%s'" % prefix,
        "#",
        "# Use it with: python -m scorep --filter=%s <script>" % options["file"],
        "# (or SCOREP_FILTERING_FILE=%s); the Score-P user guide explains filter files."
        % options["file"],
        "SCOREP_REGION_NAMES_BEGIN",
        "  EXCLUDE",
    ]
    total_time = est.total_time
    for row in candidates:
        share = 100.0 * row.time / total_time if total_time else 0.0
        lines += [
            "    # type=%3s max_buf=%*s visits=%*s, time=%*ss (%5s%%), time/visit= %7sus" % (
                row.type, width["bytes"], with_commas(row.max_buf), width["visits"],
                with_commas(row.visits), width["time"], fixed(row.time, 2), fixed(share, 1),
                fixed(per_visit(row), 2)),
            "    # name='%s'" % row.region.name,
            "    # file='%s'" % _short(row.region.file or "", prefix),
            "    MANGLED %s" % clean_name(row.region.mangled_name or row.region.name),
            "",
        ]
    previous = [row for row in est.rows if row.filtered]
    if est.filter is not None:
        lines += ["", "    #" + "=" * 74,
                  "    # Regions directly included from filter file provided by `-f`:"]
        if moved_filter:
            lines.append("    # '%s' moved to '%s'" % (est.filter.path, moved_filter))
        else:
            lines.append("    # '%s'" % est.filter.path)
        lines.append("")
        for row in previous:
            lines += ["    # name='%s'" % row.region.name,
                      "    # file='%s'" % _short(row.region.file or "", prefix),
                      "    MANGLED %s" % clean_name(row.region.mangled_name or row.region.name),
                      ""]
    lines.append("SCOREP_REGION_NAMES_END")
    return "\n".join(lines) + "\n"


def write_filter_file(est, options, sort="maxbuffer", directory="."):
    """Writes the filter file into ``directory`` (an existing one is moved aside); returns
    (path, moved_to, candidates)."""
    candidates = filter_candidates(est, options, sort)
    path = os.path.abspath(os.path.join(directory, options["file"]))
    try:
        moved = move_aside(path)
        moved_filter = None
        if moved and est.filter is not None and \
                os.path.abspath(est.filter.path) == path:
            moved_filter = moved
        text = format_filter_file(est, options, candidates, moved_filter)
        with open(path, "w") as out:
            out.write(text)
    except OSError as error:
        raise ScoreError("cannot write %s: %s" % (path, error.strerror or error))
    return path, moved, candidates


def format_generate_message(path, moved, candidates, options):
    what = "A filter file excluding every region that can be filtered" if options["all"] \
        else "An initial filter file template"
    lines = ["", "%s has been generated: '%s'" % (what, path)]
    if candidates:
        lines.append("It excludes %d region(s): %s" % (
            len(candidates), ", ".join(r.region.name for r in candidates)))
    else:
        lines.append("No region meets the conditions: it excludes nothing.")
    if moved:
        lines.append("Moved existing filter file to: '%s'" % moved)
    name = options["file"]
    lines += [
        "",
        "To use this file for filtering, pass it to the measurement:",
        "",
        "    python -m scorep --filter=%s <script>" % name,
        "",
        "or set SCOREP_FILTERING_FILE=%s. The file is annotated with comments;" % name,
        "check that the selection suits you and add or remove regions as needed.",
    ]
    return "\n".join(lines) + "\n"
