import sys

from scorep.report.cli import main

sys.exit(main())
