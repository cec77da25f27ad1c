"""The `grade` subcommands about the course rather than one learner's grade: list, hint, watch, export,
prepare, and for problem authors check, new and docs (batch and merge are in grader/command/batch.py)."""

from __future__ import annotations

from pathlib import Path

from grader.authoring.check import DEFAULT_SECRETS, check_problems
from grader.authoring.check_files import TODO_MARKER, Verdict
from grader.authoring.docs import update_docs
from grader.authoring.margins import FILE as MARGINS_FILE
from grader.authoring.margins import record_check
from grader.authoring.scaffold import new_problem
from grader.classroom.export import export_course
from grader.classroom.watch import stub_changes, watch_loop
from grader.command.batch import batch_command, merge_command
from grader.command.grade import learner_block
from grader.command.insights import from_group_options, insights_command, pitfall_from_group
from grader.command.notebooks import INSTALL_HELP, notebooks_command
from grader.command.options import (
    USAGE,
    Parser,
    course_and_settings,
    learner_checkout,
    limit_options,
    make_grader,
    root_option,
)
from grader.course import progress
from grader.course.hints import load_hints
from grader.course.problems import Problem
from grader.course.secret import take_secret
from grader.errors import UsageError
from grader.expected.prepare import prepare_course
from grader.results import ProblemResult
from grader.running.limits import Limits


def _watch(argv: list[str]) -> int:
    parser = Parser(
        prog="grade watch",
        usage=USAGE,
        description="Re-grade a problem's practice cases every time its stub is saved, until Ctrl-C; after a "
        "pass, move on to the next unfinished problem.",
    )
    parser.add_argument(
        "id", nargs="?", metavar="ID", help="the problem to start with (default: the first unfinished)"
    )
    root_option(parser)
    limit_options(parser)
    args = parser.parse_args(argv)
    course, settings = course_and_settings()
    checkout = learner_checkout(course, args.root)
    grader = make_grader(course, args, settings, practice=True)
    problems = course.problems()

    def passed(problem: Problem) -> bool:
        return progress.status(checkout, problem) == "passed"

    def grade(problem: Problem) -> ProblemResult:
        stub = checkout.stub(problem)
        result = (
            checkout.missing_result(problem)
            if checkout.missing(problem)
            else grader.grade_file(problem, stub, root=checkout.root)
        )
        progress.record_result(checkout.root, result, stub, grader.mode)
        print(learner_block(result, problem, checkout.root, grader), flush=True)
        return result

    first = course.problem(args.id) if args.id else next((p for p in problems if not passed(p)), None)
    if first is None:
        print("Every problem passed. Well done.")
        return 0
    return watch_loop(problems, checkout, first, grade, print, stub_changes(checkout), passed)


def _export(argv: list[str]) -> int:
    parser = Parser(prog="grade export", usage=USAGE, description="Write a learner copy of the course.")
    parser.add_argument("dest", metavar="DEST", type=Path, help="an absent or empty folder")
    parser.add_argument("--notebook-install", metavar="SPEC", default="..", help=INSTALL_HELP)
    args = parser.parse_args(argv)
    course, settings = course_and_settings()
    limits = Limits(settings=settings)
    for line in export_course(course, args.dest, limits, notebook_install=args.notebook_install):
        print(line, flush=True)
    print(
        f"Learner copy written to {args.dest}: problems, notebooks, grader, pyproject.toml, README and "
        "docs; no solutions and no pitfall code. There: `pip install -e .` then `grade <id>` grades the "
        "practice cases."
    )
    return 0


def _prepare(argv: list[str]) -> int:
    parser = Parser(
        prog="grade prepare",
        usage=USAGE,
        description="Compute now what grading reads from the caches: the practice outputs of the reference "
        "and the pitfalls, and with $GRADE_SECRET the reference's outputs on the hidden cases, kept where "
        "only you can read them. An autograder image's set-up step (ci/gradescope/setup.sh).",
    )
    parser.parse_args(argv)
    course, settings = course_and_settings()
    for line in prepare_course(course, take_secret(), Limits(settings=settings)):
        print(line, flush=True)
    return 0


def _list(argv: list[str]) -> int:
    parser = Parser(prog="grade list", usage=USAGE, description="List the problems and their status here.")
    root_option(parser)
    args = parser.parse_args(argv)
    course, _ = course_and_settings()
    checkout = learner_checkout(course, args.root)
    problems = course.problems()
    statuses = {problem.id: progress.status(checkout, problem) for problem in problems}
    width = max(len(problem.id) for problem in problems)
    title_width = max(len(problem.title) for problem in problems)
    print(f"{'problem':<{width}}  {'title':<{title_width}}  status")
    for problem in problems:
        print(f"{problem.id:<{width}}  {problem.title:<{title_width}}  {statuses[problem.id]}")
    passed = sum(state == "passed" for state in statuses.values())
    print(f"\n{passed} of {len(problems)} passed.")
    print("Read problems/<id>/README.md, edit problems/<id>/stub.py, then run `grade <id>`.")
    return 0


def _hint(argv: list[str]) -> int:
    parser = Parser(prog="grade hint", usage=USAGE, description="Show the next hint for a problem.")
    parser.add_argument("id", metavar="ID")
    parser.add_argument("--level", type=int, metavar="N", help="show hint N (default: the next one)")
    root_option(parser)
    args = parser.parse_args(argv)
    course, _ = course_and_settings()
    problem = course.problem(args.id)
    root = learner_checkout(course, args.root).root
    hints = load_hints(problem)
    level = args.level or min(progress.hints_shown(root, problem) + 1, len(hints))
    if not 1 <= level <= len(hints):
        raise UsageError(f"{problem.id} has hints 1 to {len(hints)}")
    progress.record_hint(root, problem, level)
    print(f"{problem.id}, hint {level} of {len(hints)}:\n")
    print(hints[level - 1])
    if level < len(hints):
        print(f"\n(`grade hint {problem.id}` again for hint {level + 1}.)")
    return 0


def _check(argv: list[str]) -> int:
    parser = Parser(
        prog="grade check",
        usage=USAGE,
        description="Check that problems are sound (for problem authors): complete files, the stub fails as "
        "not implemented, the reference passes, every pitfall fails far from the reference and is named, "
        "every correct variant passes. Exit status 0 when every problem checked is sound, 1 otherwise.",
    )
    parser.add_argument("ids", nargs="*", metavar="ID", help="problem ids (drafts included)")
    parser.add_argument("--all", action="store_true", help="check every problem, drafts included")
    parser.add_argument(
        "--secrets",
        type=int,
        default=len(DEFAULT_SECRETS),
        metavar="N",
        help=f"how many secrets' hidden cases to measure on (default {len(DEFAULT_SECRETS)})",
    )
    parser.add_argument("--families", action="store_true", help="also print the ratios per case family")
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="children that run the course's files side by side (default: one per core, 2 to 8, as many as "
        "the memory available holds at each child's memory limit)",
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help="write what was measured on this platform to problems/<id>/margins.toml (then `grade docs`)",
    )
    args = parser.parse_args(argv)
    if args.all == bool(args.ids):
        raise UsageError("give problem ids or --all")
    if args.secrets < 1:
        raise UsageError("--secrets must be at least 1")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    course, settings = course_and_settings()
    problems = course.problems(drafts=True) if args.all else [course.problem(i) for i in args.ids]
    secrets = [*DEFAULT_SECRETS, *(f"check-{n}" for n in range(len(DEFAULT_SECRETS) + 1, args.secrets + 1))]
    checks = check_problems(course, problems, secrets[: args.secrets], settings=settings, jobs=args.jobs)
    for check in checks:
        print(check.render(families=args.families) + "\n", flush=True)
        if args.record and check.table is not None:
            record_check(check.problem, check.findings, args.secrets)
            print(f"recorded in problems/{check.problem.id}/{MARGINS_FILE}; `grade docs` shows it\n")
    sound = sum(check.verdict is Verdict.OK for check in checks)
    print(f"{sound} of {len(checks)} problems sound.")
    return 0 if sound == len(checks) else 1


def _new(argv: list[str]) -> int:
    parser = Parser(
        prog="grade new",
        usage=USAGE,
        description="Write the skeleton of a new problem; or, with --pitfall NAME --from-group N --gradebook "
        "GRADEBOOK.csv, begin pitfall NAME of problem ID from the representative file of group N of a class "
        "(as `grade insights` numbers the groups).",
    )
    parser.add_argument("id", metavar="ID", help="the new problem's id (lower case, digits, _)")
    from_group_options(parser)
    args = parser.parse_args(argv)
    course, _ = course_and_settings()
    if args.pitfall or args.from_group is not None:
        for path in pitfall_from_group(course, args):
            print(f"wrote {path.relative_to(course.root)}")
        print(
            f"\nFill in every {TODO_MARKER}, then `grade docs` and `grade check {args.id}` "
            "(see CONTRIBUTING.md)."
        )
        return 0
    for path in new_problem(course, args.id):
        print(f"wrote {path.relative_to(course.root)}")
    print(
        f"\n{args.id} is a draft: fill in every {TODO_MARKER}, run `grade check {args.id}` until it is "
        "sound, then remove `draft = true` from its problem.toml (see CONTRIBUTING.md)."
    )
    return 0


def _docs(argv: list[str]) -> int:
    parser = Parser(
        prog="grade docs",
        usage=USAGE,
        description="Rewrite the tables made from the problems' manifests (problem.toml): the README's "
        "problem table and each statement's pitfall table; with --check, only say which are out of date "
        "(exit status 1 when one is).",
    )
    parser.add_argument("--check", action="store_true", help="compare only; write nothing")
    args = parser.parse_args(argv)
    course, _ = course_and_settings()
    stale = [path.relative_to(course.root) for path in update_docs(course, check=args.check)]
    for path in stale:
        print(f"{path}: its tables are out of date" if args.check else f"rewrote the tables of {path}")
    if args.check and stale:
        print("run `grade docs` to rewrite them from the manifests")
        return 1
    if not stale:
        print("every table made from the manifests is current")
    return 0


COMMANDS = {
    "list": _list,
    "hint": _hint,
    "export": _export,
    "batch": batch_command,
    "merge": merge_command,
    "prepare": _prepare,
    "watch": _watch,
    "check": _check,
    "new": _new,
    "docs": _docs,
    "notebooks": notebooks_command,
    "insights": insights_command,
}
