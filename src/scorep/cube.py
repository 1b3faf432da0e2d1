"""Reader for CUBE4 profiles (``profile.cubex``), standard library only.

A ``.cubex`` file is a tar archive with ``anchor.xml`` (metrics, regions, call tree, system
tree) and, per metric with data, ``<id>.index`` + ``<id>.data``. The details that make or
break a reader (see docs/FORMATS.md, section 2):

- A row number in ``.index`` is not a cnode id but a position in an enumeration of the call
  tree that depends on the metric type: depth-first preorder for EXCLUSIVE metrics, CubeW's
  "wide search" for INCLUSIVE ones and plain id order for SIMPLE ones. Children are taken in
  document order, which need not be id order (Score-P appends late cnodes, e.g. id 44 as a
  child written between ids 36 and 37).
- INCLUSIVE metrics store inclusive values, EXCLUSIVE ones exclusive values; the other flavour
  is derived from the tree.
- Data files have no byte-order marker of their own: they follow the index's ``endian`` field
  (Blue Gene profiles are big-endian).
- Metrics that are zero everywhere may have no files at all.

Usage::

    profile = scorep.cube.read("scorep-20240101_1200_123/")
    time = profile.metric("time")
    for cnode in profile.cnodes:
        print("/".join(cnode.path()), sum(profile.values(time)[cnode.id]))
"""

import gzip
import os
import struct
import tarfile
import xml.etree.ElementTree as ET
import zlib

from scorep._errors import CubeError

__all__ = [
    "CubeError", "Metric", "Region", "Cnode", "SystemNode", "LocationGroup", "Location",
    "Profile", "read", "deep_order", "wide_order",
]


# dtype -> (struct code, size in bytes). Types with several fields per value (TAU_ATOMIC,
# COMPLEX, RATE, NDOUBLES(n), HISTOGRAM(n), SCALE_FUNC) are not supported: Score-P writes them
# only with non-default settings and no one here consumes them.
_DTYPES = {
    "DOUBLE": ("d", 8), "FLOAT": ("d", 8), "MINDOUBLE": ("d", 8), "MAXDOUBLE": ("d", 8),
    "UINT64": ("Q", 8), "INT64": ("q", 8), "INTEGER": ("q", 8),
    "UINT32": ("I", 4), "UNSIGNED INT": ("I", 4), "INT32": ("i", 4), "INT": ("i", 4),
    "UINT16": ("H", 2), "SHORT UNSIGNED INT": ("H", 2), "INT16": ("h", 2), "SHORT INT": ("h", 2),
    "UINT8": ("B", 1), "CHAR": ("B", 1), "INT8": ("b", 1),
}
_STORED_TYPES = ("EXCLUSIVE", "INCLUSIVE", "SIMPLE")
_DERIVED_TYPES = ("POSTDERIVED", "PREDERIVED_INCLUSIVE", "PREDERIVED_EXCLUSIVE")

_INDEX_MARKER = b"CUBEX.INDEX"
_DATA_MARKER = b"CUBEX.DATA"
_ZDATA_MARKER = b"ZCUBEX.DATA"
_INDEX_SPARSE = 1
_INDEX_DENSE = 3


class Metric:
    """One metric. ``type`` is the CUBE metric type (EXCLUSIVE, INCLUSIVE, SIMPLE, or a derived
    type), ``dtype`` the value type as written (UINT64, DOUBLE, MINDOUBLE, ...)."""

    __slots__ = ("id", "uniq_name", "disp_name", "dtype", "type", "uom", "descr", "url",
                 "parent", "children")

    def __init__(self, id, uniq_name, disp_name, dtype, type, uom, descr, url="",
                 parent=None):
        self.id = id
        self.uniq_name = uniq_name
        self.disp_name = disp_name
        self.dtype = dtype
        self.type = type
        self.uom = uom
        self.descr = descr
        self.url = url
        self.parent = parent
        self.children = []

    def __repr__(self):
        return "Metric(id=%d, uniq_name=%r, type=%s, dtype=%s)" % (
            self.id, self.uniq_name, self.type, self.dtype)


class Region:
    """A code region. ``file`` is the ``mod`` attribute; lines are -1 when unknown. ``attrs``
    holds its ``<attr>`` elements (Score-P puts the number of program arguments on the
    program's root region)."""

    __slots__ = ("id", "name", "mangled_name", "file", "begin_line", "end_line", "paradigm",
                 "role", "url", "descr", "attrs")

    def __init__(self, id, name, mangled_name, file, begin_line, end_line, paradigm, role,
                 url="", descr="", attrs=None):
        self.id = id
        self.name = name
        self.mangled_name = mangled_name
        self.file = file
        self.begin_line = begin_line
        self.end_line = end_line
        self.paradigm = paradigm
        self.role = role
        self.url = url
        self.descr = descr
        self.attrs = attrs or {}

    def __repr__(self):
        return "Region(id=%d, name=%r)" % (self.id, self.name)


class Cnode:
    """A call-path node. ``children`` are in document order, which defines the row
    enumerations. ``parameters`` holds ``(kind, key, value)`` with kind "numeric" (value an
    int when it is integral, else a float) or "string"."""

    __slots__ = ("id", "region", "parent", "children", "parameters", "line", "mod")

    def __init__(self, id, region, parent=None, parameters=(), line=-1, mod=""):
        self.id = id
        self.region = region
        self.parent = parent
        self.children = []
        self.parameters = list(parameters)
        self.line = line
        self.mod = mod

    def path(self):
        """Region names from the root down to this cnode."""
        names = []
        node = self
        while node is not None:
            names.append(node.region.name)
            node = node.parent
        names.reverse()
        return names

    def __repr__(self):
        # Never print parent/children: repr of a tree node must not walk the tree.
        return "Cnode(id=%d, region=%r)" % (self.id, self.region.name)


class SystemNode:
    """A system-tree node (machine, node, rack, ...) with its direct location groups."""

    __slots__ = ("id", "name", "class_", "parent", "children", "location_groups")

    def __init__(self, id, name, class_, parent=None):
        self.id = id
        self.name = name
        self.class_ = class_
        self.parent = parent
        self.children = []
        self.location_groups = []

    def __repr__(self):
        return "SystemNode(id=%d, name=%r, class=%r)" % (self.id, self.name, self.class_)


class LocationGroup:
    """A process (type "process") or accelerator context; ``node`` is its SystemNode;
    ``attrs`` its ``<attr>`` elements (an accelerator's "Creating location group")."""

    __slots__ = ("id", "name", "rank", "type", "node", "locations", "attrs")

    def __init__(self, id, name, rank, type, node, attrs=None):
        self.id = id
        self.name = name
        self.rank = rank
        self.type = type
        self.node = node
        self.locations = []
        self.attrs = attrs or {}

    def __repr__(self):
        return "LocationGroup(id=%d, name=%r, rank=%d)" % (self.id, self.name, self.rank)


class Location:
    """A thread (or GPU stream, ...). Its id is its column in every data row."""

    __slots__ = ("id", "name", "rank", "type", "group")

    def __init__(self, id, name, rank, type, group):
        self.id = id
        self.name = name
        self.rank = rank
        self.type = type
        self.group = group

    def __repr__(self):
        return "Location(id=%d, name=%r, rank=%d, group=%d)" % (
            self.id, self.name, self.rank, self.group.id)


def deep_order(roots):
    """Cnodes in depth-first preorder (node, then each child's subtree): the row order of
    EXCLUSIVE metrics."""
    order = []
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(reversed(node.children))
    return order


def wide_order(roots):
    """Cnodes in CubeW's "wide search" order, the row order of INCLUSIVE metrics: per root,
    the root, then all children of a node before recursing into each child in turn. It is
    not breadth-first: main{a{x{y}}, b{z}} gives main a b x y z, BFS main a b x z y. (The
    Score-P samples cannot tell the two apart; this follows CubeW's
    cube_metric_traverse_cnodes_wide_search__.)"""
    order = []
    for root in roots:
        order.append(root)
        # Explicit stack of nodes whose children still need to be listed and descended into.
        stack = [root]
        while stack:
            node = stack.pop()
            order.extend(node.children)
            stack.extend(reversed(node.children))
    return order


def _attrs(elem):
    """The ``<attr key= value=>`` children of an element, as a dict."""
    return {a.get("key", ""): a.get("value", "") for a in elem.findall("attr")}


def _int_attr(elem, name, default, where):
    value = elem.get(name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise CubeError("%s: %s=%r on <%s> is not an integer" % (where, name, value, elem.tag))


def _text(elem, tag, default=""):
    child = elem.find(tag)
    if child is None or child.text is None:
        return default
    return child.text


def _numeric(text):
    try:
        return int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            return text
        return int(value) if value.is_integer() and abs(value) < 2 ** 63 else value


class Profile:
    """A CUBE4 profile read into memory. Build it with :func:`read`."""

    def __init__(self, path, anchor, members):
        self.path = path
        self._members = members
        self.version = anchor.get("version", "")
        self.attrs = {}
        for attr in anchor.findall("attr"):
            self.attrs[attr.get("key", "")] = attr.get("value", "")
        self.metrics = []
        self._metric_by_name = {}
        self.regions = []
        self.cnodes = []
        self.roots = []
        self.system_nodes = []
        self.location_groups = []
        self.locations = []
        self._parse_metrics(anchor)
        self._parse_program(anchor)
        self._parse_system(anchor)
        self._deep = deep_order(self.roots)
        self._wide = wide_order(self.roots)
        # Per metric id: list (per cnode id) of rows, or None where the file has no row.
        self._stored = {}
        self._cache = {}
        for metric in self.metrics:
            if metric.type in _STORED_TYPES:
                self._stored[metric.id] = self._load(metric)

    # ---- anchor.xml ---------------------------------------------------------------------

    def _err(self, message):
        return CubeError("%s: %s" % (self.path, message))

    def _parse_metrics(self, anchor):
        metrics_elem = anchor.find("metrics")
        if metrics_elem is None:
            raise self._err("anchor.xml has no <metrics>")
        by_id = {}

        def visit(elem, parent):
            mid = _int_attr(elem, "id", None, self.path)
            if mid is None or mid in by_id:
                raise self._err("metric without a unique id")
            metric = Metric(mid, _text(elem, "uniq_name"), _text(elem, "disp_name"),
                            _text(elem, "dtype").strip().upper(),
                            elem.get("type", "EXCLUSIVE").upper(), _text(elem, "uom"),
                            _text(elem, "descr"), _text(elem, "url"), parent)
            by_id[mid] = metric
            self.metrics.append(metric)
            if parent is not None:
                parent.children.append(metric)
            for child in elem.findall("metric"):
                visit(child, metric)

        for elem in metrics_elem.findall("metric"):
            visit(elem, None)
        for metric in self.metrics:
            self._metric_by_name.setdefault(metric.uniq_name, metric)

    def _parse_program(self, anchor):
        program = anchor.find("program")
        if program is None:
            raise self._err("anchor.xml has no <program>")
        regions = {}
        for elem in program.findall("region"):
            rid = _int_attr(elem, "id", None, self.path)
            if rid is None or rid in regions:
                raise self._err("region without a unique id")
            name = _text(elem, "name")
            regions[rid] = Region(rid, name, _text(elem, "mangled_name", name),
                                  elem.get("mod", ""),
                                  _int_attr(elem, "begin", -1, self.path),
                                  _int_attr(elem, "end", -1, self.path),
                                  _text(elem, "paradigm"), _text(elem, "role"),
                                  _text(elem, "url"), _text(elem, "descr"), _attrs(elem))
        self.regions = self._dense(regions, "region")

        cnodes = {}
        # Iterative walk: call trees of deep recursion would overflow Python's stack.
        stack = [(elem, None) for elem in reversed(program.findall("cnode"))]
        while stack:
            elem, parent = stack.pop()
            cid = _int_attr(elem, "id", None, self.path)
            if cid is None or cid in cnodes:
                raise self._err("cnode without a unique id")
            callee = _int_attr(elem, "calleeId", None, self.path)
            if callee not in regions:
                raise self._err("cnode %d calls unknown region %r" % (cid, callee))
            params = []
            for p in elem.findall("parameter"):
                kind = p.get("partype", "")
                value = p.get("parvalue", "")
                params.append((kind, p.get("parkey", ""),
                               _numeric(value) if kind == "numeric" else value))
            cnode = Cnode(cid, regions[callee], parent, params,
                          _int_attr(elem, "line", -1, self.path), elem.get("mod", ""))
            cnodes[cid] = cnode
            if parent is None:
                self.roots.append(cnode)
            else:
                parent.children.append(cnode)
            for child in reversed(elem.findall("cnode")):
                stack.append((child, cnode))
        self.cnodes = self._dense(cnodes, "cnode")

    def _parse_system(self, anchor):
        system = anchor.find("system")
        if system is None:
            raise self._err("anchor.xml has no <system>")
        groups, locations = {}, {}
        stack = [(elem, None) for elem in reversed(system.findall("systemtreenode"))]
        while stack:
            elem, parent = stack.pop()
            node = SystemNode(_int_attr(elem, "Id", -1, self.path), _text(elem, "name"),
                              _text(elem, "class"), parent)
            self.system_nodes.append(node)
            if parent is not None:
                parent.children.append(node)
            for gelem in elem.findall("locationgroup"):
                gid = _int_attr(gelem, "Id", None, self.path)
                if gid is None or gid in groups:
                    raise self._err("location group without a unique Id")
                group = LocationGroup(gid, _text(gelem, "name"),
                                      int(_text(gelem, "rank", "0") or 0),
                                      _text(gelem, "type"), node, _attrs(gelem))
                groups[gid] = group
                node.location_groups.append(group)
                for lelem in gelem.findall("location"):
                    lid = _int_attr(lelem, "Id", None, self.path)
                    if lid is None or lid in locations:
                        raise self._err("location without a unique Id")
                    loc = Location(lid, _text(lelem, "name"),
                                   int(_text(lelem, "rank", "0") or 0),
                                   _text(lelem, "type"), group)
                    locations[lid] = loc
                    group.locations.append(loc)
            for child in reversed(elem.findall("systemtreenode")):
                stack.append((child, node))
        self.location_groups = self._dense(groups, "location group")
        self.locations = self._dense(locations, "location")

    def _dense(self, by_id, what):
        """The objects as a list indexed by id; ids must be 0..n-1 (the data rows and every
        reference rely on it)."""
        if sorted(by_id) != list(range(len(by_id))):
            raise self._err("%s ids are not 0..%d" % (what, len(by_id) - 1))
        return [by_id[i] for i in range(len(by_id))]

    # ---- binary data --------------------------------------------------------------------

    def _load(self, metric):
        """Stored rows of a metric, indexed by cnode id (None where no row is stored)."""
        nloc = len(self.locations)
        index = self._members.get("%d.index" % metric.id)
        data = self._members.get("%d.data" % metric.id)
        if index is None and data is None:
            return [None] * len(self.cnodes)  # all-zero metric: Score-P omits its files
        if index is None or data is None:
            raise self._err("metric %s has only one of %d.index / %d.data"
                            % (metric.uniq_name, metric.id, metric.id))
        dtype = _DTYPES.get(metric.dtype)
        if dtype is None:
            raise self._err("metric %s: unsupported dtype %s" % (metric.uniq_name, metric.dtype))
        code, size = dtype
        where = "%d.index" % metric.id

        if not index.startswith(_INDEX_MARKER) or len(index) < 18:
            raise self._err("%s does not start with CUBEX.INDEX" % where)
        # The writer stores 1 in its own byte order; that order applies to every number in
        # both the index and the data file.
        endian_raw = index[11:15]
        if struct.unpack("<I", endian_raw)[0] == 1:
            bo = "<"
        elif struct.unpack(">I", endian_raw)[0] == 1:
            bo = ">"
        else:
            raise self._err("%s: bad endianness marker %r" % (where, endian_raw))
        fmt = index[17]
        if fmt == _INDEX_SPARSE:
            if len(index) < 22:
                raise self._err("%s: truncated sparse index" % where)
            (count,) = struct.unpack_from(bo + "I", index, 18)
            if len(index) != 22 + 4 * count:
                raise self._err("%s: sparse index of %d rows has %d bytes"
                                % (where, count, len(index)))
            positions = struct.unpack_from("%s%dI" % (bo, count), index, 22)
        elif fmt == _INDEX_DENSE:
            positions = range(len(self.cnodes))
        else:
            raise self._err("%s: unsupported index format %d (only SPARSE=1 and DENSE=3)"
                            % (where, fmt))

        raw = self._data_bytes(data, bo, "%d.data" % metric.id)
        row_bytes = size * nloc
        if len(raw) != row_bytes * len(positions):
            raise self._err("%d.data holds %d bytes, expected %d rows x %d locations x %d"
                            % (metric.id, len(raw), len(positions), nloc, size))
        if metric.type == "INCLUSIVE":
            order = self._wide
        elif metric.type == "EXCLUSIVE":
            order = self._deep
        else:  # SIMPLE: CubeW enumerates its cnodes in definition (id) order
            order = self.cnodes
        rows = [None] * len(self.cnodes)
        row_fmt = "%s%d%s" % (bo, nloc, code)
        last = -1
        for i, pos in enumerate(positions):
            if pos <= last or pos >= len(order):
                raise self._err("%s: row %d is out of order or beyond %d cnodes"
                                % (where, pos, len(order)))
            last = pos
            rows[order[pos].id] = list(struct.unpack_from(row_fmt, raw, i * row_bytes))
        return rows

    def _data_bytes(self, data, bo, where):
        if data.startswith(_DATA_MARKER):
            return data[len(_DATA_MARKER):]
        if not data.startswith(_ZDATA_MARKER):
            raise self._err("%s starts with neither CUBEX.DATA nor ZCUBEX.DATA" % where)
        # ZCUBEX.DATA (CubeW built with zlib): uint64 n, n x (uncompressed offset, compressed
        # offset, compressed size) as uint64, then the zlib streams; offsets are relative to
        # the uncompressed payload and to the end of the sub-index.
        off = len(_ZDATA_MARKER)
        try:
            (n,) = struct.unpack_from(bo + "Q", data, off)
            entries = struct.unpack_from("%s%dQ" % (bo, 3 * n), data, off + 8)
        except struct.error:
            raise self._err("%s: truncated compressed sub-index" % where)
        base = off + 8 + 24 * n
        out = bytearray()
        for k in range(n):
            upos, cpos, csize = entries[3 * k:3 * k + 3]
            if csize == 0:
                continue
            chunk = data[base + cpos:base + cpos + csize]
            try:
                plain = zlib.decompress(chunk)
            except zlib.error as exc:
                raise self._err("%s: bad zlib stream %d: %s" % (where, k, _one_line(exc)))
            if len(out) < upos:
                out.extend(bytes(upos - len(out)))
            out[upos:upos + len(plain)] = plain
        return bytes(out)

    # ---- values -------------------------------------------------------------------------

    def metric(self, name):
        """The metric with this uniq_name (KeyError if there is none)."""
        try:
            return self._metric_by_name[name]
        except KeyError:
            raise KeyError("%s: no metric %r (have: %s)" % (
                self.path, name, ", ".join(m.uniq_name for m in self.metrics)))

    def _resolve(self, metric):
        if isinstance(metric, Metric):
            return metric
        if isinstance(metric, int):
            for m in self.metrics:
                if m.id == metric:
                    return m
            raise KeyError("%s: no metric with id %d" % (self.path, metric))
        return self.metric(metric)

    @property
    def root(self):
        """The single root cnode (CubeError when the tree has several)."""
        if len(self.roots) != 1:
            raise self._err("the call tree has %d roots, not one" % len(self.roots))
        return self.roots[0]

    def deep_order(self):
        """Cnode ids in the row order of EXCLUSIVE metrics."""
        return [c.id for c in self._deep]

    def wide_order(self):
        """Cnode ids in the row order of INCLUSIVE metrics."""
        return [c.id for c in self._wide]

    def values(self, metric, inclusive=True):
        """Values of ``metric`` (a Metric, uniq_name or id) as a list indexed by cnode id of
        lists indexed by location id. Integer dtypes give ints, the others floats.

        Sum-type metrics: the exclusive value is the inclusive value minus the children's
        inclusive values; the inclusive value is the subtree sum. MINDOUBLE/MAXDOUBLE
        metrics keep the stored value as their exclusive value, and their inclusive value is
        the minimum/maximum over the subtree, stored zeros of never-visited cnodes included:
        that is what the reference CSVs of the Score-P samples hold (they come from the
        pycubexr project, which aggregates MIN/MAX values this way). Rows a file does not
        store are 0 and take no part in a minimum or maximum."""
        return [list(row) for row in self._values_cached(metric, inclusive)]

    def value(self, metric, cnode_id, location_id, inclusive=True):
        """One value; see :meth:`values`."""
        return self._values_cached(metric, inclusive)[cnode_id][location_id]

    def _values_cached(self, metric, inclusive):
        metric = self._resolve(metric)
        key = (metric.id, bool(inclusive))
        if key not in self._cache:
            self._cache[key] = self._compute(metric, bool(inclusive))
        return self._cache[key]

    def _compute(self, metric, inclusive):
        if metric.type in _DERIVED_TYPES:
            raise self._err("metric %s is %s: its values are computed by CubePL, not stored"
                            % (metric.uniq_name, metric.type))
        if metric.type not in _STORED_TYPES:
            raise self._err("metric %s has unknown type %s" % (metric.uniq_name, metric.type))
        stored = self._stored[metric.id]
        nloc = len(self.locations)
        is_float = _DTYPES[metric.dtype][0] == "d" if metric.dtype in _DTYPES else True
        zero = 0.0 if is_float else 0

        if metric.dtype in ("MINDOUBLE", "MAXDOUBLE"):
            if not inclusive or metric.type != "EXCLUSIVE":
                return [list(r) if r is not None else [zero] * nloc for r in stored]
            pick = min if metric.dtype == "MINDOUBLE" else max
            agg = [None] * len(self.cnodes)
            for node in reversed(self._deep):  # children before parents
                acc = stored[node.id]
                acc = list(acc) if acc is not None else None
                for child in node.children:
                    c = agg[child.id]
                    if c is None:
                        continue
                    acc = list(c) if acc is None else [pick(a, b) for a, b in zip(acc, c)]
                agg[node.id] = acc
            return [r if r is not None else [zero] * nloc for r in agg]

        rows = [list(r) if r is not None else [zero] * nloc for r in stored]
        if metric.type == "SIMPLE" or (metric.type == "INCLUSIVE") == inclusive:
            return rows
        if inclusive:  # exclusive -> inclusive: subtree sums, children first
            for node in reversed(self._deep):
                row = rows[node.id]
                for child in node.children:
                    crow = rows[child.id]
                    for i in range(nloc):
                        row[i] += crow[i]
            return rows
        # inclusive -> exclusive: own inclusive minus the children's inclusive
        out = []
        for node in self.cnodes:
            row = list(rows[node.id])
            for child in node.children:
                crow = rows[child.id]
                for i in range(nloc):
                    row[i] -= crow[i]
            out.append(row)
        return out

    # ---- folded_calls.json ----------------------------------------------------------------

    def folded(self):
        """The calls a COLLAPSE call path holds, per function, as scorep writes them beside
        the tree (``folded_calls.json``; None when the archive has none, e.g. Score-P's own
        profiles or a run within the depth limit): {COLLAPSE cnode id: (functions, pairs)}
        with functions [(location id, region id, primitive calls, inclusive s of the
        outermost activations within the folded calls, min s, max s)] and pairs
        [(location id, caller region id, callee region id, calls, primitive calls,
        inclusive s, inclusive s of the pair's outermost activations within the folded
        calls, exclusive s)]. Whether a function (or pair) is active further out is the
        COLLAPSE node's call path, which the caller walks."""
        if hasattr(self, "_folded"):
            return self._folded
        text = self._members.get("folded_calls.json")
        self._folded = None
        if text is None:
            return None
        import json
        try:
            doc = json.loads(text.decode("utf-8"))
            out = {}
            nloc, nreg, ncn = len(self.locations), len(self.regions), len(self.cnodes)
            for c, l, r, prim, once, lo, hi in doc["functions"]:
                if not (0 <= c < ncn and 0 <= l < nloc and 0 <= r < nreg):
                    raise ValueError("an id out of range")
                out.setdefault(c, ([], []))[0].append(
                    (l, r, int(prim), float(once), float(lo), float(hi)))
            for c, l, a, b, nc, cc, incl, once, excl in doc["pairs"]:
                if not (0 <= c < ncn and 0 <= l < nloc and 0 <= a < nreg and 0 <= b < nreg):
                    raise ValueError("an id out of range")
                out.setdefault(c, ([], []))[1].append(
                    (l, a, b, int(nc), int(cc), float(incl), float(once), float(excl)))
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
            raise self._err("folded_calls.json is damaged: %s" % _one_line(exc))
        self._folded = out
        return out

    def __repr__(self):
        return "Profile(%r, %d metrics, %d cnodes, %d locations)" % (
            self.path, len(self.metrics), len(self.cnodes), len(self.locations))


def _one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__


def _find_cubex(path):
    if os.path.isdir(path):
        candidate = os.path.join(path, "profile.cubex")
        if os.path.isfile(candidate):
            return candidate
        found = sorted(n for n in os.listdir(path) if n.endswith(".cubex"))
        if len(found) == 1:
            return os.path.join(path, found[0])
        raise CubeError("%s: directory holds %s" % (
            path, "no .cubex file" if not found else "several .cubex files: " + ", ".join(found)))
    if not os.path.exists(path):
        raise CubeError("%s: no such file" % path)
    return path


def read(path):
    """Read a ``.cubex`` file, or the ``profile.cubex`` of an experiment directory."""
    path = _find_cubex(os.fspath(path))
    try:
        # Plain tar only: CUBE readers do not accept an outer compression either.
        with tarfile.open(path, "r:") as tar:
            members = {}
            for info in tar:
                if not info.isfile():
                    continue
                name = info.name[2:] if info.name.startswith("./") else info.name
                handle = tar.extractfile(info)
                members[name] = handle.read() if handle is not None else b""
    except (tarfile.TarError, EOFError) as exc:
        raise CubeError("%s: not a tar archive (%s)" % (path, _one_line(exc)))
    except OSError as exc:
        raise CubeError("%s: cannot read: %s" % (path, exc.strerror or _one_line(exc)))

    anchor = members.get("anchor.xml")
    if anchor is None:
        anchor = members.get("anchor.xml.gz")
    if anchor is None:
        raise CubeError("%s: no anchor.xml in the archive" % path)
    if anchor[:2] == b"\x1f\x8b":
        try:
            anchor = gzip.decompress(anchor)
        except (OSError, EOFError, zlib.error) as exc:
            raise CubeError("%s: anchor.xml is broken gzip: %s" % (path, _one_line(exc)))
    try:
        root = ET.fromstring(anchor)
    except ET.ParseError as exc:
        raise CubeError("%s: anchor.xml is not well-formed XML: %s" % (path, _one_line(exc)))
    if root.tag != "cube":
        raise CubeError("%s: anchor.xml root element is <%s>, not <cube>" % (path, root.tag))
    return Profile(path, root, members)


def recorded_metrics(profile):
    """The metrics a measurement recorded at enters and leaves (Score-P's dense metrics:
    rusage, PAPI, perf, the Python allocation counters): inclusive integer metrics of the
    profile's metric tree, beside Score-P's time."""
    return [m for m in profile.metrics
            if m.type == "INCLUSIVE" and m.uniq_name != "time" and m.parent is None and
            m.dtype in ("UINT64", "INT64")]
