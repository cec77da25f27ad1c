"""`python -m grader.cli`, as set-ups written before the subpackages call it: the same as `python -m grader`
(the command is grader/command/)."""

import sys

from grader.command.main import main

if __name__ == "__main__":
    sys.exit(main())
