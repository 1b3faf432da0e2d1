#!/usr/bin/env python3
"""Checks the dependency rules of the C code (ARCHITECTURE.md) from its #include lines, and
those of the Python package from its imports (tools/python_layers.py).

    python3 tools/check_layers.py [src/scorep/_native] [--python src/scorep]

- core/ names no substrate, except core/substrates.h (the one dispatch header); it names no
  adapter, and never includes OTF2.
- A substrate (substrates/<name>/) includes core headers and its own folder only: never
  another substrate, never core/substrates.h (which names them all).
- An adapter (adapters/<name>/) includes core headers and its own folder only: never a
  substrate, never OTF2, never another adapter, never core/substrates.h.
- core/core_internal.h is included by core/ only; core/measurement_state.h (the
  measurement's whole state, sp_meas) by core/ and the substrates only.
- Adapters and the bindings never name the core's state (sp_meas): they use the functions
  of core/measurement.h.
- The bindings (bindings/) include core headers and the public headers of the Python and the
  child processes' adapters only.
- OTF2 is included by the trace substrate and the reports' reader only.
- The reports' reader (reader/) includes no measurement code, except the wait-state engine
  that runs offline there as at the end of a run (ENGINE_HEADERS: the engine and the builder
  of its operations, the group interface, the in-process group of threads,
  core/events.h for the operation codes, and the core's hash map core/tables.h).
Prints one line per violation (file:line: rule) and exits 1 when there is any.
"""

import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
DISPATCH = "core/substrates.h"
CORE_INTERNAL = "core/core_internal.h"
CORE_STATE = "core/measurement_state.h"
# The core's state, by name, outside comments and strings.
CORE_STATE_NAME = re.compile(r"\bsp_meas\b")
# What the reader may include of the core: the wait-state engine runs offline in it
# (scorep-report --wait-states), the same code as at the end of a measurement; and the
# core's hash map, which holds no measurement state (the scan's call tree uses it).
ENGINE_HEADERS = ("core/waitstates.h", "core/waitstates_build.h", "core/ipc.h",
                  "core/ipc_threads.h", "core/error.h", "core/events.h", "core/tables.h")
COMMENT_OR_STRING = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', re.S)


def layer_of(path):
    """(layer, component) of a file relative to the native root."""
    parts = path.split("/")
    if parts[0] in ("substrates", "adapters") and len(parts) > 2:
        return parts[0], parts[1]
    return parts[0], None


def violation(rel, include):
    """Why `rel` may not include `include`, or None."""
    layer, component = layer_of(rel)
    target_layer, target_component = layer_of(include) if "/" in include else (None, None)
    is_otf2 = include.startswith("otf2/")
    if include == CORE_INTERNAL and layer != "core":
        return "core/core_internal.h belongs to the core's own files"
    if include == CORE_STATE and layer not in ("core", "substrates"):
        return "%s belongs to the core and the substrates; use core/measurement.h" % CORE_STATE
    if layer == "core":
        if target_layer == "substrates" and rel != DISPATCH:
            return "the core names substrates only in %s" % DISPATCH
        if target_layer == "adapters":
            return "the core never includes an adapter"
        if is_otf2:
            return "OTF2 stays inside the trace substrate"
    elif layer == "substrates":
        if include == DISPATCH:
            return "a substrate never includes %s (it names the other substrates)" % DISPATCH
        if target_layer == "substrates" and target_component != component:
            return "substrates never include each other"
        if target_layer == "adapters":
            return "a substrate never includes an adapter"
        if is_otf2 and component != "trace":
            return "OTF2 stays inside the trace substrate"
    elif layer == "adapters":
        if include == DISPATCH or target_layer == "substrates":
            return "adapters see only the core, never a substrate"
        if is_otf2:
            return "adapters never include OTF2"
        if target_layer == "adapters" and target_component != component:
            return "adapters never include each other"
    elif layer == "bindings":
        if include == DISPATCH or target_layer == "substrates" or is_otf2:
            return "the bindings see only the core and the Python adapter"
        if target_layer == "adapters" and include not in ("adapters/python/python.h",
                                                          "adapters/process/process.h"):
            return "the bindings use only the public headers of the Python and the child " \
                   "processes' adapters"
    elif layer == "reader":
        if include in ENGINE_HEADERS:
            return None
        if target_layer in ("core", "substrates", "adapters", "bindings"):
            return "the reports' reader reads files only; it includes no measurement code"
    return None


def state_uses(rel, text):
    """Where an adapter or the bindings name the core's state."""
    # Comments and strings are blanked, keeping their newlines, so line numbers stay.
    code = COMMENT_OR_STRING.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return ["%s:%d: names sp_meas: adapters and the bindings use the functions of "
            "core/measurement.h, never the core's state" % (rel, code.count("\n", 0, m.start()) + 1)
            for m in CORE_STATE_NAME.finditer(code)]


def check(root):
    problems = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories.sort()
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(directory, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            with open(path, encoding="utf-8") as source:
                text = source.read()
            for number, line in enumerate(text.splitlines(), 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                why = violation(rel, match.group(1))
                if why:
                    problems.append("%s:%d: includes %s: %s" % (rel, number, match.group(1),
                                                               why))
            if layer_of(rel)[0] in ("adapters", "bindings"):
                problems += state_uses(rel, text)
    return problems


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    argv = list(argv)
    package = None
    if "--python" in argv:  # the Python package (and the C tree only when a root is given)
        i = argv.index("--python")
        package = argv[i + 1]
        del argv[i:i + 2]
        native = argv[1] if len(argv) > 1 else None
    else:
        native = argv[1] if len(argv) > 1 else os.path.join(here, "..", "src", "scorep", "_native")
        if len(argv) <= 1:
            package = os.path.join(here, "..", "src", "scorep")
    status = 0
    for problems, what in ((check(native) if native else [], "use(s)"),
                           (_python_problems(here, package) if package else [], "import(s)")):
        for problem in problems:
            print(problem)
        if problems:
            print("%d %s break the layering rules of ARCHITECTURE.md" % (len(problems), what))
            status = 1
    return status


def _python_problems(here, package):
    sys.path.insert(0, here)
    import python_layers
    return python_layers.check(package)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
