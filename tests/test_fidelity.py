"""What Cube, Vampir and Score-P's tools expect in our files, as Score-P writes them (issue 15):
its artificial profile regions (MEASUREMENT OFF, TRACE BUFFER FLUSH; COLLAPSE is in
test_profile.py), the profile's remapping.spec, CubePL version and mirrors, region groups,
the system tree, the program root, and the trace definitions (paradigms, system tree domains
and properties, ProgramBegin and its attributes, location ids, region groups, archive
properties). Profiles are read back with scorep.cube and checked for the layout pycubexr
needs; traces with the OTF2 library (python3-otf2, otf2-print)."""

import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET

import pytest

from conftest import Trace, otf2_print, program, run_scorep, scorep_env
from scorep import cube, score

PYTHON = sys.executable


def measure(python, tmp_path, args, **env):
    exp = tmp_path / "exp"
    out = run_scorep(python, list(args), exp, cwd=tmp_path, **env)
    assert out.returncode == 0, out.stderr
    return out, exp


def members(cubex):
    with tarfile.open(cubex) as tar:
        return [(m.name, tar.extractfile(m).read()) for m in tar.getmembers()]


def anchor_of(cubex):
    return ET.fromstring(dict(members(cubex))["anchor.xml"])


def evt_sizes(exp):
    return {int(p.stem) >> 32: p.stat().st_size for p in (exp / "traces").glob("*.evt")}


def nodes(profile, name):
    return [c for c in profile.cnodes if c.region.name == name]


def pycubexr_layout(cubex):
    """What pycubexr asserts when it opens a profile: int begin/end on every region, one
    root cnode, one root system tree node, a SPARSE index and data for every metric."""
    files = dict(members(cubex))
    anchor = ET.fromstring(files["anchor.xml"])
    for region in anchor.find("program").findall("region"):
        int(region.get("begin")), int(region.get("end"))
    assert len(anchor.find("program").findall("cnode")) == 1
    assert len(anchor.find("system").findall("systemtreenode")) == 1
    for metric in anchor.find("metrics").iter("metric"):
        index = files["%s.index" % metric.get("id")]
        assert index[:11] == b"CUBEX.INDEX" and index[17] == 1  # SPARSE
        assert files["%s.data" % metric.get("id")][:10] == b"CUBEX.DATA"


# ---- MEASUREMENT OFF ---------------------------------------------------------------------

def test_measurement_off_region(python, tmp_path):
    out, exp = measure(python, tmp_path, [program("recording_off.py")],
                       SCOREP_ENABLE_TRACING="true")
    pid = int(out.stdout)
    profile = cube.read(exp)
    pycubexr_layout(exp / "profile.cubex")
    # Score-P defines its artificial regions first, whether they are used or not.
    off, flush = profile.regions[0], profile.regions[1]
    assert (off.name, off.paradigm, off.role, off.file, off.begin_line, off.end_line) == \
        ("MEASUREMENT OFF", "user", "artificial", "", -1, -1)
    assert (flush.name, flush.paradigm, flush.role) == \
        ("TRACE BUFFER FLUSH", "measurement", "artificial")
    visits = profile.values("visits", inclusive=False)
    excl = profile.values("time", inclusive=False)
    incl = profile.values("time", inclusive=True)
    main, = nodes(profile, "__main__:main")
    switch_off, = nodes(profile, "__main__:switch_off")
    under_main = [c for c in main.children if c.region.name == "MEASUREMENT OFF"]
    under_switch = [c for c in switch_off.children if c.region.name == "MEASUREMENT OFF"]
    assert len(under_main) == len(under_switch) == 1
    # Once off inside main (40 ms), once off inside switch_off, which returned while off:
    # the rest of that time (30 ms) went on in main. Visits count where it went off.
    assert visits[under_main[0].id] == [1] and visits[under_switch[0].id] == [1]
    assert incl[under_main[0].id][0] >= 0.07
    assert incl[under_switch[0].id][0] < 0.01
    # The caller keeps its own time only; nothing called while off is in the profile.
    assert excl[main.id][0] < 0.01
    assert not nodes(profile, "__main__:quiet")
    assert len(nodes(profile, "MEASUREMENT OFF")) == 2
    # The trace has one OFF/ON pair per visit of MEASUREMENT OFF.
    trace = Trace(exp)
    modes = [str(e.attrs["measurement_mode"]).rsplit(".", 1)[-1]
             for e in trace.of("MeasurementOnOff")]
    assert modes == ["OFF", "ON", "OFF", "ON"]
    # ... which is what scorep-score charges for them: the estimate stays exact.
    est = score.estimate(profile)
    real = evt_sizes(exp)
    assert est.scenario.location_bytes[0] == pytest.approx(real[0], rel=0.01)
    # The report shows it (from the profile alone here).
    report = subprocess.run([PYTHON, "-m", "scorep.report", str(exp / "profile.cubex")],
                            env=scorep_env(), capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    assert re.search(r"MEASUREMENT OFF\n", report.stdout)
    assert "recording was switched off 2 time(s) for " in report.stdout
    # ProgramBegin carries the process id (no thread id: it began on the main thread).
    import otf2
    with otf2.reader.open(str(exp / "traces.otf2")) as reader:
        for _, event in reader.events:
            if type(event).__name__ == "ProgramBegin":
                attributes = {a.name: v for a, v in event.attributes.items()}
                break
    assert attributes == {"ProcessId": pid}


# ---- TRACE BUFFER FLUSH ------------------------------------------------------------------

def test_trace_buffer_flush_region(python, tmp_path):
    out, exp = measure(python, tmp_path, [program("many_calls.py")],
                       SCOREP_ENABLE_TRACING="true", SCOREP_TOTAL_MEMORY="1M",
                       SCOREP_TIMER="clock_gettime")
    flushes = Trace(exp).of("BufferFlush")
    assert len(flushes) >= 2
    profile = cube.read(exp)
    flush_nodes = nodes(profile, "TRACE BUFFER FLUSH")
    assert flush_nodes
    visits = profile.values("visits", inclusive=False)
    incl = profile.values("time", inclusive=True)
    mins = profile.values("min_time", inclusive=False)
    maxs = profile.values("max_time", inclusive=False)
    # One visit per BufferFlush record, and the pauses' time, under the call path that was
    # current when the program went on (the loop in <module>, or tiny() it had entered).
    assert sum(visits[c.id][0] for c in flush_nodes) == len(flushes)
    pauses = [(f.attrs["stop_time"] - f.time) * 1e-9 for f in flushes]
    assert sum(incl[c.id][0] for c in flush_nodes) == pytest.approx(sum(pauses), rel=1e-3,
                                                                     abs=1e-6)
    assert min(mins[c.id][0] for c in flush_nodes) == pytest.approx(min(pauses), abs=1e-6)
    assert max(maxs[c.id][0] for c in flush_nodes) == pytest.approx(max(pauses), abs=1e-6)
    assert {c.parent.region.name for c in flush_nodes} <= {"__main__:<module>", "__main__:tiny"}
    # scorep-score charges a BufferFlush record per visit: the estimate matches the trace.
    est = score.estimate(profile)
    assert est.scenario.location_bytes[0] == pytest.approx(evt_sizes(exp)[0], rel=0.01)


# ---- the profile as Cube sees it ---------------------------------------------------------

def test_profile_structure_as_score_p_writes_it(tmp_path):
    out, exp = measure(PYTHON, tmp_path, [program("user_api.py"), "one", "two words"])
    cubex = exp / "profile.cubex"
    pycubexr_layout(cubex)
    files = members(cubex)
    # remapping.spec first (as Score-P writes it), anchor.xml last.
    assert files[0][0] == "remapping.spec" and files[-1][0] == "anchor.xml"
    anchor = ET.fromstring(files[-1][1])
    attrs = {a.get("key"): a.get("value") for a in anchor.findall("attr")}
    assert attrs["CubePL Version"] == "1.1"
    assert attrs["CLUSTERING"] == "OFF"
    murls = [m.text for m in anchor.find("doc").find("mirrors").findall("murl")]
    assert murls and all(u.startswith("https://") and u.endswith("/") for u in murls)
    urls = [m.find("url").text or "" for m in anchor.find("metrics").iter("metric")]
    assert [u for u in urls if u.startswith("@mirror@")] == [
        "@mirror@scorep_metrics.html#visits", "@mirror@scorep_metrics.html#time",
        "@mirror@scorep_metrics.html#time_min_incl", "@mirror@scorep_metrics.html#time_max_incl"]
    profile = cube.read(exp)
    # The system tree as Score-P names it, with the platform.
    machine = profile.system_nodes[0]
    assert (machine.name, machine.class_) == ("machine Linux", "machine")
    machine_xml = anchor.find("system").find("systemtreenode")
    assert {a.get("key"): a.get("value") for a in machine_xml.findall("attr")} == \
        {"platform": os.uname().sysname}
    node_xml = machine_xml.find("systemtreenode")
    assert node_xml.find("name").text == "node " + socket.gethostname()
    assert node_xml.find("class").text == "node"
    # The program root: the script's base name, the full command line, the argument count.
    root = profile.root.region
    assert root.name == "user_api.py"
    assert root.mangled_name == program("user_api.py") + " one two words"
    assert root.attrs == {"Score-P::ProgramArguments::numberOfArguments": "2"}
    # Region groups: "<paradigm>:<top-level package>", as the bindings group regions.
    by_name = {r.name: r for r in profile.regions}
    assert by_name["__main__:bare"].paradigm == "user:__main__"
    assert by_name["user:manual"].paradigm == "user:user"
    assert by_name["user_instrumenter:quiet"].paradigm == "user:user_instrumenter"
    assert by_name["error_region"].paradigm == "user:error"
    assert by_name["kept"].paradigm == "user"  # rewind regions have no group
    assert root.paradigm == "measurement" and by_name["MEASUREMENT OFF"].paradigm == "user"
    # The last line is unknown for Python functions and user regions, as in Score-P.
    bare = by_name["__main__:bare"]
    assert bare.begin_line == 20 and bare.end_line == -1  # co_firstlineno: the decorator
    assert by_name["user:manual"].end_line == -1


def _cubepl_names(text, pattern):
    return set(re.findall(pattern, text))


def test_remapping_spec_is_consistent(tmp_path):
    out, exp = measure(PYTHON, tmp_path, [program("calls.py")])
    spec = dict(members(exp / "profile.cubex"))["remapping.spec"].decode()
    # Two top-level elements, <doc> (mirrors) and <metrics>, as in Score-P's; no raw "<"
    # inside CubePL, so it is well-formed XML too.
    root = ET.fromstring("<spec>" + spec + "</spec>")
    assert [child.tag for child in root] == ["doc", "metrics"]
    assert root.find("doc").find("mirrors").find("murl").text.startswith("https://")
    metrics = list(root.find("metrics").iter("metric"))
    names = [m.find("uniq_name").text for m in metrics]
    assert len(names) == len(set(names))
    stored = {m.uniq_name for m in cube.read(exp).metrics} | {"bytes_sent", "bytes_received"}
    assert {"time", "visits"} <= set(names) and set(names) & stored == \
        {"time", "visits", "bytes_sent", "bytes_received"}
    for m in metrics:
        kind = m.get("type")
        assert kind in (None, "PREDERIVED_EXCLUSIVE", "POSTDERIVED")
        cubepl = m.find("cubepl")
        assert (cubepl is not None) == (kind is not None), m.find("uniq_name").text
        assert m.find("url").text.startswith("@mirror@scorep_metrics.html#")
    # Every metric CubePL refers to is defined; every mask it reads is declared global.
    init = "".join(m.find("cubeplinit").text for m in metrics if m.find("cubeplinit") is not None)
    used = _cubepl_names(spec, r"metric::(\w+)\(") | _cubepl_names(
        spec, r"cube::metric::set::(\w+)\(")
    assert used <= set(names), used - set(names)
    masks = _cubepl_names(spec, r"\$\{(\w+)\}\[")
    assert masks <= _cubepl_names(init, r"global\((\w+)\)"), masks
    assert init.count("{") == init.count("}") and init.count("(") == init.count(")")
    # The artificial regions it classifies are the ones the measurement writes.
    assert '"TRACE BUFFER FLUSH"' in init


# ---- trace definitions ---------------------------------------------------------------------

def test_trace_definitions_as_score_p_writes_them(python, tmp_path):
    import otf2
    out, exp = measure(python, tmp_path, [program("threads.py"), "a", "b c"],
                       SCOREP_ENABLE_TRACING="true")
    with otf2.reader.open(str(exp / "traces.otf2")) as reader:
        defs = reader.definitions
        # Location ids are (thread index << 32) | rank, also without MPI (rank 0).
        ids = {loc.name: loc._ref for loc in defs.locations}
        assert sorted(ids.values()) == [0, 1 << 32, 2 << 32]
        assert ids["MainThread"] == 0
        # No parallel paradigm without MPI (Score-P defines the ones it measured).
        assert list(defs.paradigms) == []
        # The system tree: the machine with its platform, the node a shared memory domain.
        domains = {d.system_tree_node.class_name: str(d.system_tree_node_domain).rsplit(".", 1)[-1]
                   for d in defs.system_tree_node_domains}
        assert domains == {"machine": "MACHINE", "node": "SHARED_MEMORY"}
        props = [(p.system_tree_node.class_name, p.name, p.value)
                 for p in defs.system_tree_node_properties]
        assert props == [("machine", "platform", os.uname().sysname)]
        # ProgramBegin's attributes.
        attributes = {a.name: (a.description, str(a.type).rsplit(".", 1)[-1])
                      for a in defs.attributes}
        assert attributes == {"ProcessId": ("Process identifier", "UINT64"),
                              "ThreadId": ("Thread identifier", "UINT64")}
        # A group of type REGIONS per region group, with its regions.
        groups = {g.name: sorted(r.name for r in g.members) for g in defs.groups
                  if str(g.group_type).endswith("REGIONS")}
        assert groups["__main__"] == sorted(r.name for r in defs.regions
                                            if r.name.startswith("__main__"))
        assert "threading" in groups and groups["error"] == ["error_region"]
        regions = {r.name: r for r in defs.regions}
        # End lines Score-P does not know are 0 in OTF2.
        work = regions["__main__:work"]
        assert work.begin_line_number > 0 and work.end_line_number == 0
        root = regions["threads.py"]
        assert root.canonical_name == program("threads.py") + " a b c"
        assert (regions["COLLAPSE"] if "COLLAPSE" in regions else None) is None
        begin = [e for _, e in reader.events if type(e).__name__ == "ProgramBegin"]
    assert len(begin) == 1
    assert begin[0].program_name == program("threads.py")
    assert list(begin[0].program_arguments) == ["a", "b c"]
    text = otf2_print(str(exp / "traces.otf2"), "-G")
    assert re.search(r"GROUP\s+\d+\s+Name: \"__main__\" <\d+>, Type: REGIONS", text)
    assert "SYSTEM_TREE_NODE_DOMAIN" in text and "Domain: SHARED_MEMORY" in text
    assert re.search(r"ATTRIBUTE\s+0\s+Name: \"ProcessId\"", text)
    names = sorted(p.name for p in (exp / "traces").glob("*.evt"))
    assert names == ["0.evt", "4294967296.evt", "8589934592.evt"]


def test_thread_id_when_the_program_begins_on_another_thread(tmp_path):
    """ProgramBegin names the thread that began the program when it is not the process's
    first (the measurement started from a worker thread)."""
    import otf2
    script = tmp_path / "from_thread.py"
    script.write_text(
        "import os, threading, scorep.measure.session as m, scorep.measure.config as c\n"
        "ids = []\n"
        "def run():\n"
        "    ids.append(threading.get_native_id())\n"
        "    r = m.Measurement(c.from_environ({'SCOREP_ENABLE_TRACING': 'true',\n"
        "                                      'SCOREP_EXPERIMENT_DIRECTORY': %r}),\n"
        "                      program_name='from_thread', program_args=['x']).start()\n"
        "    sum(range(10))\n"
        "    r.finalize()\n"
        "t = threading.Thread(target=run); t.start(); t.join()\n"
        "print(os.getpid(), ids[0])\n" % str(tmp_path / "exp"))
    env = scorep_env()
    out = subprocess.run([PYTHON, str(script)], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    pid, tid = (int(x) for x in out.stdout.split())
    assert pid != tid
    with otf2.reader.open(str(tmp_path / "exp" / "traces.otf2")) as reader:
        begin = [e for _, e in reader.events if type(e).__name__ == "ProgramBegin"]
        assert {a.name: v for a, v in begin[0].attributes.items()} == \
            {"ProcessId": pid, "ThreadId": tid}
        assert begin[0].program_name == "from_thread"


# ---- MPI -----------------------------------------------------------------------------------

def mpirun(ranks, args, tmp_path, **env_vars):
    env = scorep_env(tmp_path / "exp", **env_vars)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    command = ["mpirun", "--oversubscribe", "-np", str(ranks), PYTHON, "-m", "scorep"]
    return subprocess.run(command + [str(a) for a in args], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=180)


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun is not installed")
@pytest.mark.parametrize("recording", ["on", "off"])
def test_mpi_definitions(tmp_path, recording):
    import otf2
    out = mpirun(2, ["--mpp=mpi", program("mpi_recording_off.py"), recording], tmp_path,
                 SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    exp = tmp_path / "exp"
    with otf2.reader.open(str(exp / "traces.otf2")) as reader:
        defs = reader.definitions
        paradigms = [(str(p.paradigm).rsplit(".", 1)[-1], p.name,
                      str(p.paradigm_class).rsplit(".", 1)[-1]) for p in defs.paradigms]
        assert paradigms == [("MPI", "MPI", "PROCESS")]
        properties = {str(p.property).rsplit(".", 1)[-1]: p.value
                      for p in defs.paradigm_properties}
        assert properties == {"COMM_NAME_TEMPLATE": "Comm ${id}",
                              "RMA_WIN_NAME_TEMPLATE": "Win ${id}"}
        ranks = {loc.group.name: loc._ref for loc in defs.locations}
        assert ranks == {"MPI Rank 0": 0, "MPI Rank 1": 1}
        barrier = [r for r in defs.regions if r.name == "MPI_Barrier"][0]
        assert barrier.source_file == "MPI"
    # Score-P's archive property: every MPI event is in the trace unless recording was off.
    anchor = otf2_print(str(exp / "traces.otf2"), "-A")
    value = "false" if recording == "off" else "true"
    assert re.search(r"Property name\s+OTF2::MPI_COMMUNICATION_COMPLETE\n"
                     r"Property value\s+%s\n" % value, anchor), anchor
    profile = cube.read(exp)
    mpi = [r for r in profile.regions if r.name.startswith("MPI_")]
    assert mpi and all(r.file == "MPI" and r.paradigm == "mpi" for r in mpi)
