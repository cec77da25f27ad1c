"""The `grade` command: `grade ID... | --all`, `grade list`, `grade hint ID`, `grade export DEST`,
`grade batch ROSTER_DIR`, and for authors `grade check ID` and `grade new ID`."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import traceback
from pathlib import Path

from grader import batch, progress
from grader.cases import SECRET_ENV
from grader.check import DEFAULT_SECRETS, TODO_MARKER, Verdict, check_problems
from grader.errors import GraderError, UsageError
from grader.export import export_course
from grader.grading import Grader
from grader.hints import load_hints
from grader.limits import Limits, describe_size
from grader.problems import Course, Problem, find_course
from grader.report import FORMATS, write_file, write_reports
from grader.report.gradescope import VISIBILITIES
from grader.report.plain_text import render_problem
from grader.results import GradeReport, ProblemResult, Status
from grader.sandbox import check_sandbox_required
from grader.scaffold import new_problem
from grader.secret import take_secret
from grader.settings import REQUIRE_SANDBOX_ENV

USAGE = """\
grade list [--root DIR]
       grade hint ID [--level N] [--root DIR]
       grade ID... | --all [--root DIR] [--submission FILE] [--format FORMAT[=FILE]]... [--timeout SECONDS]
                         [--memory-limit SIZE] [--low-memory] [--require-sandbox]
                         [--gradescope-visibility VISIBILITY]
       grade export DEST
       grade batch ROSTER_DIR --out GRADEBOOK.csv [--jobs N] [--timeout SECONDS] [--memory-limit SIZE]
                   [--low-memory] [--require-sandbox]
       grade check ID... | --all [--secrets N] [--families]
       grade new ID
FORMAT is one of: """ + ", ".join(FORMATS)


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


def _format_spec(text: str) -> tuple[str, Path | None]:
    """Parses `--format FORMAT` or `--format FORMAT=FILE`."""
    fmt, _, path = text.partition("=")
    if fmt not in FORMATS:
        raise argparse.ArgumentTypeError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
    if _ and not path:
        raise argparse.ArgumentTypeError(f"--format {text}: name a file after '='")
    return fmt, Path(path) if path else None


def _destinations(specs: list[tuple[str, Path | None]] | None) -> tuple[str | None, dict[Path, str]]:
    """Returns the format for stdout (None: no report there) and the formats to write to files."""
    specs = specs or [("text", None)]
    to_stdout = [fmt for fmt, path in specs if path is None]
    if len(to_stdout) > 1:
        raise UsageError("only one --format can go to stdout; send the others to files: --format junit=FILE")
    files = {path: fmt for fmt, path in specs if path is not None}
    if len(files) < sum(path is not None for _, path in specs):
        raise UsageError("two --format options name the same file")
    return (to_stdout[0] if to_stdout else None), files


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
    parser.add_argument(
        "--format",
        action="append",
        type=_format_spec,
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
    _limit_options(parser)
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
        points=problem.points,
        function=problem.function,
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

    stdout_format, files = _destinations(args.format)
    grader = _grader(course, args)
    results: list[ProblemResult] = []
    ready = {p.id: _missing_stub(p, path) for p in problems if not (path := submissions[p.id]).is_file()}

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
                block = render_problem(done, grader.mode, color=_color())
                footer = "" if done.passed or grader.secret else _hint_footer(problem, root)
                print(block + ("\n" + footer if footer else "") + "\n", flush=True)
            elif sys.stderr.isatty():
                print(f"graded {problem.id}: {done.status}", file=sys.stderr, flush=True)

    show_in_order()
    todo = [(p, submissions[p.id]) for p in problems if p.id not in ready]
    if todo:
        grader.grade_files(todo, on_result=show_in_order)
    show_in_order()
    report = GradeReport(mode=grader.mode, problems=tuple(results))
    write_reports(report, stdout_format, files, args.gradescope_visibility)
    if stdout_format == "text" and len(results) > 1:
        print(f"{sum(r.passed for r in results)} of {len(results)} problems passed.")
    return 0 if report.passed else 1


def _grader(course: Course, args: argparse.Namespace) -> Grader:
    """The grader that the limit options (`_limit_options`) and $GRADE_SECRET ask for."""
    limits = Limits(timeout=args.timeout, memory_bytes=args.memory_limit)
    if args.require_sandbox:
        limits = dataclasses.replace(limits, require_sandbox=True)
    check_sandbox_required(limits)
    return Grader(course, secret=take_secret(), limits=limits, low_memory=args.low_memory)


def _limit_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--require-sandbox",
        action="store_true",
        help=f"grade nothing where neither Landlock nor $GRADE_SANDBOX protects the learner's code "
        f"(also ${REQUIRE_SANDBOX_ENV}=1)",
    )
    parser.add_argument(
        "--low-memory",
        action="store_true",
        help="run the reference before the learner's code, not beside it: one JAX process at a time",
    )
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


def _batch_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="grade batch",
        usage=USAGE,
        description="Grade every learner checkout in ROSTER_DIR on every problem; write a CSV gradebook "
        "and a Markdown summary beside it. Exit status 0 when every row was graded (whatever the "
        "learners' results), 2 when the course could not grade some row.",
    )
    parser.add_argument("roster", metavar="ROSTER_DIR", type=Path, help="one subfolder per learner")
    parser.add_argument("--out", metavar="GRADEBOOK.csv", type=Path, required=True, help="the CSV to write")
    parser.add_argument("--jobs", metavar="N", type=int, default=1, help="learners graded at once")
    _limit_options(parser)
    return parser


def _batch(argv: list[str]) -> int:
    args = _batch_parser().parse_args(argv)
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    course = find_course()
    grader = _grader(course, args)

    def show(done: int, total: int, row: batch.Row) -> None:
        print(
            f"[{done:>{len(str(total))}}/{total}] {row.learner}/{row.problem}: {row.status} "
            f"({row.seconds:.1f} s)",
            file=sys.stderr,
            flush=True,
        )

    rows = batch.grade_roster(course, args.roster, grader, jobs=args.jobs, on_row=show)
    summary_path = args.out.with_suffix(".md")
    write_file(args.out, batch.gradebook_csv(rows))
    write_file(summary_path, batch.summary_markdown(rows, grader.mode))
    passed = sum(row.status == "pass" for row in rows)
    print(f"{len(rows)} rows graded ({passed} passed): {args.out}, summary in {summary_path}")
    broken = [row for row in rows if row.status == batch.GRADER_ERROR]
    if broken:
        print(
            f"grade: error: {len(broken)} rows could not be graded by the course; see {summary_path}",
            file=sys.stderr,
        )
        return 2
    return 0


def _export(argv: list[str]) -> int:
    parser = _Parser(prog="grade export", usage=USAGE, description="Write a learner copy of the course.")
    parser.add_argument("dest", metavar="DEST", type=Path, help="an absent or empty folder")
    args = parser.parse_args(argv)
    course = find_course()
    for line in export_course(course, args.dest):
        print(line, flush=True)
    print(
        f"Learner copy written to {args.dest}: problems, grader, pyproject.toml and README; no solutions and "
        "no pitfall code. There: `pip install -e .` then `grade <id>` grades the practice cases."
    )
    return 0


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


def _check(argv: list[str]) -> int:
    parser = _Parser(
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
    args = parser.parse_args(argv)
    if args.all == bool(args.ids):
        raise UsageError("give problem ids or --all")
    if args.secrets < 1:
        raise UsageError("--secrets must be at least 1")
    course = find_course()
    problems = course.problems(drafts=True) if args.all else [course.problem(i) for i in args.ids]
    secrets = [*DEFAULT_SECRETS, *(f"check-{n}" for n in range(len(DEFAULT_SECRETS) + 1, args.secrets + 1))]
    checks = check_problems(course, problems, secrets[: args.secrets])
    for check in checks:
        print(check.render(families=args.families) + "\n", flush=True)
    sound = sum(check.verdict is Verdict.OK for check in checks)
    print(f"{sound} of {len(checks)} problems sound.")
    return 0 if sound == len(checks) else 1


def _new(argv: list[str]) -> int:
    parser = _Parser(prog="grade new", usage=USAGE, description="Write the skeleton of a new problem.")
    parser.add_argument("id", metavar="ID", help="the new problem's id (lower case, digits, _)")
    args = parser.parse_args(argv)
    course = find_course()
    for path in new_problem(course, args.id):
        print(f"wrote {path.relative_to(course.root)}")
    print(
        f"\n{args.id} is a draft: fill in every {TODO_MARKER}, run `grade check {args.id}` until it is "
        "sound, then remove `draft = true` from its problem.toml (see CONTRIBUTING.md)."
    )
    return 0


COMMANDS = {
    "list": _list,
    "hint": _hint,
    "export": _export,
    "batch": _batch,
    "check": _check,
    "new": _new,
}


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
