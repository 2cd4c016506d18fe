"""`python -m turinglab.cli`."""

import sys

from turinglab.cli import main

sys.exit(main())
