"""MPI support: getting the PMPI wrappers (libscorep_mpi.so) in front of the MPI library.

The wrappers are loaded with RTLD_GLOBAL before the MPI library is used: the dynamic
linker then binds every MPI_* call of mpi4py (and of any other extension) to them, and
they call the MPI library's PMPI_* entry points. No LD_PRELOAD and no re-exec, unlike the
original bindings: loading order suffices because mpi4py's MPI module resolves its MPI
symbols when it is imported.

    --mpp=mpi        the wrappers are loaded right away
    (no --mpp)       under an MPI launcher (mpirun/srun environment), they are loaded when
                     the program imports mpi4py.MPI -- the only reliable sign that it uses
                     MPI -- and not at all otherwise
    --mpp=none       never
"""

import ctypes
import importlib.abc
import os
import sys

from scorep._errors import MPIError
from scorep.measure import PACKAGE_DIR

LIBRARY = os.path.join(PACKAGE_DIR, "libscorep_mpi.so")

# Environment variables MPI launchers set in every process they start.
_RANK_VARIABLES = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK",
                   "SLURM_PROCID")
_SIZE_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_NTASKS")

_loaded = None


def _first_number(names, environ):
    for name in names:
        value = environ.get(name, "")
        if value.isdigit():
            return int(value)
    return None


def launcher_rank(environ=os.environ):
    """This process's rank as the launcher set it, or None outside a launcher."""
    return _first_number(_RANK_VARIABLES, environ)


def launcher_size(environ=os.environ):
    return _first_number(_SIZE_VARIABLES, environ)


def under_launcher(environ=os.environ):
    return launcher_rank(environ) is not None and (launcher_size(environ) or 1) >= 1


def load_wrappers():
    """Loads the wrappers (once). Raises MPIError with one line when that fails."""
    global _loaded
    if _loaded is None:
        if not os.path.exists(LIBRARY):
            raise MPIError("this scorep was built without MPI support (no mpicc was found "
                           "when it was built, so %s is missing): install MPI with its "
                           "compiler wrapper (Debian: libopenmpi-dev) and build scorep again "
                           "(pip install, or make build in a checkout)" % LIBRARY)
        try:
            _loaded = ctypes.CDLL(LIBRARY, mode=ctypes.RTLD_GLOBAL)
        except OSError as error:
            raise MPIError("cannot load the MPI wrappers: %s" % error) from None
    return _loaded


class _LoadBeforeMPI(importlib.abc.MetaPathFinder):
    """Loads the wrappers when mpi4py.MPI is about to be imported, then steps aside."""

    def find_spec(self, name, path=None, target=None):
        if name == "mpi4py.MPI":
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
            try:
                load_wrappers()
            except MPIError as error:
                sys.stderr.write("scorep: %s; MPI calls are not recorded\n" % error)
        return None


def load_on_import():
    if "mpi4py.MPI" in sys.modules:
        load_wrappers()  # too late to be first for mpi4py, still in time for later binds
        return
    sys.meta_path.insert(0, _LoadBeforeMPI())
