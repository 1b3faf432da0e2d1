"""The dependency rules of scorep's Python package (ARCHITECTURE.md), checked from every import
statement anywhere in a module, the lazy ones inside functions included (an ast walk).

- LAYERS, lowest first: a module imports modules of its own layer or of lower ones only.
- No import cycles between modules (lazy imports count: a cycle hidden inside a function is
  still two modules that cannot be understood, or moved, one without the other).
- The native extension (scorep._bindings) is imported by scorep._native only.
- A name with a leading underscore belongs to its module: another module neither imports it
  nor reads it from the module (`module._name`).
Used by tools/check_layers.py; one line per violation, as for the C includes.
"""

import ast
import os

# Lowest first. A module belongs to the first entry that is its name or a package above it.
LAYERS = [
    ("base", ["scorep._version", "scorep._errors", "scorep._files"]),
    ("native", ["scorep._bindings", "scorep._reader", "scorep._native"]),
    ("formats", ["scorep.cube"]),
    ("api", ["scorep._api"]),
    ("public api", ["scorep.instrumenter"]),
    ("user api", ["scorep.user"]),
    # What the tools read too: configuration variables, filter files, instrumenter names.
    ("configuration", ["scorep.measure.config", "scorep.measure.filter",
                       "scorep.measure.instrumenters", "scorep.measure.signals"]),
    ("reading tools", ["scorep.report"]),
    ("scoring", ["scorep.score"]),
    ("measurement", ["scorep.measure"]),
    ("kernel", ["scorep.jupyter"]),
    ("package", ["scorep"]),
]
# Only scorep._native imports the extension (one module reaches the core).
EXTENSION = "scorep._bindings"
NATIVE = "scorep._native"


def layer_of(module):
    best = None
    for index, (_name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > best[1]:
                    best = (index, len(prefix))
    return None if best is None else best[0]


def module_name(root, path):
    rel = os.path.relpath(path, os.path.dirname(root)).replace(os.sep, "/")[:-3]
    parts = rel.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve(module, is_package, node):
    """The absolute module an ImportFrom names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module, is_package, tree, known):
    """[(line, imported module, private name or None, whether it is only a read of the
    module's attribute)] of every import in `tree`, and of every module._private read."""
    found = []
    aliases = {}  # local name -> module, for module._private reads
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append((node.lineno, alias.name, None, False))
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node)
            for alias in node.names:
                full = base + "." + alias.name
                local = alias.asname or alias.name
                if full in known:  # a module of the package
                    found.append((node.lineno, full, None, False))
                    aliases[local] = full
                else:
                    private = alias.name if alias.name.startswith("_") and \
                        not alias.name.startswith("__") else None
                    found.append((node.lineno, base, private, False))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id in aliases and node.attr.startswith("_") and \
                not node.attr.startswith("__"):
            target = aliases[node.value.id]
            if target + "." + node.attr not in known:
                found.append((node.lineno, target, node.attr, True))
    return found


def check(root):
    """Violations in the package at `root` (the scorep folder), as file:line: text."""
    files = {}
    for directory, subdirectories, names in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories
                                   if d not in ("_native", "js", "__pycache__"))
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                files[module_name(root, path)] = path
    known = set(files) | {EXTENSION, "scorep._reader"}
    problems, graph = [], {}
    for module, path in sorted(files.items()):
        rel = os.path.relpath(path, os.path.dirname(root)).replace(os.sep, "/")
        with open(path, encoding="utf-8") as source:
            tree = ast.parse(source.read(), path)
        is_package = path.endswith("__init__.py")
        edges = graph.setdefault(module, {})
        for line, target, private, attribute in imports_of(module, is_package, tree, known):
            if not (target == "scorep" or target.startswith("scorep.")):
                continue
            if private is not None and target != module:
                problems.append("%s:%d: uses %s.%s: a name with a leading underscore is its "
                                "module's own" % (rel, line, target, private))
            if attribute or target not in known:
                continue
            if target == EXTENSION and module != NATIVE:
                problems.append("%s:%d: imports %s: only %s imports the extension"
                                % (rel, line, target, NATIVE))
            mine, theirs = layer_of(module), layer_of(target)
            if theirs is not None and mine is not None and theirs > mine:
                problems.append("%s:%d: imports %s: the %s layer never imports the %s layer "
                                "(above it)" % (rel, line, target, LAYERS[mine][0],
                                                LAYERS[theirs][0]))
            if target != module and not module.startswith(target + ".") and \
                    not (target == "scorep" and module.startswith("scorep.")):
                edges.setdefault(target, line)
    for cycle in _cycles(graph):
        first, second = cycle[0], cycle[1]
        rel = os.path.relpath(files[first], os.path.dirname(root)).replace(os.sep, "/")
        problems.append("%s:%d: import cycle %s" % (rel, graph[first][second],
                                                    " -> ".join(cycle + [first])))
    return sorted(problems, key=lambda p: (p.split(":")[0], int(p.split(":")[1]), p))


def _cycles(graph):
    """One cycle per strongly connected component of more than one module (Tarjan)."""
    index, low, stack, on_stack, result = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(_one_cycle(graph, set(component)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(result)


def _one_cycle(graph, component):
    """A shortest cycle through the smallest module name of the component (BFS)."""
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, ())):
            if w == start:
                return paths[v]
            if w in component and w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return sorted(component)
