"""`grade batch` and `grade merge`: a class graded into one gradebook, on one runner or in shards."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.classroom import batch
from grader.classroom.shards import merge, parse_shard, write_record
from grader.command.options import USAGE, Parser, course_and_settings, limit_options, make_grader
from grader.errors import UsageError
from grader.report import write_file
from grader.results import Status


def batch_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="grade batch",
        usage=USAGE,
        description="Grade every learner checkout in ROSTER_DIR on every problem; write a CSV gradebook "
        "and a Markdown summary beside it. Exit status 0 when every row was graded (whatever the "
        "learners' results), 2 when the course could not grade some row.",
    )
    parser.add_argument("roster", metavar="ROSTER_DIR", type=Path, help="one subfolder per learner")
    parser.add_argument("--out", metavar="GRADEBOOK.csv", type=Path, required=True, help="the CSV to write")
    parser.add_argument("--jobs", metavar="N", type=int, default=1, help="learners graded at once")
    parser.add_argument(
        "--shard",
        metavar="K/N",
        type=parse_shard,
        help="grade only shard K of N (every N-th learner of the sorted roster); `grade merge` joins them",
    )
    limit_options(parser)
    return parser


def batch_command(argv: list[str]) -> int:
    args = batch_parser().parse_args(argv)
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    course, settings = course_and_settings()
    grader = make_grader(course, args, settings, profile="off")  # a gradebook has no room for profiles

    def show(done: int, total: int, row: batch.Row) -> None:
        print(
            f"[{done:>{len(str(total))}}/{total}] {row.learner}/{row.problem}: {row.status} "
            f"({row.seconds:.1f} s)",
            file=sys.stderr,
            flush=True,
        )

    rows = batch.grade_roster(course, args.roster, grader, jobs=args.jobs, on_row=show, shard=args.shard)
    if args.shard:
        roster = [batch.learner_name(learner) for learner in batch.learners_in(args.roster)]
        problems = [problem.id for problem in course.problems()]
        record = write_record(args.out, args.shard, roster, problems, grader.mode, rows)
        print(f"shard {args.shard[0]}/{args.shard[1]}: {record} is what `grade merge` reads")
    return _write_gradebook(args.out, rows, grader.mode, "graded")


def _write_gradebook(out: Path, rows: list[batch.Row], mode: str, how: str) -> int:
    """Writes the gradebook and its summary; the exit status: 2 when the course could not grade some row."""
    summary_path = out.with_suffix(".md")
    write_file(out, batch.gradebook_csv(rows))
    write_file(summary_path, batch.summary_markdown(rows, mode))
    passed = sum(row.status is Status.PASS for row in rows)
    print(f"{len(rows)} rows {how} ({passed} passed): {out}, summary in {summary_path}")
    broken = [row for row in rows if row.status is Status.GRADER_ERROR]
    if broken:
        print(
            f"grade: error: {len(broken)} rows could not be graded by the course; see {summary_path}",
            file=sys.stderr,
        )
        return 2
    return 0


def merge_command(argv: list[str]) -> int:
    parser = Parser(
        prog="grade merge",
        usage=USAGE,
        description="Join the gradebooks of every shard of `grade batch --shard K/N` into one gradebook and "
        "summary; refuses shards that overlap, are missing, or were graded differently.",
    )
    parser.add_argument("shards", nargs="+", metavar="SHARD.csv", type=Path, help="the shards' gradebooks")
    parser.add_argument("--out", metavar="GRADEBOOK.csv", type=Path, required=True, help="the CSV to write")
    args = parser.parse_args(argv)
    rows, mode = merge(args.shards)
    return _write_gradebook(args.out, rows, mode, f"merged from {len(args.shards)} shards")
