"""Helpers of the report tests (scorep.report): running the command, headless Chromium,
a PNG decoder for screenshots, and validators of our own for the formats no consumer
here can check (Chrome trace events, speedscope). The tests at the end prove that the
validators reject what they must."""

import json
import os
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from conftest import SRC, scorep_env

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--hide-scrollbars",
                  # no network: anything the page tried to fetch would fail loudly
                  "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>"]


def report(*args, cwd=None, timeout=120, columns=200, **extra_env):
    """python -m scorep.report <args>, its terminal `columns` wide (COLUMNS)"""
    env = scorep_env()
    env["PYTHONPATH"] = str(SRC)
    env["COLUMNS"] = str(columns)
    env.pop("NO_COLOR", None)
    env.update(extra_env)
    return subprocess.run([sys.executable, "-m", "scorep.report"] + [str(a) for a in args],
                          env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def chromium(url_or_path, tmp_path, *extra, timeout=90):
    """Runs headless Chromium on a file; returns (stdout, console lines)."""
    url = url_or_path if "://" in str(url_or_path) else Path(url_or_path).resolve().as_uri()
    profile = tmp_path / ("chromium-profile-%d" % os.getpid())
    out = subprocess.run([CHROMIUM] + CHROMIUM_FLAGS + ["--user-data-dir=%s" % profile,
                                                        "--enable-logging=stderr", "--v=0"]
                         + list(extra) + [url],
                         capture_output=True, text=True, timeout=timeout)
    console = [line for line in out.stderr.splitlines() if ":CONSOLE" in line]
    return out, console


needs_chromium = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="no chromium")


# ---- PNG ---------------------------------------------------------------------------

def read_png(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB/RGBA, non-interlaced PNG (what
    Chromium's --screenshot writes)."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        ftype = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return width, height, rows


def image_stats(path, step=4):
    """(distinct colors, share of pixels that differ from the most common color), sampled
    on a grid."""
    width, height, rows = read_png(path)
    counts = {}
    for y in range(0, height, step):
        row = rows[y]
        for x in range(0, width, step):
            counts[row[x]] = counts.get(row[x], 0) + 1
    total = sum(counts.values())
    background = max(counts.values())
    return len(counts), 1.0 - background / total


# ---- Chrome trace events ---------------------------------------------------------------

_US = re.compile(r'"(ts|dur)"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)')


def validate_chrome(path):
    """Checks the rules of docs FORMATS.md 3.1 on a Chrome trace event file and returns the
    parsed document. Complete events: integer pid/tid, ts/dur numbers in microseconds
    without exponent and with at most 3 decimals (ns), dur >= 0, per thread ordered by
    (ts asc, dur desc) and properly nested; every pid and (pid, tid) named by metadata;
    flow events s/f paired by id with each end inside a complete event of its thread."""
    text = Path(path).read_text(encoding="utf-8")
    for key, number in _US.findall(text):
        assert "e" not in number.lower(), "exponent in %s: %s" % (key, number)
        if "." in number:
            assert len(number.split(".")[1]) <= 3, "more than ns precision: %s" % number
    doc = json.loads(text)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    assert isinstance(events, list)
    if isinstance(doc, dict):
        assert doc.get("displayTimeUnit", "ms") in ("ms", "ns")
    names, threads = set(), set()
    slices, flows = {}, {}
    for e in events:
        ph = e["ph"]
        assert isinstance(e["pid"], int) and e["pid"] >= 0, e
        if ph == "M":
            if e["name"] == "process_name":
                names.add(("p", e["pid"]))
            elif e["name"] == "thread_name":
                threads.add((e["pid"], e["tid"]))
            assert "name" in e["args"] or "sort_index" in e["args"], e
            continue
        assert isinstance(e["tid"], int), e
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
        if ph == "X":
            assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
            assert isinstance(e["name"], str) and e["name"], e
            slices.setdefault((e["pid"], e["tid"]), []).append(e)
        elif ph in ("s", "f"):
            flows.setdefault(e["id"], []).append(e)
        else:
            raise AssertionError("unexpected phase %r" % ph)
    for (pid, tid), evs in slices.items():
        assert ("p", pid) in names, "pid %d has no process_name" % pid
        assert (pid, tid) in threads, "thread %d/%d has no thread_name" % (pid, tid)
        keys = [(e["ts"], -e["dur"]) for e in evs]
        assert keys == sorted(keys), "events of %d/%d out of (ts, -dur) order" % (pid, tid)
        stack = []
        for e in evs:
            end = e["ts"] + e["dur"]
            while stack and stack[-1] <= e["ts"]:
                stack.pop()
            # 1 ns of slack: ts and dur are rounded separately to 3 decimals
            assert not stack or end <= stack[-1] + 0.0011, \
                "%s [%s, %s] overlaps its parent ending %s" % (e["name"], e["ts"], end, stack[-1])
            stack.append(end)
    for fid, pair in flows.items():
        kinds = sorted(e["ph"] for e in pair)
        assert kinds == ["f", "s"], "flow %s has %s" % (fid, kinds)
        for e in pair:
            if e["ph"] == "f":
                assert e.get("bp") == "e", e
            evs = slices.get((e["pid"], e["tid"]), [])
            assert any(s["ts"] <= e["ts"] <= s["ts"] + s["dur"] for s in evs), \
                "flow %s end at %s is inside no slice of %d/%d" % (fid, e["ts"], e["pid"], e["tid"])
    return doc


def chrome_slices(doc):
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return [e for e in events if e["ph"] == "X"]


# ---- speedscope ------------------------------------------------------------------------

SPEEDSCOPE_UNITS = {"none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"}


def validate_speedscope(path):
    """speedscope's file format rules (FORMATS.md 3.3): schema and shared frames; sampled
    profiles with as many weights as samples, positive weights, valid frame indexes,
    endValue covering the weights; evented profiles with non-decreasing `at` and every C
    closing the frame on top of the stack."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    assert doc["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    frames = doc["shared"]["frames"]
    assert frames and all(isinstance(f["name"], str) and f["name"] for f in frames)
    for f in frames:
        if "line" in f:
            assert isinstance(f["line"], int) and f["line"] > 0
    assert doc["profiles"]
    assert 0 <= doc.get("activeProfileIndex", 0) < len(doc["profiles"])
    for p in doc["profiles"]:
        assert p["unit"] in SPEEDSCOPE_UNITS
        assert p["startValue"] <= p["endValue"]
        if p["type"] == "sampled":
            assert len(p["samples"]) == len(p["weights"]) > 0
            assert all(isinstance(w, (int, float)) and w > 0 for w in p["weights"])
            assert sum(p["weights"]) <= p["endValue"] - p["startValue"] + 1e-9
            for stack in p["samples"]:
                assert stack and all(isinstance(i, int) and 0 <= i < len(frames) for i in stack)
        elif p["type"] == "evented":
            last, stack = p["startValue"], []
            for e in p["events"]:
                assert e["at"] >= last, "at decreases"
                last = e["at"]
                if e["type"] == "O":
                    stack.append(e["frame"])
                else:
                    assert e["type"] == "C" and stack and stack[-1] == e["frame"], \
                        "close of a frame not on top"
                    stack.pop()
            assert not stack and last <= p["endValue"]
        else:
            raise AssertionError("unknown profile type %r" % p["type"])
    return doc


# ---- the validators catch what they must ------------------------------------------------

def _write(tmp_path, name, obj):
    path = tmp_path / name
    path.write_text(json.dumps(obj) if not isinstance(obj, str) else obj)
    return path


GOOD_CHROME = {"traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "p"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "t"}},
    {"ph": "X", "pid": 1, "tid": 1, "ts": 1.0, "dur": 10.0, "name": "a"},
    {"ph": "X", "pid": 1, "tid": 1, "ts": 2.0, "dur": 3.0, "name": "b"},
    {"ph": "s", "pid": 1, "tid": 1, "ts": 2.5, "id": 7, "cat": "mpi", "name": "m"},
    {"ph": "f", "pid": 1, "tid": 1, "ts": 8.0, "id": 7, "cat": "mpi", "name": "m", "bp": "e"},
]}


def test_chrome_validator_accepts_good_and_rejects_bad(tmp_path):
    validate_chrome(_write(tmp_path, "good.json", GOOD_CHROME))
    overlapping = json.loads(json.dumps(GOOD_CHROME))
    overlapping["traceEvents"][3]["dur"] = 20.0  # b ends after a
    unordered = json.loads(json.dumps(GOOD_CHROME))
    unordered["traceEvents"][2], unordered["traceEvents"][3] = \
        unordered["traceEvents"][3], unordered["traceEvents"][2]
    unnamed = json.loads(json.dumps(GOOD_CHROME))
    del unnamed["traceEvents"][1]
    dangling = json.loads(json.dumps(GOOD_CHROME))
    dangling["traceEvents"][5]["ts"] = 30.0  # outside every slice
    for name, doc in (("overlap", overlapping), ("order", unordered), ("unnamed", unnamed),
                      ("dangling", dangling)):
        with pytest.raises(AssertionError):
            validate_chrome(_write(tmp_path, name + ".json", doc))
    with pytest.raises(AssertionError):
        validate_chrome(_write(tmp_path, "exp.json", json.dumps(GOOD_CHROME).replace(
            '"ts": 1.0', '"ts": 1e0')))
    with pytest.raises(AssertionError):
        validate_chrome(_write(tmp_path, "precision.json", json.dumps(GOOD_CHROME).replace(
            '"ts": 1.0', '"ts": 1.0001')))


GOOD_SPEEDSCOPE = {
    "$schema": "https://www.speedscope.app/file-format-schema.json",
    "shared": {"frames": [{"name": "main"}, {"name": "f", "file": "x.py", "line": 3}]},
    "profiles": [{"type": "sampled", "name": "t", "unit": "nanoseconds", "startValue": 0,
                  "endValue": 30, "samples": [[0], [0, 1]], "weights": [10, 20]},
                 {"type": "evented", "name": "e", "unit": "nanoseconds", "startValue": 0,
                  "endValue": 9, "events": [{"type": "O", "frame": 0, "at": 0},
                                            {"type": "O", "frame": 1, "at": 2},
                                            {"type": "C", "frame": 1, "at": 5},
                                            {"type": "C", "frame": 0, "at": 9}]}]}


def test_speedscope_validator_accepts_good_and_rejects_bad(tmp_path):
    validate_speedscope(_write(tmp_path, "good.json", GOOD_SPEEDSCOPE))
    bads = []
    doc = json.loads(json.dumps(GOOD_SPEEDSCOPE))
    doc["profiles"][0]["weights"] = [10]
    bads.append(doc)
    doc = json.loads(json.dumps(GOOD_SPEEDSCOPE))
    doc["profiles"][0]["weights"] = [10, 0]
    bads.append(doc)
    doc = json.loads(json.dumps(GOOD_SPEEDSCOPE))
    doc["profiles"][0]["samples"] = [[0], [0, 2]]
    bads.append(doc)
    doc = json.loads(json.dumps(GOOD_SPEEDSCOPE))
    doc["profiles"][1]["events"][2]["frame"] = 0  # closes main while f is on top
    bads.append(doc)
    doc = json.loads(json.dumps(GOOD_SPEEDSCOPE))
    doc["profiles"][1]["events"][2]["at"] = 1  # at decreases
    bads.append(doc)
    doc = json.loads(json.dumps(GOOD_SPEEDSCOPE))
    doc["profiles"][0]["unit"] = "ticks"
    bads.append(doc)
    for i, doc in enumerate(bads):
        with pytest.raises(AssertionError):
            validate_speedscope(_write(tmp_path, "bad%d.json" % i, doc))


def test_png_reader_on_a_known_image(tmp_path):
    # 2x2 RGB, filter 0 on row 1 and 2 (up) on row 2: red green / red+blue green+blue
    raw = b"\x00" + bytes([255, 0, 0, 0, 255, 0]) + b"\x02" + bytes([0, 0, 255, 0, 0, 255])
    ihdr = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + \
            struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff)
    path = tmp_path / "t.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) +
                     chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    w, h, rows = read_png(path)
    assert (w, h) == (2, 2)
    assert rows == [[(255, 0, 0), (0, 255, 0)], [(255, 0, 255), (0, 255, 255)]]


def test_format_seconds_never_shows_a_thousand_of_a_unit():
    from scorep.report.model import format_seconds
    assert [format_seconds(s) for s in (9.997e-7, 9.997e-4, 0.9997, 1e-6, 999e-9, 0.5, 12.34)] \
        == ["1 us", "1 ms", "1 s", "1 us", "999 ns", "500 ms", "12.3 s"]
