"""The `grade` command: `grade list`, `grade hint ID`, and `grade ID... | --all`."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path

from grader import progress
from grader.cases import SECRET_ENV
from grader.errors import GraderError, UsageError
from grader.grading import Grader
from grader.hints import load_hints
from grader.isolation import Limits, describe_size
from grader.problems import Course, Problem, find_course
from grader.report import FORMATS, render
from grader.report.plain_text import render_problem
from grader.results import GradeReport, ProblemResult, Status
from grader.secret import take_secret

USAGE = """\
grade list [--root DIR]
       grade hint ID [--level N] [--root DIR]
       grade ID... | --all [--root DIR] [--submission FILE] [--format text|json] [--timeout SECONDS]
                         [--memory-limit SIZE]"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message}\nusage: {USAGE}")


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds: {text!r}")
    return value


_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def _size(text: str) -> int | None:
    """Parses a memory size: 4G, 4GiB, 512M, 1.5g, 1000000 (bytes); "none" for no limit."""
    cleaned = text.strip().lower().removesuffix("ib").removesuffix("b")
    if cleaned == "none":
        return None
    number, unit = cleaned.rstrip("kmgt"), cleaned[len(cleaned.rstrip("kmgt")) :]
    try:
        value = float(number) * _UNITS[unit]
    except (ValueError, KeyError):
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (try 4G, 512M or none)") from None
    if value < 256 << 20:
        raise argparse.ArgumentTypeError(f"{text!r} is too small to start JAX: give at least 256M")
    return int(value)


def _root_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root", metavar="DIR", type=Path, help="a learner checkout to grade (default: this one)"
    )


def _grade_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="grade",
        usage=USAGE,
        description="Grade mixed-precision exercises. Practice cases by default; hidden cases when "
        f"${SECRET_ENV} is set. Exit status: 0 all passed, 1 something failed, 2 the command was wrong.",
    )
    parser.add_argument("ids", nargs="*", metavar="ID", help="problem ids (see `grade list`)")
    parser.add_argument("--all", action="store_true", help="grade every problem")
    _root_option(parser)
    parser.add_argument("--submission", metavar="FILE", type=Path, help="grade this file instead of the stub")
    parser.add_argument("--format", choices=FORMATS, default="text", help="report format (default: text)")
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=_positive,
        default=Limits.timeout,
        help=f"wall-clock limit per case (default: {Limits.timeout:g})",
    )
    parser.add_argument(
        "--memory-limit",
        metavar="SIZE",
        type=_size,
        default=Limits.memory_bytes,
        help=f"memory limit of each submission's process, e.g. 4G, 512M or none (default: "
        f"{describe_size(Limits.memory_bytes)})",
    )
    return parser


def _learner_root(course: Course, root: Path | None) -> Path:
    if root is None:
        return course.root
    if not (root / "problems").is_dir():
        raise UsageError(f"--root {root}: no problems/ folder there")
    return root


def _color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def _hint_footer(problem: Problem, root: Path) -> str:
    try:
        total = len(load_hints(problem))
    except GraderError:
        return ""
    shown = progress.hints_shown(root, problem)
    if total == 0 or shown >= total:
        return ""
    return f"  Stuck? `grade hint {problem.id}` shows hint {shown + 1} of {total}."


def _missing_stub(problem: Problem, path: Path) -> ProblemResult:
    return ProblemResult(
        problem=problem.id,
        title=problem.title,
        status=Status.ERROR,
        submission=str(path),
        message=f"no submission file at {path}",
        rtol=problem.tolerance.rtol,
        atol=problem.tolerance.atol,
    )


def _grade(argv: list[str]) -> int:
    args = _grade_parser().parse_args(argv)
    course = find_course()
    if args.all and args.ids:
        raise UsageError("give problem ids or --all, not both")
    if not args.all and not args.ids:
        raise UsageError(f"name a problem to grade, or --all (problems: {', '.join(course.problem_ids())})")
    problems = course.problems() if args.all else [course.problem(problem_id) for problem_id in args.ids]
    if args.submission and len(problems) != 1:
        raise UsageError("--submission grades one file, so give exactly one problem id")
    root = _learner_root(course, args.root)
    submissions = {p.id: args.submission or root / "problems" / p.id / "stub.py" for p in problems}
    if not args.all:
        for path in submissions.values():
            if not path.is_file():
                raise UsageError(f"no submission file at {path}")

    limits = Limits(timeout=args.timeout, memory_bytes=args.memory_limit)
    grader = Grader(course, secret=take_secret(), limits=limits)
    results = []
    for problem in problems:
        path = submissions[problem.id]
        result = grader.grade_file(problem, path) if path.is_file() else _missing_stub(problem, path)
        results.append(result)
        if args.submission is None:
            progress.record_result(root, result, path, grader.mode)
        if args.format == "text":
            block = render_problem(result, grader.mode, color=_color())
            footer = "" if result.passed or grader.secret else _hint_footer(problem, root)
            print(block + ("\n" + footer if footer else "") + "\n", flush=True)
    report = GradeReport(mode=grader.mode, problems=tuple(results))
    if args.format != "text":
        sys.stdout.write(render(report, args.format))
    elif len(results) > 1:
        print(f"{sum(r.passed for r in results)} of {len(results)} problems passed.")
    return 0 if report.passed else 1


def _list(argv: list[str]) -> int:
    parser = _Parser(prog="grade list", usage=USAGE, description="List the problems and their status here.")
    _root_option(parser)
    args = parser.parse_args(argv)
    course = find_course()
    root = _learner_root(course, args.root)
    problems = course.problems()
    statuses = {problem.id: progress.status(root, problem) for problem in problems}
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
    parser = _Parser(prog="grade hint", usage=USAGE, description="Show the next hint for a problem.")
    parser.add_argument("id", metavar="ID")
    parser.add_argument("--level", type=int, metavar="N", help="show hint N (default: the next one)")
    _root_option(parser)
    args = parser.parse_args(argv)
    course = find_course()
    problem = course.problem(args.id)
    root = _learner_root(course, args.root)
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


COMMANDS = {"list": _list, "hint": _hint}


def main(argv: list[str] | None = None) -> int:
    """Runs the command line and returns the exit status: 0 passed, 1 failed or errored, 2 usage error."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if argv and argv[0] in COMMANDS:
            return COMMANDS[argv[0]](argv[1:])
        return _grade(argv)
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
