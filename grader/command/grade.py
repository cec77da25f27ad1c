"""`grade ID... | --all`: grades submissions and reports each problem as soon as it is graded."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from grader.command.options import (
    USAGE,
    Parser,
    course_and_settings,
    destinations,
    format_spec,
    learner_checkout,
    limit_options,
    make_grader,
    root_option,
)
from grader.course import progress
from grader.course.cases import SECRET_ENV
from grader.course.hints import load_hints
from grader.course.problems import Problem
from grader.errors import GraderError, UsageError
from grader.grading.grader import Grader
from grader.report import FORMATS, write_reports
from grader.report.gradescope import VISIBILITIES
from grader.report.plain_text import render_problem
from grader.report.profile_table import side_by_side
from grader.results import GradeReport, ProblemResult


def grade_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="grade",
        usage=USAGE,
        description="Grade mixed-precision exercises. Practice cases by default; hidden cases when "
        f"${SECRET_ENV} is set. Exit status: 0 all passed, 1 something failed, 2 the command was wrong.",
    )
    parser.add_argument("ids", nargs="*", metavar="ID", help="problem ids (see `grade list`)")
    parser.add_argument("--all", action="store_true", help="grade every problem")
    root_option(parser)
    parser.add_argument("--submission", metavar="FILE", type=Path, help="grade this file instead of the stub")
    parser.add_argument(
        "--format",
        action="append",
        type=format_spec,
        metavar="FORMAT[=FILE]",
        help=f"report format ({', '.join(FORMATS)}; default text), to stdout or, with =FILE, to a file; "
        "repeat it for several reports from one run",
    )
    parser.add_argument(
        "--gradescope-visibility",
        choices=VISIBILITIES,
        default="after_due_date",
        help="when learners see hidden-case results in the gradescope format (default: after_due_date)",
    )
    traced = parser.add_mutually_exclusive_group()
    traced.add_argument(
        "--profile",
        action="store_true",
        help="trace your code on a practice case and print its dtypes beside the reference's, role by role, "
        "whether or not it passed (practice mode only)",
    )
    traced.add_argument(
        "--no-profile",
        action="store_true",
        help="do not trace a failed answer to compare its dtypes with the reference's",
    )
    limit_options(parser)
    return parser


def color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def hint_footer(problem: Problem, root: Path) -> str:
    try:
        total = len(load_hints(problem))
    except GraderError:
        return ""
    shown = progress.hints_shown(root, problem)
    if total == 0 or shown >= total:
        return ""
    return f"  Stuck? `grade hint {problem.id}` shows hint {shown + 1} of {total}."


def learner_block(result: ProblemResult, problem: Problem, root: Path, grader: Grader) -> str:
    """A graded problem as a learner reads it in the terminal: the report, and in practice mode the hint
    footer when it did not pass."""
    footer = "" if result.passed or grader.secret or result.fault == "grader" else hint_footer(problem, root)
    return render_problem(result, grader.mode, color=color()) + ("\n" + footer if footer else "") + "\n"


def run_grade(argv: list[str]) -> int:
    args = grade_parser().parse_args(argv)
    course, settings = course_and_settings()
    if args.all and args.ids:
        raise UsageError("give problem ids or --all, not both")
    if not args.all and not args.ids:
        raise UsageError(f"name a problem to grade, or --all (problems: {', '.join(course.problem_ids())})")
    problems = course.problems() if args.all else [course.problem(problem_id) for problem_id in args.ids]
    if args.submission and len(problems) != 1:
        raise UsageError("--submission grades one file, so give exactly one problem id")
    checkout = learner_checkout(course, args.root)
    root = checkout.root
    submissions = {p.id: args.submission or checkout.stub(p) for p in problems}
    if not args.all:
        for path in submissions.values():
            if not os.path.lexists(path):  # a link is there: the grader refuses it with the reason
                raise UsageError(f"no submission file at {path}")

    stdout_format, files = destinations(args.format)
    grader = make_grader(course, args, settings)
    results: list[ProblemResult] = []
    ready = {
        p.id: checkout.missing_result(p, path)
        for p in problems
        if not os.path.lexists(path := submissions[p.id])
    }

    def show_in_order(result: ProblemResult | None = None) -> None:
        """Reports each problem as soon as it and every problem before it are graded."""
        if result is not None:
            ready[result.problem] = result
        while len(results) < len(problems) and problems[len(results)].id in ready:
            problem = problems[len(results)]
            done = ready[problem.id]
            results.append(done)
            if args.submission is None:
                progress.record_result(root, done, submissions[problem.id], grader.mode)
            if stdout_format == "text":
                print(learner_block(done, problem, root, grader), flush=True)
                if args.profile:
                    print(side_by_side(done), flush=True)
            elif sys.stderr.isatty():
                print(f"graded {problem.id}: {done.status}", file=sys.stderr, flush=True)

    show_in_order()
    todo = [(p, submissions[p.id]) for p in problems if p.id not in ready]
    if todo:
        grader.grade_files(todo, on_result=show_in_order, root=None if args.submission else root)
    show_in_order()
    report = GradeReport(mode=grader.mode, problems=tuple(results))
    write_reports(report, stdout_format, files, args.gradescope_visibility)
    if stdout_format == "text" and len(results) > 1:
        print(f"{sum(r.passed for r in results)} of {len(results)} problems passed.")
    broken = [result.problem for result in results if result.fault == "grader"]
    if broken:  # not a verdict on the learner: the course or the machine could not grade
        print(f"grade: error: the grader could not grade {', '.join(broken)} (see why)", file=sys.stderr)
        return 2
    return 0 if report.passed else 1
