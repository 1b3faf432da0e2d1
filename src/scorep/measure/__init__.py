"""Measuring a program: the command line (cli), its configuration and filter (config,
filter), the running measurement of this process (session), the signals it handles
(signals), the child processes it follows (children, with child_site), MPI (mpi) and the
end-of-run summary (summary). The tools that read the results (report, score, cube) never
import this package.
"""

import os

# The installed package (scorep/): its code is never recorded, and a child interpreter
# finds scorep through its parent directory.
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
