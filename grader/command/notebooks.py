"""`grade notebooks [ID...] [--out DIR] [--install SPEC] [--force]`: (re)write the problem notebooks."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from grader.classroom.notebooks import NOTEBOOKS_DIR, write_notebooks
from grader.command.options import USAGE, Parser, course_and_settings

INSTALL_HELP = (
    "what the notebooks' set-up cell pip-installs: the learner copy's folder, relative to the notebooks' "
    "folder (default: the course the notebooks belong to), or git+URL[@REF] of the published learner "
    "copy, which the cell clones first (Colab)"
)


def notebooks_command(argv: list[str]) -> int:
    parser = Parser(
        prog="grade notebooks",
        usage=USAGE,
        description="Write a notebook per problem, made from its statement, stub and hints: the last cell "
        "grades the function the notebook defines on the practice cases. `grade export` writes them into "
        "the learner copy.",
    )
    parser.add_argument("ids", nargs="*", metavar="ID", help="problem ids (default: every problem)")
    parser.add_argument(
        "--out", metavar="DIR", type=Path, help=f"where to write them (default: {NOTEBOOKS_DIR}/)"
    )
    parser.add_argument("--install", metavar="SPEC", help=INSTALL_HELP)
    parser.add_argument("--force", action="store_true", help="overwrite notebooks that differ (edited ones)")
    args: argparse.Namespace = parser.parse_args(argv)
    course, _ = course_and_settings()
    problems = [course.problem(i) for i in args.ids] if args.ids else course.problems()
    out = (args.out or course.root / NOTEBOOKS_DIR).resolve()
    install = args.install or os.path.relpath(course.root, out)
    for line in write_notebooks(problems, out, install, force=args.force):
        print(line)
    return 0
