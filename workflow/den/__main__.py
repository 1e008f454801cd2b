"""``python -m den``: see ``den.cli``."""

import sys

from den.cli import main

sys.exit(main())
