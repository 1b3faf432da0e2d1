"""scorep-score's output: Score-P's summary lines and its table of groups and regions
(SCOREP_Score_Estimator::printGroups/printRegions, SCOREP_Score_Group::print)."""

import math

from scorep.score.model import FILTER_STATE

_UNITS = (" bytes", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB")


def readable_bytes(count):
    """Score-P's rendering of a byte count: divided by 1024 (rounding down) while above 4
    of the next unit, then 1 added, so that the value never falls below the count and can be
    given to SCOREP_TOTAL_MEMORY as it is."""
    count = int(count)
    exponent = 0
    while count > 4 * 1024 and exponent < len(_UNITS) - 1:
        count //= 1024
        exponent += 1
    return "%d%s" % (count + 1, _UNITS[exponent])


def with_commas(number):
    return "{:,}".format(int(number))


def fixed(value, digits):
    if math.isinf(value) or math.isnan(value):
        return "inf" if value > 0 else "nan"
    text = "%.*f" % (digits, value)
    # Exclusive times derived by subtraction can be a hair below zero.
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def per_visit(row):
    """Microseconds per visit (Score-P divides by the visits; none gives inf or nan)."""
    if row.visits:
        return row.time / row.visits * 1e6
    return math.inf if row.time else math.nan


_SORT_KEYS = {
    "maxbuffer": lambda r: -r.max_buf,
    "totaltime": lambda r: -r.time,
    "visits": lambda r: -r.visits,
    "timepervisit": lambda r: (math.isnan(per_visit(r)), per_visit(r)),
    "name": lambda r: r.name,
}


def sort_rows(items, mode):
    """Score-P's stable sorts: by max_buf, total time or visits (largest first), time per
    visit (smallest first) or name."""
    return sorted(items, key=_SORT_KEYS[mode])


class Table:
    """Score-P's columns; widths start at the headers' and grow to fit every row shown."""

    def __init__(self, total_time, hits, metrics=()):
        self.total_time = total_time
        self.hits = hits
        self.widths = {"type": 8, "bytes": 10, "visits": 6, "hits": 4, "time": 7,
                       "per_visit": 14}
        # The recorded metrics (exclusive sums), one column each after time/visit, headed
        # "<name>[<unit>]" as Score-P's time[s].
        self.metrics = [(m.uniq_name, "%s[%s]" % (m.disp_name, m.uom)) for m in metrics]
        for name, title in self.metrics:
            self.widths["m:" + name] = len(title)

    def fit(self, rows):
        w = self.widths
        for row in rows:
            w["type"] = max(w["type"], len(row.type))
            w["bytes"] = max(w["bytes"], len(with_commas(row.max_buf)))
            w["visits"] = max(w["visits"], len(with_commas(row.visits)))
            w["hits"] = max(w["hits"], len(with_commas(row.hits)))
            w["time"] = max(w["time"], len(fixed(row.time, 2)))
            w["per_visit"] = max(w["per_visit"], len(fixed(per_visit(row), 2)))
            for name, _title in self.metrics:
                w["m:" + name] = max(w["m:" + name],
                                     len(with_commas(row.metrics.get(name, 0))))

    def _metric_cells(self, row=None):
        return "".join(" %*s" % (self.widths["m:" + name],
                                 title if row is None else with_commas(row.metrics.get(name, 0)))
                       for name, title in self.metrics)

    def header(self):
        w = self.widths
        hits = " %*s" % (w["hits"], "hits") if self.hits else ""
        return "flt %*s %*s %*s%s %*s time[%%] %*s%s  region" % (
            w["type"], "type", w["bytes"], "max_buf[B]", w["visits"], "visits", hits,
            w["time"], "time[s]", w["per_visit"], "time/visit[us]", self._metric_cells())

    def line(self, row, symbol, name):
        w = self.widths
        share = 100.0 * row.time / self.total_time if self.total_time else 0.0
        hits = " %*s" % (w["hits"], with_commas(row.hits)) if self.hits else ""
        return " %s  %*s %*s %*s%s %*s %7s %*s%s  %s" % (
            symbol, w["type"], row.type, w["bytes"], with_commas(row.max_buf),
            w["visits"], with_commas(row.visits), hits, w["time"], fixed(row.time, 2),
            fixed(share, 1), w["per_visit"], fixed(per_visit(row), 2),
            self._metric_cells(row), name)


def region_symbol(row):
    if row.filtered is None:
        return " "
    return "+" if row.filtered else "-"


def clean_name(name):
    """A name as a literal pattern of a filter file: blanks and the wildcard and special
    characters escaped (Score-P escapes ' ', '[', ']', '*' and '!'; '?', '#' and '\\' too
    here, so that every name matches only itself)."""
    return "".join("\\" + c if c in "\\*?[]! #" else c for c in name)


def display_name(row, mangled):
    """-m shows mangled names, escaped as in a filter file where the type can be filtered."""
    if not mangled:
        return row.region.name
    name = row.region.mangled_name or row.region.name
    return clean_name(name) if FILTER_STATE.get(row.type, "-") != "-" else name


def summary_lines(scenario):
    memory = scenario.total_memory
    lines = [
        "Estimated aggregate size of event trace:                   %s"
        % readable_bytes(scenario.total_bytes),
        "Estimated requirements for largest trace buffer (max_buf): %s"
        % readable_bytes(scenario.max_buf),
        "Estimated memory requirements (SCOREP_TOTAL_MEMORY):       %s" % readable_bytes(memory),
    ]
    if scenario.memory_warning:
        lines += ["(warning: The memory requirements cannot be satisfied by Score-P to avoid",
                  " intermediate flushes when tracing. Set SCOREP_TOTAL_MEMORY=4G to get the",
                  " maximum supported memory or reduce requirements using USR regions "
                  "filters.)"]
    else:
        lines += ["(hint: When tracing set SCOREP_TOTAL_MEMORY=%s to avoid intermediate flushes"
                  % readable_bytes(memory),
                  " or reduce requirements using USR regions filters.)"]
    return lines + [""]


def wait_state_line(profile):
    """The total waiting time of a profile with wait states (a traced MPI run), or None."""
    from scorep.report.analysis import wait_states
    ws = wait_states(profile)
    if ws is None:
        return None
    share = 100.0 * ws["total"] / ws["mpi_time"] if ws["mpi_time"] > 0 else 0.0
    return ("Waiting time in MPI (wait states, all ranks): %.2fs of %.2fs in MPI (%.1f%%); "
            "scorep-report shows the patterns" % (ws["total"], ws["mpi_time"], share))


def format_report(est, sort="maxbuffer", show_regions=False, mangled=False):
    """The text scorep-score prints (without the -g message). Rows without bytes are not
    shown; the groups are sorted with ALL among them, the filtered ones after ALL-FLT."""
    lines = summary_lines(est.scenario)
    waiting = wait_state_line(est.profile)
    if waiting:
        lines[-1:-1] = ["", waiting]
    all_group, groups = est.groups()
    shown = [g for g in sort_rows([all_group] + groups, sort) if g.total_bytes > 0]
    filtered = None
    if est.filter is not None:
        f_all, f_groups = est.filtered_groups()
        filtered = [g for g in [f_all] + sort_rows(f_groups, sort) if g.total_bytes > 0]
    regions = sort_rows(est.rows, sort) if show_regions else []
    table = Table(all_group.time, est.has_hits, est.metrics)
    table.fit(shown + (filtered or []) + regions)
    lines.append(table.header())
    for group in shown:
        lines.append(table.line(group, group.symbol, group.name))
    if filtered is not None:
        lines.append("")
        for group in filtered:
            lines.append(table.line(group, group.symbol, group.name))
    if show_regions:
        lines.append("")
        for row in regions:
            lines.append(table.line(row, region_symbol(row), display_name(row, mangled)))
    return "\n".join(lines) + "\n"
