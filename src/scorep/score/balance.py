"""scorep-score --ranks: the load balance of each region over the MPI ranks, over the
processes of a program that started child processes, or over the threads when there is one
process."""

from scorep._errors import one_line
from scorep.score.formatting import fixed, with_commas
from scorep.score.model import ScoreError

RANK_TOP_REGIONS = 20


def rank_balance(profile):
    """(unit, unit names, rows): unit is "rank" (MPI), "process" (child processes) or
    "thread" (one process);
    each row is (region, per-unit exclusive seconds, per-unit visits, (min, mean, max,
    stddev)) for every region visited somewhere. Each unit's value sums its threads."""
    from scorep.report.analysis import balance_stats
    from scorep.report.model import ReportError
    from scorep.report.readers import tree_from_profile
    try:
        tree = tree_from_profile(profile)
    except ReportError as error:
        raise ScoreError(one_line(error))
    if len(tree.ranks) > 1:
        names = [r.name for r in tree.ranks]
        mpi = all(name.startswith("MPI Rank ") for name in names)
        unit = "rank" if mpi else "process"
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
    plural = "processes" if unit == "process" else unit + "s"
    title = "Exclusive time per %s of each region, over %d %s" % (unit, len(names), plural)
    if unit == "thread":  # ranks are their own numbers; threads need their names
        title += " (%s)" % ", ".join("%d = %s" % (i, n) for i, n in enumerate(names))
    lines = [title, ""]
    if unit == "process":  # one line each: the names carry pids and multiprocessing's names
        lines = [title + ":"] + ["  %d = %s" % (i, n) for i, n in enumerate(names)] + [""]
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


