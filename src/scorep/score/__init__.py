"""scorep-score: estimates the OTF2 trace and the SCOREP_TOTAL_MEMORY of a tracing run from a
CUBE4 profile (``profile.cubex``), shows what a filter file would leave out (``-f``) and writes
an initial filter file (``-g``), like Score-P's tool of the same name.

Usage: ``scorep-score [options] <experiment directory | profile.cubex>`` (also
``python -m scorep.score``); ``-h`` lists the options.

    model       region types, the byte model of the trace, the memory model
    formatting  the table and the summary lines
    filters     -g: the initial filter file
    balance     --ranks: the load balance over the ranks
    cli         the command line
"""

from scorep.score.cli import main
from scorep.score.filters import FILTER_FILE_NAME, escape_pattern
from scorep.score.formatting import readable_bytes
from scorep.score.model import CHUNK_BYTES, Estimate, ScoreError, compressed_size, estimate

__all__ = ["main", "estimate", "Estimate", "ScoreError", "compressed_size", "readable_bytes",
           "escape_pattern", "FILTER_FILE_NAME", "CHUNK_BYTES"]
