"""scorep-score: estimates the OTF2 trace and the SCOREP_TOTAL_MEMORY of a tracing run from a
CUBE4 profile (``profile.cubex``), shows what a filter file would leave out (``-f``) and writes
an initial filter file (``-g``), like Score-P's tool of the same name.

Usage: ``scorep-score [options] <experiment directory | profile.cubex>`` (also
``python -m scorep.score``); ``-h`` lists the options.

    model         region types, rows and groups, the estimate
    measured      the byte and memory model of our own traces (measured)
    scorep_rules  Score-P's rules, for profiles Score-P wrote
    formatting    the table and the summary lines
    filters       -g: the initial filter file
    balance       --ranks: the load balance over the ranks
    cli           the command line
"""

from scorep.score.cli import main
from scorep.score.filters import ALL_FILTER_FILE_NAME, FILTER_FILE_NAME
from scorep.score.formatting import clean_name, readable_bytes
from scorep.score.measured import compressed_size
from scorep.score.estimator import Estimate, estimate
from scorep.score.model import ScoreError

__all__ = ["main", "estimate", "Estimate", "ScoreError", "compressed_size", "readable_bytes",
           "clean_name", "FILTER_FILE_NAME", "ALL_FILTER_FILE_NAME"]
