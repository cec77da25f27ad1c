"""`grade insights`: what a class got wrong, from a gradebook's behaviour record (or by grading a roster
first), as a page and a Markdown summary; and `grade new ID --pitfall NAME --from-group N`, a pitfall begun
from a group's representative file."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from grader.authoring.pitfall_scaffold import new_pitfall
from grader.behaviours import BehaviourRecord
from grader.classroom.behaviour_record import read_record
from grader.classroom.insights import class_insights, find_group
from grader.command.options import USAGE, Parser
from grader.course.problems import Course
from grader.errors import UsageError
from grader.report import write_file
from grader.report.insights_page import render_insights_page
from grader.report.markdown import insights_markdown
from grader.running.submission import SubmissionRefused, read_submission


def page_path(gradebook: Path) -> Path:
    return gradebook.with_suffix(".insights.html")


def write_insights(gradebook: Path, record: BehaviourRecord, page: Path | None = None) -> tuple[Path, str]:
    """Writes the page of `record`'s groups (by default beside the gradebook); returns its path and the
    Markdown summary of the groups, which links to it relative to the gradebook's folder."""
    page = page or page_path(gradebook)
    insights = class_insights(record)
    write_file(page, render_insights_page(insights, record.mode, str(gradebook)))
    link = os.path.relpath(page.absolute(), gradebook.absolute().parent)
    return page, insights_markdown(insights, link)


def insights_command(argv: list[str]) -> int:
    parser = Parser(
        prog="grade insights",
        usage=USAGE,
        description="What a class got wrong: each problem's failing submissions in groups of the same "
        "behaviour (the same answer within the tolerance on every practice case, and the same dtypes where "
        "profiled), written as one self-contained HTML page, with the groups in short on stdout. SOURCE is "
        "a gradebook written by `grade batch` or `grade merge` (its GRADEBOOK.behaviour.json is read), or "
        "a roster folder, which is graded first (`grade batch ROSTER_DIR --out GRADEBOOK.csv --insights`).",
    )
    parser.add_argument("source", metavar="GRADEBOOK.csv|ROSTER_DIR", type=Path)
    parser.add_argument("--page", metavar="PAGE.html", type=Path, help="default: GRADEBOOK.insights.html")
    parser.add_argument("--out", metavar="GRADEBOOK.csv", type=Path, help="with a roster: the gradebook")
    args, rest = parser.parse_known_args(argv)
    if args.source.is_dir():
        if args.out is None:
            raise UsageError("a roster is graded first: give --out GRADEBOOK.csv")
        from grader.command.batch import batch_command

        extra = ["--insights-page", str(args.page)] if args.page else []
        return batch_command([str(args.source), "--out", str(args.out), "--insights", *extra, *rest])
    if rest:
        raise UsageError(f"unrecognized arguments: {' '.join(rest)} (batch options need a roster)")
    record = read_record(args.source)
    page, summary = write_insights(args.source, record, args.page)
    print(summary.lstrip("\n"))
    print(f"page: {page}")
    return 0


def from_group_options(parser: argparse.ArgumentParser) -> None:
    """`grade new`'s options that begin a pitfall from a class's group instead of writing a new problem."""
    parser.add_argument(
        "--pitfall", metavar="NAME", help="begin pitfall NAME of problem ID (with --from-group)"
    )
    parser.add_argument(
        "--from-group", metavar="N", type=int, help="the group, as `grade insights` numbers it"
    )
    parser.add_argument(
        "--gradebook", metavar="GRADEBOOK.csv", type=Path, help="the class's gradebook (its behaviour record)"
    )


def pitfall_from_group(course: Course, args: argparse.Namespace) -> list[Path]:
    """Writes pitfall `args.pitfall` of problem `args.id` from the representative file of group
    `args.from_group` of the class in `args.gradebook`; returns the files written."""
    if args.from_group is None or args.gradebook is None:
        raise UsageError("--pitfall NAME needs --from-group N and --gradebook GRADEBOOK.csv")
    problem = course.problem(args.id)
    insights = class_insights(read_record(args.gradebook))
    try:
        _, group = find_group(insights, problem.id, args.from_group)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    file = Path(group.representative.file)
    try:  # as grading read it: no link followed below the learner's checkout (problems/<id>/stub.py)
        source = read_submission(file, file.parents[2]).source.decode("utf-8", errors="replace")
    except SubmissionRefused as exc:
        raise UsageError(f"cannot read the group's representative file: {exc}") from None
    families = list(dict.fromkeys(case.family for case in group.failing))
    origin = f"group {group.number} of {args.gradebook.name}, {group.size} learners"
    return new_pitfall(course, problem, args.pitfall, source, families, origin)
