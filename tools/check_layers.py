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
- core/core_internal.h is included by core/ only.
- The bindings (bindings/) include core headers and the public headers of the Python and the
  child processes' adapters only.
- OTF2 is included by the trace substrate and the reports' reader only.
Prints one line per violation (file:line: rule) and exits 1 when there is any.
"""

import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
DISPATCH = "core/substrates.h"
CORE_INTERNAL = "core/core_internal.h"


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
        if target_layer in ("core", "substrates", "adapters", "bindings"):
            return "the reports' reader reads files only; it includes no measurement code"
    return None


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
                for number, line in enumerate(source, 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    why = violation(rel, match.group(1))
                    if why:
                        problems.append("%s:%d: includes %s: %s" % (rel, number, match.group(1),
                                                                   why))
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
    for problems, what in ((check(native) if native else [], "include(s)"),
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
