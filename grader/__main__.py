"""`python -m grader` is the `grade` command."""

import sys

from grader.command.main import main

sys.exit(main())
