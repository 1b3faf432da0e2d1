"""Resource monitoring of measured cells: CPU utilisation per core, the kernel process's CPU
time, resident memory and I/O, sampled by a thread at a fixed interval while a cell runs.

What is sampled (Linux /proc; what a system lacks is left out, never guessed):

- each core's utilisation (of the cores this process may run on), from /proc/stat: the
  share of the interval the core was not idle, whoever ran on it (as top shows it);
- the CPU time of the kernel process (all its threads) and of its child processes (a
  cell's Pool workers, its subprocesses: /proc/PID/task/TID/children, their /proc/PID/stat,
  and the times of reaped children) over the interval, in percent of one core (200 = two
  cores busy);
- the resident set size of the kernel and its child processes at the end of the
  interval, summed (pages a forked child shares count in each), from /proc/PID/statm/stat;
- its I/O over the interval, from /proc/self/io: bytes read from and written to storage
  (read_bytes, write_bytes) and through any read/write call (rchar, wchar).

The thread is started before the measurement and is not one of the cell's threads: the
measurement records none of its calls (threads started before a measurement are measured
only when they register). Samples are written into the experiment as monitoring.csv (see
MONITORING_COLUMNS); their times are CLOCK_MONOTONIC nanoseconds, the clock of the
measurement's timestamps (SCOREP_TIMER=clock_gettime, and the reference the tsc timer is
anchored to), so they can be placed on the trace's time line.
"""

import csv
import os
import threading
import time

from scorep.report.model import format_bytes

__all__ = ["ResourceMonitor", "Samples", "read_csv", "svg", "sparkline", "MONITORING_FILE",
           "DEFAULT_INTERVAL"]

MONITORING_FILE = "monitoring.csv"
DEFAULT_INTERVAL = 0.1  # seconds
MIN_INTERVAL = 0.01

# The columns of monitoring.csv, one row per interval; cpu<N>_percent follow, one per core.
MONITORING_COLUMNS = (
    ("start_ns", "CLOCK_MONOTONIC time the interval began, in ns"),
    ("end_ns", "CLOCK_MONOTONIC time the interval ended, in ns"),
    ("process_cpu_percent", "CPU time of the kernel process (all threads) and its child "
                            "processes in the interval, in % of one core"),
    ("rss_bytes", "resident set size of the kernel process and its child processes at the "
                  "end of the interval"),
    ("read_bytes", "bytes the process read from storage in the interval (/proc/self/io)"),
    ("write_bytes", "bytes the process caused to be written to storage in the interval"),
    ("read_chars", "bytes the process read through read-like calls (files, pipes, sockets)"),
    ("write_chars", "bytes the process wrote through write-like calls"),
)


def _cpu_times(cores):
    """{core: (busy jiffies, total jiffies)} of the given cores, from /proc/stat."""
    out = {}
    try:
        with open("/proc/stat", "rb") as f:
            text = f.read()
    except OSError:
        return {}, 0
    try:
        for line in text.splitlines():
            if not line.startswith(b"cpu") or line[3:4] == b" ":
                continue
            fields = line.split()
            core = int(fields[0][3:])
            if core not in cores:
                continue
            values = [int(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal
            idle = values[3] + (values[4] if len(values) > 4 else 0)
            total = sum(values)
            out[core] = (total - idle, total)
    except (ValueError, IndexError):
        return {}, len(text)
    return out, len(text)


def _rss():
    try:
        with open("/proc/self/statm", "rb") as f:
            text = f.read()
    except OSError:
        return None, 0
    try:
        return int(text.split()[1]) * _PAGE_SIZE, len(text)
    except (ValueError, IndexError):
        return None, len(text)


_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_IO_FIELDS = {b"rchar": "read_chars", b"wchar": "write_chars", b"read_bytes": "read_bytes",
              b"write_bytes": "write_bytes"}


def _io():
    out = {}
    try:
        with open("/proc/self/io", "rb") as f:
            text = f.read()
    except OSError:  # not readable in some containers: no I/O columns then
        return {}, 0
    try:
        for line in text.splitlines():
            key, _sep, value = line.partition(b":")
            name = _IO_FIELDS.get(key.strip())
            if name:
                out[name] = int(value)
    except ValueError:
        return {}, len(text)
    return out, len(text)


_TICK_NS = 1e9 / (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)


def _children_of(pid, tasks=None):
    """The child processes of the threads `tasks` of `pid` (all of them by default):
    /proc/PID/task/TID/children."""
    out = []
    if tasks is None:
        try:
            tasks = os.listdir("/proc/%d/task" % pid)
        except OSError:
            return out
    for tid in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, tid), "rb") as f:
                out.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return out


class _Descendants:
    """The kernel's live descendant processes (a cell's Pool workers, subprocesses):
    read() gives (CPU ns, resident bytes, bytes read from /proc) of them all: their user
    and system time with that of the children they reaped, and their resident set sizes
    summed. A descendant that ends and is reaped moves its time into its parent's
    reaped-children time, which is counted too (here or in the kernel's own), so a sum
    over the intervals loses none.

    Every file read hands Python's GIL over and waits for it back, up to a switch interval
    when the cell's code is busy in Python: reading the children of each of the kernel's
    dozen threads at every sample would stretch the samples. So the kernel's main thread
    (which starts most children) is asked every time, all its threads every FULL_SCAN-th
    time, and the children found are kept while they live."""
    FULL_SCAN = 10

    def __init__(self):
        self.known = set()
        self.count = 0

    def read(self):
        pid = os.getpid()
        if self.count % self.FULL_SCAN == 0:
            direct = set(_children_of(pid))
        else:
            direct = set(_children_of(pid, [str(pid)])) | self.known
        self.count += 1
        self.known = set()
        cpu = rss = read = 0
        todo, seen = list(direct), set()
        while todo:
            child = todo.pop()
            if child in seen:
                continue
            seen.add(child)
            try:
                with open("/proc/%d/stat" % child, "rb") as f:
                    text = f.read()
            except OSError:
                continue  # gone since it was listed
            if child in direct:
                self.known.add(child)
            read += len(text)
            # The command name, field 2, may hold spaces and parentheses: the fields after
            # its ")". utime stime cutime cstime are fields 14-17, rss (pages) field 24.
            fields = text[text.rfind(b")") + 2:].split()
            try:
                cpu += int(sum(int(v) for v in fields[11:15]) * _TICK_NS)
                rss += int(fields[21]) * _PAGE_SIZE
            except (ValueError, IndexError):
                continue
            todo.extend(_children_of(child))
        return cpu, rss, read


def _reaped_children_ns():
    t = os.times()
    return int((t.children_user + t.children_system) * 1e9)


def _cores():
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


class _Reading:
    """One reading of the counters. /proc/self/io goes first: the bytes this reading then
    reads (the io file included, whose rchar is reported before its own read) are the
    monitor's, and the next interval leaves them out of read_chars."""
    __slots__ = ("ns", "cpu", "cores", "rss", "io", "own_chars")

    def __init__(self, cores, descendants):
        self.ns = time.monotonic_ns()
        # Read with the clock, before any file (each read may wait for the GIL).
        self.cpu = time.process_time_ns() + _reaped_children_ns()
        self.io, io_len = _io()
        child_cpu, child_rss, child_len = descendants.read()
        self.cpu += child_cpu
        self.cores, stat_len = _cpu_times(cores)
        self.rss, statm_len = _rss()
        if self.rss is not None:
            self.rss += child_rss
        self.own_chars = io_len + stat_len + statm_len + child_len


class Samples:
    """The samples of one cell: `rows`, one dict per interval with the MONITORING_COLUMNS
    (None where the system does not say) and `cores` {core: percent}."""

    def __init__(self, interval, cores, rows):
        self.interval = interval
        self.cores = list(cores)
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    @property
    def seconds(self):
        return (self.rows[-1]["end_ns"] - self.rows[0]["start_ns"]) / 1e9 if self.rows else 0.0

    def column(self, name):
        return [r[name] for r in self.rows]

    def core_percent(self, core):
        return [r["cores"].get(core) for r in self.rows]

    def mean_process_cpu(self):
        """Process CPU in % of one core over all the samples (weighted by their length)."""
        total = sum((r["end_ns"] - r["start_ns"]) for r in self.rows)
        if not total:
            return None
        return sum(r["process_cpu_percent"] * (r["end_ns"] - r["start_ns"])
                   for r in self.rows) / total

    def peak_rss(self):
        values = [r["rss_bytes"] for r in self.rows if r["rss_bytes"] is not None]
        return max(values) if values else None

    def total(self, name):
        values = [r[name] for r in self.rows if r[name] is not None]
        return sum(values) if values else None

    def as_dicts(self):
        """The rows flat, as monitoring.csv has them."""
        out = []
        for r in self.rows:
            flat = {name: r[name] for name, _doc in MONITORING_COLUMNS}
            for core in self.cores:
                flat["cpu%d_percent" % core] = r["cores"].get(core)
            out.append(flat)
        return out

    def metric_samples(self):
        """(columns, rows) for the trace (scorep._native's metric_samples): each row at the
        end of its interval, as OTF2 metrics: the process's CPU % and each core's over the
        interval (absolute, last), RSS at the end (absolute, point), the I/O bytes of the
        interval (relative, last). Columns without any value are left out."""
        spec = [("process_cpu_percent", "%", "CPU time of the kernel process (all threads) "
                 "and its child processes in the interval, in % of one core", True,
                 "absolute_last"),
                ("rss_bytes", "bytes", "resident set size of the kernel process and its "
                 "child processes", False, "absolute_point"),
                ("read_bytes", "bytes", "bytes read from storage in the interval", False,
                 "relative_last"),
                ("write_bytes", "bytes", "bytes written to storage in the interval", False,
                 "relative_last"),
                ("read_chars", "bytes", "bytes read through read-like calls in the interval",
                 False, "relative_last"),
                ("write_chars", "bytes", "bytes written through write-like calls in the "
                 "interval", False, "relative_last")]
        flat = self.as_dicts()
        spec += [("cpu%d_percent" % core, "%", "utilisation of core %d in the interval"
                  % core, True, "absolute_last") for core in self.cores]
        columns = [c for c in spec if any(row.get(c[0]) is not None for row in flat)]
        rows = [(row["end_ns"], [None if row.get(c[0]) is None else
                                 (float(row[c[0]]) if c[3] else int(row[c[0]]))
                                 for c in columns]) for row in flat]
        return columns, rows

    def write_csv(self, path):
        names = [name for name, _doc in MONITORING_COLUMNS] + \
            ["cpu%d_percent" % core for core in self.cores]
        with open(path, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(names)
            for flat in self.as_dicts():
                writer.writerow(["" if flat[n] is None else
                                 ("%.1f" % flat[n] if isinstance(flat[n], float) else flat[n])
                                 for n in names])


def read_csv(path):
    """Samples from a monitoring.csv (as Samples.write_csv wrote it); None when there is
    none or it cannot be read."""
    try:
        with open(path, newline="") as f:
            reader = csv.reader(f)
            names = next(reader)
            lines = list(reader)
    except (OSError, StopIteration, csv.Error):
        return None
    cores = [int(n[3:-len("_percent")]) for n in names
             if n.startswith("cpu") and n.endswith("_percent")]
    rows = []
    try:
        for line in lines:
            values = dict(zip(names, line))
            row = {}
            for name, _doc in MONITORING_COLUMNS:
                text = values.get(name, "")
                row[name] = None if text == "" else (
                    float(text) if name.endswith("percent") else int(text))
            row["cores"] = {core: float(values["cpu%d_percent" % core])
                            for core in cores if values.get("cpu%d_percent" % core, "") != ""}
            rows.append(row)
    except (ValueError, KeyError):
        return None
    interval = (rows[0]["end_ns"] - rows[0]["start_ns"]) / 1e9 if rows else DEFAULT_INTERVAL
    return Samples(interval, cores, rows)


def _row(before, after):
    span = after.ns - before.ns
    row = {
        "start_ns": before.ns, "end_ns": after.ns,
        "process_cpu_percent": 100.0 * (after.cpu - before.cpu) / span if span > 0 else 0.0,
        "rss_bytes": after.rss,
    }
    for name in ("read_bytes", "write_bytes", "read_chars", "write_chars"):
        a, b = before.io.get(name), after.io.get(name)
        row[name] = b - a if a is not None and b is not None else None
    if row["read_chars"] is not None:  # the monitor's own reads of /proc
        row["read_chars"] = max(0, row["read_chars"] - before.own_chars)
    cores = {}
    for core, (busy, total) in after.cores.items():
        if core in before.cores:
            d_total = total - before.cores[core][1]
            d_busy = busy - before.cores[core][0]
            if d_total > 0:
                cores[core] = max(0.0, min(100.0, 100.0 * d_busy / d_total))
    row["cores"] = cores
    return row


class ResourceMonitor:
    """start() before the measurement, stop() after the cell: the Samples."""

    def __init__(self, interval=DEFAULT_INTERVAL):
        self.interval = max(float(interval), MIN_INTERVAL)
        self.cores = _cores()
        self._stop = threading.Event()
        self._thread = None
        self._rows = []
        self._last = None
        self._descendants = _Descendants()

    def start(self):
        self._last = _Reading(self.cores, self._descendants)
        self._thread = threading.Thread(target=self._run, name="scorep-monitor", daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        now = _Reading(self.cores, self._descendants)
        self._rows.append(_row(self._last, now))
        self._last = now

    def _run(self):
        deadline = self._last.ns
        step = int(self.interval * 1e9)
        while True:
            deadline += step
            now = time.monotonic_ns()
            if deadline < now:  # fell behind (a busy machine): the grid starts again now
                deadline = now
            if self._stop.wait((deadline - now) / 1e9):
                return
            self._sample()

    def stop(self):
        """Stops sampling; the last interval ends now (a cell shorter than the interval has
        one sample)."""
        if self._thread is None:
            return Samples(self.interval, self.cores, [])
        self._stop.set()
        self._thread.join()
        self._thread = None
        self._sample()
        return Samples(self.interval, self.cores, self._rows)


# ---- the inline plot --------------------------------------------------------------------

def _polyline(segments, color, width=1.5, opacity=1.0):
    return "".join('<polyline fill="none" stroke="%s" stroke-width="%s" stroke-opacity="%s" '
                   'points="%s"/>' % (color, width, opacity,
                                      " ".join("%.1f,%.1f" % p for p in points))
                   for points in segments if points)


def _steps(xs, ys, x0, y0, w, h, top):
    """Segments of a step line: each interval's value held over its interval; an interval
    without a value (None) breaks the line."""
    segments, pts = [], []
    for (a, b), v in zip(xs, ys):
        if v is None:
            segments.append(pts)
            pts = []
            continue
        y = y0 + h - h * min(v, top) / top if top > 0 else y0 + h
        pts.append((x0 + a * w, y))
        pts.append((x0 + b * w, y))
    segments.append(pts)
    return segments


def _time_axis(rows):
    """(start ns, span ns, per row its (start, end) as fractions of the span)."""
    t0, t1 = rows[0]["start_ns"], rows[-1]["end_ns"]
    span = max(t1 - t0, 1)
    return t0, span, [((r["start_ns"] - t0) / span, (r["end_ns"] - t0) / span) for r in rows]


def svg(samples, width=640):
    """A small plot of the samples: CPU (the process, each core), resident memory and I/O
    over the cell's time, as one inline SVG (no script needed)."""
    rows = samples.rows
    if not rows:
        return ""
    t0, span, xs = _time_axis(rows)
    left, right, panel, gap = 150, 8, 38, 10
    w = width - left - right
    parts = []
    y = 4

    def frame(label, detail, top_text, detail2=None):
        parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#fff" '
                     'stroke="#ddd"/>' % (left, y, w, panel))
        parts.append('<text x="4" y="%d" font-weight="600">%s</text>' % (y + 12, label))
        parts.append('<text x="4" y="%d" fill="#555">%s</text>' % (y + 25, detail))
        if detail2:  # a second line: one would run into the plot on the right
            parts.append('<text x="4" y="%d" fill="#555">%s</text>' % (y + 37, detail2))
        parts.append('<text x="%d" y="%d" fill="#888" text-anchor="end">%s</text>'
                     % (left - 4, y + 10, top_text))

    cpu = samples.column("process_cpu_percent")
    top = max([100.0] + [v for v in cpu if v is not None])
    mean = samples.mean_process_cpu()
    frame("CPU", "process %.0f%% of a core" % (mean or 0), "%.0f%%" % top)
    for core in samples.cores:
        parts.append(_polyline(_steps(xs, samples.core_percent(core), left, y, w, panel, top),
                               "#9aa5b1", 1, 0.8))
    parts.append(_polyline(_steps(xs, cpu, left, y, w, panel, top), "#1f6fd1", 2))
    y += panel + gap
    rss = samples.column("rss_bytes")
    if any(v is not None for v in rss):
        peak = samples.peak_rss()
        frame("Memory", "RSS peak %s" % format_bytes(peak), format_bytes(peak))
        parts.append(_polyline(_steps(xs, rss, left, y, w, panel, peak or 1), "#2e9e5b", 2))
        y += panel + gap
    reads, writes = samples.column("read_chars"), samples.column("write_chars")
    if any(v is not None for v in reads + writes):
        secs = [(r["end_ns"] - r["start_ns"]) / 1e9 or 1e-9 for r in rows]
        rr = [v / s if v is not None else None for v, s in zip(reads, secs)]
        wr = [v / s if v is not None else None for v, s in zip(writes, secs)]
        top = max([1.0] + [v for v in rr + wr if v is not None])
        frame("I/O", "read %s" % format_bytes(samples.total("read_chars") or 0),
              format_bytes(top) + "/s",
              "written %s" % format_bytes(samples.total("write_chars") or 0))
        parts.append(_polyline(_steps(xs, rr, left, y, w, panel, top), "#e07b00", 1.5))
        parts.append(_polyline(_steps(xs, wr, left, y, w, panel, top), "#8a4fd1", 1.5))
        y += panel + gap
    parts.append('<text x="%d" y="%d" fill="#888">0 s</text>' % (left, y + 2))
    parts.append('<text x="%d" y="%d" fill="#888" text-anchor="end">%.2f s</text>'
                 % (left + w, y + 2, span / 1e9))
    parts.append('<text x="4" y="%d" fill="#888">%d sample%s, one every %g s. CPU: the '
                 'kernel and its children in blue (100%% = one core), each core in grey.</text>'
                 % (y + 18, len(rows), "" if len(rows) == 1 else "s", samples.interval))
    parts.append('<text x="4" y="%d" fill="#888">I/O: bytes read in orange, written in '
                 'purple, per second (the storage\'s and the pipes\' and sockets\').</text>'
                 % (y + 32))
    height = y + 38
    return ('<svg class="scorep-monitoring" xmlns="http://www.w3.org/2000/svg" width="%d" '
            'height="%d" viewBox="0 0 %d %d" font-family="system-ui, sans-serif" '
            'font-size="11">%s</svg>' % (width, height, width, height, "\n".join(parts)))


def sparkline(samples, width=60, height=14):
    """The process's CPU over the cell as a line the height of text."""
    rows = samples.rows
    if not rows:
        return ""
    t0, span, xs = _time_axis(rows)
    cpu = samples.column("process_cpu_percent")
    top = max([100.0] + [v for v in cpu if v is not None])
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
            'style="vertical-align:middle"><rect width="%d" height="%d" fill="#eef2f7"/>%s'
            '</svg>' % (width, height, width, height,
                        _polyline(_steps(xs, cpu, 0, 1, width, height - 2, top), "#1f6fd1", 1.2)))
