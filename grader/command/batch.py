"""`grade batch` and `grade merge`: a class graded into one gradebook, on one runner or in shards."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.behaviours import BehaviourRecord
from grader.classroom import batch
from grader.classroom.behaviour_record import (
    BehaviourKeeper,
    merge_records,
    practice_facts,
    read_record,
    record_path,
    record_text,
    status_counts,
)
from grader.classroom.shards import merge, parse_shard, write_record
from grader.command.insights import write_insights
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
    insights_options(parser)
    parser.add_argument(
        "--profiles",
        action="store_true",
        help="trace each failing answer's dtypes on a practice case (a trace each: slower), so that the "
        "insights split groups where the dtypes depart from the reference's differently",
    )
    limit_options(parser)
    return parser


def insights_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--insights",
        action="store_true",
        help="also write what the class got wrong (failing submissions grouped by behaviour) as a page, "
        "GRADEBOOK.insights.html, linked from the summary; `grade insights GRADEBOOK.csv` does it later",
    )
    parser.add_argument("--insights-page", metavar="PAGE.html", type=Path, help=argparse.SUPPRESS)


def batch_command(argv: list[str]) -> int:
    args = batch_parser().parse_args(argv)
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    course, settings = course_and_settings()
    grader = make_grader(course, args, settings, profile="failing" if args.profiles else "off")
    keeper = BehaviourKeeper()  # each failing answer's practice outputs, for insights

    def show(done: int, total: int, row: batch.Row) -> None:
        print(
            f"[{done:>{len(str(total))}}/{total}] {row.learner}/{row.problem}: {row.status} "
            f"({row.seconds:.1f} s)",
            file=sys.stderr,
            flush=True,
        )

    rows = batch.grade_roster(
        course, args.roster, grader, jobs=args.jobs, on_row=show, shard=args.shard, on_result=keeper
    )
    behaviours = keeper.behaviours()
    failing = [p for p in course.problems() if any(b.problem == p.id for b in behaviours)]
    facts = practice_facts(course, failing, grader.limits)
    kept = BehaviourRecord(grader.mode, facts, status_counts(rows), behaviours)
    if args.shard:
        roster = [batch.learner_name(learner) for learner in batch.learners_in(args.roster)]
        problems = [problem.id for problem in course.problems()]
        record = write_record(args.out, args.shard, roster, problems, grader.mode, rows)
        print(f"shard {args.shard[0]}/{args.shard[1]}: {record} is what `grade merge` reads")
    return _write_gradebook(args.out, rows, grader.mode, "graded", kept, args)


def _write_gradebook(
    out: Path,
    rows: list[batch.Row],
    mode: str,
    how: str,
    record: BehaviourRecord | None,
    args: argparse.Namespace,
) -> int:
    """Writes the gradebook, its summary and its behaviour record (when there is one), and with
    `args.insights` the page of what the class got wrong; the exit status: 2 when the course could not grade
    some row."""
    summary_path = out.with_suffix(".md")
    summary = batch.summary_markdown(rows, mode)
    if record is not None:
        write_file(record_path(out), record_text(record))
        if args.insights:
            page, groups = write_insights(out, record, args.insights_page)
            summary += groups
            print(f"what the class got wrong: {page}")
    elif args.insights:
        print("no insights: a shard has no behaviour record (graded by an older grader)", file=sys.stderr)
    write_file(out, batch.gradebook_csv(rows))
    write_file(summary_path, summary)
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
    insights_options(parser)
    args = parser.parse_args(argv)
    rows, mode = merge(args.shards)
    kept = [record_path(shard) for shard in args.shards]
    record = merge_records([read_record(path) for path in kept]) if all(p.is_file() for p in kept) else None
    return _write_gradebook(args.out, rows, mode, f"merged from {len(args.shards)} shards", record, args)
