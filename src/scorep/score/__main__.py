"""python -m scorep.score: the scorep-score command line."""

import sys

from scorep.score.cli import main

sys.exit(main())
