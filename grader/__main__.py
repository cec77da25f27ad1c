"""`python -m grader` is the `grade` command."""

import sys

from grader.cli import main

sys.exit(main())
