"""Perfetto's native trace format (.perfetto-trace, .pftrace): a protobuf `Trace` of
`TracePacket`s, written with the protobuf library (Debian: python3-protobuf). Smaller
than the Chrome JSON (names are interned once, timestamps are varints) and loaded faster
by ui.perfetto.dev and trace_processor.

What it holds: a process track per rank and a thread track per thread (TrackDescriptor),
a slice per call (TrackEvent TYPE_SLICE_BEGIN/END with the interned region name and its
source location), buffer flushes on a track of their own per thread, and MPI messages as
flows from the send to the receive (instant events carrying the flow id). Timestamps are
nanoseconds since the start of the trace.

The message definitions are built at run time from Perfetto's schema
(protos/perfetto/trace/trace_packet.proto, track_event/track_event.proto,
track_descriptor.proto, process_descriptor.proto, thread_descriptor.proto,
interned_data/interned_data.proto, track_event/source_location.proto,
track_event/debug_annotation.proto): only the fields written here, with Perfetto's field
numbers and types, so that no .proto compiler is needed."""

import os

from scorep.report.model import ReportError

__all__ = ["message_classes", "write", "BYTES_PER_CALL"]

# Measured: a begin packet (timestamp, type, track, name and source iids, sequence id and
# flags) and an end packet are about 49 bytes for a call.
BYTES_PER_CALL = 49

SEQ_INCREMENTAL_STATE_CLEARED = 1
SEQ_NEEDS_INCREMENTAL_STATE = 2
TYPE_SLICE_BEGIN, TYPE_SLICE_END, TYPE_INSTANT = 1, 2, 3
SEQUENCE_ID = 1

# (message, [(field, number, type, label, message type or None)]); types and labels as
# in descriptor.proto: 4 uint64, 5 int32, 9 string, 11 message, 13 uint32, 14 enum,
# 6 fixed64; label 1 optional, 3 repeated.
_U64, _I32, _STR, _MSG, _U32, _F64 = 4, 5, 9, 11, 13, 6
_OPT, _REP = 1, 3
SCHEMA = [
    ("Trace", [("packet", 1, _MSG, _REP, "TracePacket")]),
    ("TracePacket", [
        ("timestamp", 8, _U64, _OPT, None),
        ("track_event", 11, _MSG, _OPT, "TrackEvent"),
        ("track_descriptor", 60, _MSG, _OPT, "TrackDescriptor"),
        ("trusted_packet_sequence_id", 10, _U32, _OPT, None),
        ("interned_data", 12, _MSG, _OPT, "InternedData"),
        ("sequence_flags", 13, _U32, _OPT, None),
    ]),
    ("TrackEvent", [
        ("categories", 22, _STR, _REP, None),
        ("name_iid", 10, _U64, _OPT, None),
        ("name", 23, _STR, _OPT, None),
        ("type", 9, _I32, _OPT, None),  # an enum in Perfetto's schema: the same varint
        ("track_uuid", 11, _U64, _OPT, None),
        ("flow_ids", 47, _F64, _REP, None),
        ("terminating_flow_ids", 48, _F64, _REP, None),
        ("debug_annotations", 4, _MSG, _REP, "DebugAnnotation"),
        ("source_location_iid", 34, _U64, _OPT, None),
    ]),
    ("TrackDescriptor", [
        ("uuid", 1, _U64, _OPT, None),
        ("parent_uuid", 5, _U64, _OPT, None),
        ("name", 2, _STR, _OPT, None),
        ("process", 3, _MSG, _OPT, "ProcessDescriptor"),
        ("thread", 4, _MSG, _OPT, "ThreadDescriptor"),
    ]),
    ("ProcessDescriptor", [
        ("pid", 1, _I32, _OPT, None),
        ("process_name", 6, _STR, _OPT, None),
    ]),
    ("ThreadDescriptor", [
        ("pid", 1, _I32, _OPT, None),
        ("tid", 2, _I32, _OPT, None),
        ("thread_name", 5, _STR, _OPT, None),
    ]),
    ("InternedData", [
        ("event_categories", 1, _MSG, _REP, "EventCategory"),
        ("event_names", 2, _MSG, _REP, "EventName"),
        ("source_locations", 4, _MSG, _REP, "SourceLocation"),
    ]),
    ("EventCategory", [("iid", 1, _U64, _OPT, None), ("name", 2, _STR, _OPT, None)]),
    ("EventName", [("iid", 1, _U64, _OPT, None), ("name", 2, _STR, _OPT, None)]),
    ("SourceLocation", [
        ("iid", 1, _U64, _OPT, None),
        ("file_name", 2, _STR, _OPT, None),
        ("function_name", 3, _STR, _OPT, None),
        ("line_number", 4, _U32, _OPT, None),
    ]),
    ("DebugAnnotation", [
        ("name", 10, _STR, _OPT, None),
        ("int_value", 4, 3, _OPT, None),  # int64
        ("string_value", 6, _STR, _OPT, None),
    ]),
]

_classes = None


def message_classes():
    """{message name: class} built from SCHEMA with the protobuf library; a ReportError
    when the library is missing."""
    global _classes
    if _classes is not None:
        return _classes
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool
        try:
            from google.protobuf.message_factory import GetMessageClass
        except ImportError:  # protobuf < 4.22 (Debian 12 has 3.21 / 4.21)
            from google.protobuf import message_factory
            factory = message_factory.MessageFactory()
            GetMessageClass = factory.GetPrototype
    except ImportError as error:
        import sys
        raise ReportError(
            "writing a Perfetto protobuf trace needs the protobuf package for this Python "
            "(%d.%d): %s; on Debian: apt install python3-protobuf (or write -o trace.json, "
            "which Perfetto opens as well)" % (sys.version_info[0], sys.version_info[1],
                                               " ".join(str(error).split()))) from None
    fdp = descriptor_pb2.FileDescriptorProto(name="scorep_perfetto_subset.proto",
                                             package="perfetto.protos", syntax="proto2")
    for name, fields in SCHEMA:
        msg = fdp.message_type.add(name=name)
        for fname, number, ftype, label, type_name in fields:
            f = msg.field.add(name=fname, number=number, type=ftype, label=label)
            if type_name:
                f.type_name = ".perfetto.protos." + type_name
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    _classes = {name: GetMessageClass(pool.FindMessageTypeByName("perfetto.protos." + name))
                for name, _ in SCHEMA}
    return _classes


def _uuid(kind, index):
    # Track uuids: any unique 64-bit numbers; these keep processes, threads and flush
    # tracks apart and readable in a dump.
    return (kind << 40) | (index + 1)


def write(exp, calls, path, program):
    """Writes the trace; calls: trace_calls.TraceCalls. Returns counts of what it holds
    (calls, flows, flushes, bytes)."""
    classes = message_classes()
    Trace = classes["Trace"]
    scan = calls.scan
    single = len(scan.ranks) == 1
    batch = Trace()
    tmp = path + ".part"
    counts = {"calls": len(calls), "flows": 0, "flushes": 0}

    def packet():
        p = batch.packet.add()
        p.trusted_packet_sequence_id = SEQUENCE_ID
        return p

    try:
        with open(tmp, "wb") as out:
            def flush_batch(force=False):
                # A Trace is its repeated packets: serialized Traces written one after the
                # other are one Trace holding all their packets.
                if force or len(batch.packet) >= 4096:
                    out.write(batch.SerializeToString())
                    batch.Clear()

            # Tracks: a process per rank, a thread per location, a flush track where needed.
            for rank in scan.ranks:
                p = packet()
                td = p.track_descriptor
                td.uuid = _uuid(1, rank.index)
                td.process.pid = rank.index + 1
                td.process.process_name = ("%s (%s)" % (program, rank.name) if single
                                           else rank.name)
            flush_events = exp.scan.messages()["flushes"] if exp.scan is not None else []
            flush_locs = {loc for _, _, loc in flush_events}
            for l, loc in enumerate(scan.locations):
                p = packet()
                td = p.track_descriptor
                td.uuid = _uuid(2, l)
                td.parent_uuid = _uuid(1, loc.rank)
                td.thread.pid = loc.rank + 1
                td.thread.tid = loc.thread + 1
                td.thread.thread_name = loc.name
                if l in flush_locs:
                    p = packet()
                    td = p.track_descriptor
                    td.uuid = _uuid(3, l)
                    td.parent_uuid = _uuid(1, loc.rank)
                    td.name = "%s: trace buffer flushes" % loc.name
            # Interned names and source locations: iid = region id + 1 (0 is invalid).
            p = packet()
            p.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED
            used = sorted(set(calls.region))
            for r in used:
                region = scan.regions[r]
                p.interned_data.event_names.add(iid=r + 1, name=region.display)
                if region.file:
                    p.interned_data.source_locations.add(
                        iid=r + 1, file_name=region.file, function_name=region.name,
                        line_number=region.line)
            with_source = {r for r in used if scan.regions[r].file}
            flush_batch(True)

            # Messages as flows: an instant on the sender's track at the send, one on the
            # receiver's at the receive, joined by the flow id.
            instants = []
            if exp.scan is not None:
                for i, (sl, st, rl, rt, nbytes) in enumerate(exp.scan.messages()["pairs"]):
                    instants.append((st, sl, i + 1, True, nbytes))
                    instants.append((rt, rl, i + 1, False, nbytes))
                instants.sort()
            counts["flows"] = len(instants) // 2
            k = 0
            for t, l, is_open, r in calls.merged_events():
                while k < len(instants) and instants[k][0] < t:
                    _instant(packet(), instants[k])
                    k += 1
                p = packet()
                p.timestamp = t
                p.sequence_flags = SEQ_NEEDS_INCREMENTAL_STATE
                ev = p.track_event
                ev.track_uuid = _uuid(2, l)
                if is_open:
                    ev.type = TYPE_SLICE_BEGIN
                    ev.name_iid = r + 1
                    if r in with_source:
                        ev.source_location_iid = r + 1
                else:
                    ev.type = TYPE_SLICE_END
                flush_batch()
            for item in instants[k:]:
                _instant(packet(), item)
            for start, end, l in flush_events:
                for t, kind in ((start, TYPE_SLICE_BEGIN), (end, TYPE_SLICE_END)):
                    p = packet()
                    p.timestamp = t
                    ev = p.track_event
                    ev.track_uuid = _uuid(3, l)
                    ev.type = kind
                    if kind == TYPE_SLICE_BEGIN:
                        ev.name = "trace buffer flush"
                counts["flushes"] += 1
            flush_batch(True)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    counts["bytes"] = os.path.getsize(path)
    return counts


def _instant(p, item):
    t, l, flow, is_send, nbytes = item
    p.timestamp = t
    ev = p.track_event
    ev.track_uuid = _uuid(2, l)
    ev.type = TYPE_INSTANT
    ev.name = "MPI send" if is_send else "MPI receive"
    ev.categories.append("mpi")
    if is_send:
        ev.flow_ids.append(flow)
    else:
        ev.terminating_flow_ids.append(flow)
    ev.debug_annotations.add(name="bytes", int_value=nbytes)
