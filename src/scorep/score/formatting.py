"""scorep-score's output: Score-P's table of groups and regions and its summary lines."""

def readable_bytes(count):
    """Score-P's rendering of a byte count: whole units of 1024 rounded up, switching to the
    next unit above 4 of it, so that it can be given to SCOREP_TOTAL_MEMORY as it is. (Score-P
    adds 1 even when the division is exact; this does not.)"""
    exponent = 0
    while count > 4 * 1024 ** (exponent + 1) and exponent < 6:
        exponent += 1
    # Rounded up, so that the hint never asks for less than the estimate.
    value = -(-count // 1024 ** exponent)
    return "%d%s" % (value, (" bytes", "kB", "MB", "GB", "TB", "PB", "EB")[exponent])


def with_commas(number):
    return "{:,}".format(int(number))


def fixed(value, digits):
    text = "%.*f" % (digits, value)
    # Exclusive times derived by subtraction can be a hair below zero.
    return text[1:] if text.startswith("-") and float(text) == 0 else text

def _sort(items, mode):
    if mode == "maxbuffer":
        return sorted(items, key=lambda r: -r.max_buf)
    if mode == "totaltime":
        return sorted(items, key=lambda r: -r.time)
    if mode == "visits":
        return sorted(items, key=lambda r: -r.visits)
    if mode == "timepervisit":
        return sorted(items, key=lambda r: _per_visit(r))
    return sorted(items, key=lambda r: r.name)


def _per_visit(row):
    return row.time / row.visits * 1e6 if row.visits else 0.0


class _Table:
    """Score-P's columns; widths start at the headers' and grow to fit every row shown."""

    def __init__(self, total_time):
        self.total_time = total_time
        self.widths = {"type": 8, "bytes": 10, "visits": 6, "time": 7, "per_visit": 14}

    def fit(self, rows):
        w = self.widths
        for row in rows:
            w["type"] = max(w["type"], len(row.type))
            w["bytes"] = max(w["bytes"], len(with_commas(row.max_buf)))
            w["visits"] = max(w["visits"], len(with_commas(row.visits)))
            w["time"] = max(w["time"], len(fixed(row.time, 2)))
            w["per_visit"] = max(w["per_visit"], len(fixed(_per_visit(row), 2)))

    def header(self):
        w = self.widths
        return "flt %*s %*s %*s %*s time[%%] %*s  region" % (
            w["type"], "type", w["bytes"], "max_buf[B]", w["visits"], "visits",
            w["time"], "time[s]", w["per_visit"], "time/visit[us]")

    def line(self, row, symbol, name):
        w = self.widths
        share = 100.0 * row.time / self.total_time if self.total_time else 0.0
        return " %s  %*s %*s %*s %*s %7s %*s  %s" % (
            symbol, w["type"], row.type, w["bytes"], with_commas(row.max_buf),
            w["visits"], with_commas(row.visits), w["time"], fixed(row.time, 2),
            fixed(share, 1), w["per_visit"], fixed(_per_visit(row), 2), name)


def _region_symbol(row):
    if row.filtered is None:
        return " "
    return "+" if row.filtered else "-"


def _display_name(row, mangled):
    return row.region.mangled_name if mangled else row.region.name


def format_report(est, sort="maxbuffer", show_regions=False, mangled=False):
    """The text scorep-score prints (without the -g message)."""
    scenario = est.scenario
    memory = scenario.total_memory
    lines = [
        "Estimated aggregate size of event trace:                   %s"
        % readable_bytes(scenario.total_bytes),
        "Estimated requirements for largest trace buffer (max_buf): %s"
        % readable_bytes(scenario.max_buf),
        "Estimated memory requirements (SCOREP_TOTAL_MEMORY):       %s" % readable_bytes(memory),
        "(hint: When tracing set SCOREP_TOTAL_MEMORY=%s to avoid intermediate flushes"
        % readable_bytes(memory),
        " or reduce requirements using USR regions filters.)",
        "",
    ]
    all_group, groups = est.groups()
    shown = [all_group] + groups
    filtered = None
    if est.filter is not None:
        f_all, f_groups = est.filtered_groups()
        filtered = [f_all] + _sort(f_groups, sort)
        shown += filtered
    regions = _sort(est.rows, sort) if show_regions else []
    table = _Table(all_group.time)
    table.fit(shown + regions)
    lines.append(table.header())
    for group in [all_group] + _sort(groups, sort):
        lines.append(table.line(group, group.symbol, group.name))
    if filtered is not None:
        lines.append("")
        for group in filtered:
            lines.append(table.line(group, group.symbol, group.name))
    if show_regions:
        lines.append("")
        for row in regions:
            lines.append(table.line(row, _region_symbol(row), _display_name(row, mangled)))
    return "\n".join(lines) + "\n"


