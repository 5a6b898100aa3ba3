"""``python -m vrlib.scorecard``: write the scorecard pages (``--check``: compare only)."""

import sys

from vrlib.scorecard.report import main

sys.exit(main())
