"""The `grade` command: `grade ID... | --all`, and the subcommands (`grade list`, `hint`, `watch`, `export`,
`prepare`, `batch`, `merge`, `insights`, and for authors `check`, `new`, `docs`). This module only
dispatches: grading is in grader/command/grade.py, batch and merge in grader/command/batch.py, insights in
grader/command/insights.py, the other subcommands in grader/command/course.py, what they share in
grader/command/options.py."""

from __future__ import annotations

import os
import sys
import traceback

from grader.command.grade import run_grade
from grader.errors import GraderError

# The subcommands (grader/command/course.py's COMMANDS, which a test keeps equal to this): their modules are
# imported only to run one, so that a learner's `grade ID` does not wait for them.
SUBCOMMANDS = ("list", "hint", "export", "batch", "merge", "prepare", "watch", "check", "new", "docs")
SUBCOMMANDS += ("notebooks", "insights")


def main(argv: list[str] | None = None) -> int:
    """Runs the command line and returns the exit status: 0 passed, 1 failed or errored, 2 usage error."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if argv and argv[0] in SUBCOMMANDS:
            from grader.command.course import COMMANDS

            return COMMANDS[argv[0]](argv[1:])
        return run_grade(argv)
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except GraderError as exc:
        print(f"grade: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("grade: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `grade ... | head`: the reader left, which is not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception:  # a bug of the grader's: never to be mistaken for a learner's failure (exit 1)
        traceback.print_exc()
        print("grade: internal error (the traceback above); please report it", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
