"""The Score-P Python Jupyter kernel (kernelspec `scorep_jupyter`) and `%load_ext scorep`.

    python -m scorep.jupyter install [--user | --sys-prefix | --prefix P]
    python -m scorep.jupyter -f <connection file>      (what Jupyter runs)

Marked cells are measured in the kernel process itself: they run in the notebook's namespace
like any other cell (see scorep.jupyter.kernel for the cell magics and
scorep.jupyter.magics for how a cell is measured).
"""

KERNEL_NAME = "scorep_jupyter"
DISPLAY_NAME = "Score-P Python"
