"""Python's import system in the reports: the call tree with importlib's frames folded
into one node per imported module, and which regions are the measured program's own code.

importlib's frames (``importlib._bootstrap:_find_and_load`` and the finders, loaders and
caches under it) are most of the call paths of a short run and, with MPI, hold
``MPI_Init_thread`` (mpi4py initialises MPI when its extension module is loaded): they
crowd out the program's own functions in every ranking. Folding them:

- A *group* is a frame of the import system whose caller is not one, with every frame of
  the import system below it (down to the module bodies it runs).
- The module bodies a group runs (``X:<module>``) become ``import X``. When the group ran
  one body, ``import X`` also holds the group's own time (finding, reading, unmarshalling
  the module): that is the whole cost of the import. When the group ran several bodies
  (two imports from one function share their call path, so the profile merges them), the
  group's own time cannot be told apart per module and is one node ``(import system)``
  next to the ``import X`` nodes; so it is for a group that ran no Python body (an
  extension module, a failed import, ``from package import name``).
- An import made while a group loads a module (an extension module's initialisation
  importing another module, ``import a.b`` importing ``a`` first) is a group of its own,
  below the node of the one that made it.
- A finder or loader that is not importlib's (``find_spec``, ``exec_module``, ... of
  setuptools' ``_distutils_hack``, six, pytest's assertion rewriter), with the Python
  functions it calls, is part of the group.
- C functions called inside a group (``posix:stat``, ``marshal:loads``, ``builtins:exec``
  running a module body) are part of it.
- Whatever else runs inside a group (MPI or I/O calls, a function of the program called by
  a module's ``__getattr__``) stays, under the node that holds the group's time.

Nothing is dropped: a node's exclusive time is the sum of the exclusive times of the frames
folded into it, so totals per location, per region kind and of the whole run are the
same with and without folding. The trace's timeline is not folded (it shows calls as they
were recorded)."""

import os
import re

from scorep.report.model import CallTree, MetricValues, Node, Region

__all__ = ["is_import_machinery", "fold_imports", "is_program_region", "SYSTEM_NAME",
           "IMPORT_PREFIX"]

# Modules (with their classes: module part of "module.Class:function") of the import
# system. importlib.metadata, importlib.resources and importlib.util are libraries a
# program calls on purpose; they stay.
_MACHINERY_MODULES = ("importlib._bootstrap", "importlib._bootstrap_external",
                      "_frozen_importlib", "_frozen_importlib_external", "zipimport")
# importlib's own functions that only run the import system.
_MACHINERY_FUNCTIONS = ("importlib:import_module", "importlib:__import__", "importlib:reload")

# The methods of the finder and loader protocols (importlib.abc): a finder or loader of a
# package or a tool (setuptools' _distutils_hack, six, pytest's assertion rewriter, an
# editable install) called by the import system is part of it.
_PROTOCOL_METHODS = ("find_spec", "find_module", "create_module", "exec_module",
                     "load_module", "get_code", "get_source", "get_data", "get_filename",
                     "is_package", "path_stats", "source_to_code")

SYSTEM_NAME = "(import system)"
IMPORT_PREFIX = "import "


def is_import_machinery(region):
    """Whether a region is a frame of Python's import system."""
    if region.kind != "code":
        return False
    name = region.name
    if name in _MACHINERY_FUNCTIONS:
        return True
    module = name.partition(":")[0]
    for m in _MACHINERY_MODULES:
        if module == m or module.startswith(m + "."):
            return True
    return (region.file or "").startswith(("<frozen importlib.", "<frozen zipimport"))


def _is_find_and_load(region):
    return region.name in ("importlib._bootstrap:_find_and_load",
                           "_frozen_importlib:_find_and_load")


def _is_protocol(region):
    return region.kind == "code" and region.name.rpartition(":")[2] in _PROTOCOL_METHODS


def _module_body(region):
    """The module name of a module body region (``X:<module>``), else None."""
    if region.kind == "code" and region.name.endswith(":<module>"):
        return region.name[:-len(":<module>")]
    return None


def has_imports(tree):
    return any(is_import_machinery(n.region) for n in tree.nodes)


def fold_imports(tree):
    """The call tree with the import system folded (see the module's docstring); the tree
    itself when it has no frame of the import system. The folded tree keeps the regions of
    the original (ids unchanged) and adds the ``import X`` and ``(import system)`` ones; it
    has no per-visit minimum and maximum (an import's duration per visit was not
    recorded)."""
    if not has_imports(tree):
        return tree
    nloc = len(tree.locations)
    regions = list(tree.regions)
    synthetic = {}

    def region_named(name, like=None):
        r = synthetic.get(name)
        if r is None:
            # The module's file and first line: the report's source view and the .prof
            # export's key point at the module that was imported.
            r = Region(len(regions), name, like.file if like else "",
                       like.line if like else 0, "user", "function")
            regions.append(r)
            synthetic[name] = r
        return r

    machinery = [is_import_machinery(n.region) for n in tree.nodes]
    # Unclamped exclusive time (inclusive minus the children's): the folded nodes' sums
    # then add up to the same inclusive times as the recorded ones.
    raw_excl = tree.unclamped_excl()

    new_nodes = []
    excl = []
    visits = []
    kids = []  # per new node: {(region id, params): new node}
    top_kids = {}
    merged_metric = [[] for _ in tree.metrics]
    io_bytes = {} if tree.io_bytes is not None else None
    hits = [] if tree.hits is not None else None  # samples, in a sampled tree

    def child(parent, region, params=()):
        table = top_kids if parent is None else kids[parent.id]
        key = (region.id, tuple(params))
        node = table.get(key)
        if node is None:
            node = table[key] = Node(len(new_nodes), parent, region, params)
            if parent is not None:
                parent.children.append(node)
            new_nodes.append(node)
            excl.append([0.0] * nloc)
            visits.append([0] * nloc)
            kids.append({})
            for m in merged_metric:
                m.append(0.0)
            if hits is not None:
                hits.append([0] * nloc)
        return node

    def assign(old, new, count_visits=True):
        erow, vrow, orow = excl[new.id], visits[new.id], raw_excl[old.id]
        for i in range(nloc):
            erow[i] += orow[i]
        if count_visits:
            ovrow = tree.visits[old.id]
            for i in range(nloc):
                vrow[i] += ovrow[i]
        for m, metric in zip(merged_metric, tree.metrics):
            m[new.id] += metric.excl[old.id]
        if hits is not None:
            hrow, ohrow = hits[new.id], tree.hits[old.id]
            for i in range(nloc):
                hrow[i] += ohrow[i]
        if io_bytes is not None and old.id in tree.io_bytes:
            r, w = io_bytes.get(new.id, (0, 0))
            r2, w2 = tree.io_bytes[old.id]
            io_bytes[new.id] = (r + r2, w + w2)

    folded_calls = {}  # new COLLAPSE node id: the calls beyond the depth limit it holds
    stack = [(root, None) for root in reversed(tree.roots)]
    while stack:
        old, parent = stack.pop()
        if machinery[old.id] or (old.params and old.parent is not None and
                                 machinery[old.parent.id]):
            group, bodies, others = [], [], []
            # (node, below a _find_and_load of this group, inside a finder or loader
            # that is not importlib's)
            todo = [(old, _is_find_and_load(old.region), False)]
            while todo:
                g, loading, hook = todo.pop()
                group.append(g)
                for c in g.children:
                    if loading and _is_find_and_load(c.region):
                        # An import made while a module is loaded (an extension module's
                        # initialisation, `import a.b` importing a first): its own group,
                        # below this one.
                        others.append(c)
                    elif machinery[c.id] or c.params or c.region.paradigm == "compiler":
                        # C functions the import system calls (stat, marshal.loads, the
                        # locks, exec of the module's code) are part of it.
                        todo.append((c, loading or _is_find_and_load(c.region), hook))
                    elif _is_protocol(c.region) or (hook and c.region.kind == "code" and
                                                    _module_body(c.region) is None):
                        todo.append((c, loading, True))
                    elif _module_body(c.region) is not None:
                        bodies.append(c)
                    else:
                        others.append(c)
            if len(bodies) == 1:
                body = bodies[0]
                target = child(parent, region_named(
                    IMPORT_PREFIX + _module_body(body.region), body.region))
                for g in group:
                    assign(g, target, count_visits=False)
                assign(body, target)
                carry = [(c, target) for c in body.children]
            else:
                target = child(parent, region_named(SYSTEM_NAME))
                for g in group:
                    assign(g, target, count_visits=g is old)
                carry = []
                for body in bodies:
                    imp = child(parent, region_named(
                        IMPORT_PREFIX + _module_body(body.region), body.region))
                    assign(body, imp)
                    carry.extend((c, imp) for c in body.children)
            carry.extend((c, target) for c in others)
            stack.extend(reversed(carry))
            continue
        if old.params and parent is not None and parent.region is not old.region:
            # A parameter split of a module body that became ``import X``: part of it.
            new = parent
            assign(old, new, count_visits=False)
        else:
            new = child(parent, old.region, old.params)
            assign(old, new)
            calls = tree.folded_at(old)
            if calls is not None:  # COLLAPSE: the calls it folds go with it
                functions, pairs = folded_calls.setdefault(new.id, ([], []))
                functions.extend(calls[0])
                pairs.extend(calls[1])
        stack.extend((c, new) for c in reversed(old.children))

    # Inclusive = own + the children's, children after their parents in new_nodes.
    incl = [list(row) for row in excl]
    metric_incl = [list(m) for m in merged_metric]
    for node in reversed(new_nodes):
        if node.parent is not None:
            prow, row = incl[node.parent.id], incl[node.id]
            for i in range(nloc):
                prow[i] += row[i]
            for m in metric_incl:
                m[node.parent.id] += m[node.id]
    folded = CallTree(regions, tree.ranks, tree.locations, new_nodes, visits, incl,
                      None, None, source=tree.source, folded=folded_calls)
    folded.io_bytes = io_bytes
    folded.metrics = [MetricValues(m.name, m.display, m.unit, m.description, mi, me, m.per_loc)
                      for m, mi, me in zip(tree.metrics, metric_incl, merged_metric)]
    folded.hits = hits
    folded.sampling = tree.sampling
    folded.imports_folded = True
    return folded


def program_directories(tree):
    """The directories of the measured program's files: those of its ``__main__``
    functions (the script, or the module run with -m)."""
    dirs = set()
    for n in tree.nodes:
        r = n.region
        if r.name.startswith("__main__") and r.file and os.path.isabs(r.file):
            dirs.add(os.path.dirname(r.file))
    return dirs


# An interpreter's standard library or an installed package (as html.is_program_file).
_LIBRARY = re.compile(r"/(?:site|dist)-packages/|/lib/python\d+(?:\.\d+)?/|^<")


def is_program_region(region, directories):
    """Whether a region is the program's own code: a function of ``__main__`` or of a file
    under the program's directories that is not an installed package's, never the import
    system, an import, MPI, I/O or the tool's own regions."""
    if region.kind != "code" or region.name.startswith((IMPORT_PREFIX, SYSTEM_NAME)):
        return False
    if is_import_machinery(region):
        return False
    if region.name.startswith("__main__"):
        return True
    f = region.file or ""
    if not f or _LIBRARY.search(f):
        return False
    return any(f.startswith(d.rstrip("/") + "/") for d in directories)
