"""scorep-score's command line: options, the run, one error line and the exit status."""

import os
import sys

from scorep._errors import MeasurementError, UsageError, one_line, run_tool
from scorep.score.balance import format_rank_balance
from scorep.score.filters import (format_generate_message, parse_generate_options,
                                  write_filter_file)
from scorep.score.formatting import format_report
from scorep.score.estimator import estimate
from scorep.score.model import ScoreError

SORT_KEYS = {
    "maxbuffer": "maxbuffer", "maxbuf": "maxbuffer", "totaltime": "totaltime",
    "visits": "visits", "name": "name", "timepervisit": "timepervisit",
}

USAGE = """\
Usage: scorep-score [options] <experiment directory | profile.cubex>

Estimates the size of an OTF2 trace and the SCOREP_TOTAL_MEMORY a tracing run needs from a
CUBE4 profile, and helps to filter regions out of the measurement.

Without arguments this help is shown. Profiles written by Score-P are scored with Score-P's
own rules (its event sizes through otf2-estimator, its memory hint), profiles written by this
tool with the sizes our trace writer really produces.

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
  -g all        write ./max_scorep.filter instead: it excludes every region of type
                USR or COM, whatever its numbers (the most a filter can leave out)
  -c NUM        the number of hardware counters a tracing run records per event
                (default 0): each enter and leave then also writes a metric record
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
        self.dense = 0  # -c


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
        elif arg in ("-s", "-f", "-c"):
            if i + 1 >= len(argv):
                raise UsageError("%s needs a value" % arg)
            i += 1
            if arg == "-s":
                mode = SORT_KEYS.get(argv[i].lower())
                if mode is None:
                    raise UsageError("-s %s: unknown sorting mode (use maxbuffer, totaltime, "
                                     "visits, timepervisit or name)" % argv[i])
                opts.sort = mode
            elif arg == "-c":
                opts.dense = parse_counters(argv[i])
            else:
                opts.filter_file = argv[i]
        elif arg.startswith("-s") and len(arg) > 2:
            mode = SORT_KEYS.get(arg[2:].lower())
            if mode is None:
                raise UsageError("%s: unknown sorting mode" % arg)
            opts.sort = mode
        elif arg == "-g":
            # The list is optional: the next argument is it only when it has KEY=VALUE form
            # or is "all", and is not the profile (it names no file, or another argument
            # follows), so that `-g profile.cubex` keeps working.
            following = argv[i + 1] if i + 1 < len(argv) else ""
            listing = "=" in following or \
                following.split(",")[0].strip().lower() == "all"
            if listing and not following.startswith("-") and \
                    (i + 2 < len(argv) or not os.path.exists(following)):
                i += 1
                opts.generate = parse_generate_options(argv[i])
            else:
                opts.generate = parse_generate_options("")
        elif arg.startswith("-g") and "=" in arg:
            opts.generate = parse_generate_options(arg[2:])
        elif arg.startswith("-") and arg != "-":
            raise UsageError("unknown option %s (see scorep-score --help)" % arg)
        else:
            if opts.path is not None:
                raise UsageError("one profile only (got %s and %s)" % (opts.path, arg))
            opts.path = arg
        i += 1
    if opts.ranks and (opts.filter_file is not None or opts.generate is not None):
        raise UsageError("--ranks does not go with -f or -g")
    if not argv:
        opts.help = True  # Score-P's tool shows its help when called without arguments
    if opts.path is None and not (opts.help or opts.version):
        raise UsageError("no profile given: scorep-score [options] "
                         "<experiment directory | profile.cubex> (see --help)")
    return opts


def parse_counters(text):
    """-c's number of hardware counters: a non-negative integer."""
    try:
        number = int(text.strip())
    except ValueError:
        number = -1
    if number < 0:
        raise UsageError("-c %s: the number of hardware counters is a non-negative integer"
                         % text)
    return number


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
    profile = cube.read(opts.path)
    if opts.ranks:
        out.write(format_rank_balance(profile, opts.sort, opts.show_regions, opts.mangled))
        out.flush()
        return 0
    filter = None
    if opts.filter_file is not None:
        from scorep.measure.filter import Filter
        if not os.path.isfile(opts.filter_file):
            raise ScoreError("%s: no such filter file" % opts.filter_file)
        try:
            filter = Filter(opts.filter_file)
        except MeasurementError as error:
            raise ScoreError("-f needs the measurement core: %s" % one_line(error))
    est = estimate(profile, filter, opts.dense)
    text = format_report(est, opts.sort, opts.show_regions, opts.mangled)
    if opts.generate is not None:
        path, moved, candidates = write_filter_file(est, opts.generate, opts.sort)
        text += format_generate_message(path, moved, candidates, opts.generate)
    out.write(text)
    out.flush()
    return 0


def main(argv=None):
    return run_tool("scorep-score", lambda args: run(args, sys.stdout),
                    list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
