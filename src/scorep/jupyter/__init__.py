"""The Score-P Python Jupyter kernel (kernelspec `scorep_jupyter`) and `%load_ext scorep`.

    python -m scorep.jupyter install [--user | --sys-prefix | --prefix P]
    python -m scorep.jupyter -f <connection file>      (what Jupyter runs)

Marked cells are measured in the kernel process itself: they run in the notebook's namespace
like any other cell (see scorep.jupyter.kernel for the cell magics and
scorep.jupyter.magics for how a cell is measured).
"""

KERNEL_NAME = "scorep_jupyter"
DISPLAY_NAME = "Score-P Python"


def source_dir():
    """The directory that holds the scorep package (for PYTHONPATH)."""
    import os
    from scorep.measure import PACKAGE_DIR
    return os.path.dirname(PACKAGE_DIR)
