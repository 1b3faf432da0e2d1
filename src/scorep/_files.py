"""Files and directories that a run or a tool replaces are moved aside, never deleted.

One policy for the experiment directory (a new measurement into an existing, non-empty
SCOREP_EXPERIMENT_DIRECTORY) and for the filter files scorep-score writes: the old one is
renamed to ``<path>-<its modification time, YYYYMMDD_HHMMSS>``, with ``-2``, ``-3``, ...
appended when that name is taken too. It is Score-P's scheme for experiment directories,
which its scorep-score also uses for an existing filter file. (The C core applies the same
policy when rank 0 prepares an MPI experiment.)
"""

import datetime
import os

__all__ = ["move_aside"]


def move_aside(path):
    """Renames ``path`` (a file, a directory or a symbolic link, which is not followed) out
    of the way; returns the new name, or None when there is nothing at ``path``. OSError
    when the rename fails."""
    try:
        mtime = os.lstat(path).st_mtime
    except FileNotFoundError:
        return None
    stamp = datetime.datetime.fromtimestamp(mtime).strftime("%Y%m%d_%H%M%S")
    target = "%s-%s" % (path, stamp)
    n = 1
    while os.path.lexists(target):
        n += 1
        target = "%s-%s-%d" % (path, stamp, n)
    os.rename(path, target)
    return target
