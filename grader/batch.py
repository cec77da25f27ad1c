"""`grade batch ROSTER_DIR --out gradebook.csv`: every learner's checkout graded, one CSV row per problem.

Each subfolder of ROSTER_DIR is one learner's checkout with `problems/<id>/stub.py`. Learners are graded
in a pool of `jobs` threads, each learner in one child process for all problems (a fresh one after a
problem that kills it); whatever one learner's code does is that learner's rows, never the batch's end.
The reference runs once per problem for the whole batch. A Markdown summary is written beside the CSV.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from grader.checkout import LearnerCheckout
from grader.errors import CourseError, UsageError
from grader.grading import Grader
from grader.problems import Course, Problem
from grader.report.markdown import cell
from grader.results import Status

COLUMNS = ("learner", "problem", "status", "score", "max_score", "pitfall", "message", "seconds")


@dataclass(frozen=True)
class Row:
    learner: str
    problem: str
    status: Status
    score: float
    max_score: float
    pitfall: str = ""
    message: str = ""
    seconds: float = 0.0


def learners_in(roster: Path) -> list[Path]:
    """Returns the learners' checkouts: the visible subfolders of the roster, sorted by name."""
    if not roster.is_dir():
        raise UsageError(f"{roster} is not a folder of learner checkouts")
    learners = sorted(p for p in roster.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not learners:
        raise UsageError(f"{roster} has no learner folders")
    return learners


def _row(learner: Path, problem: Problem, status: Status, message: str = "") -> Row:
    return Row(learner.name, problem.id, status, 0.0, problem.points, message=message)


def grade_learner(grader: Grader, problems: list[Problem], learner: Path) -> list[Row]:
    """Grades one learner on every problem, in one child process for all of them; every outcome, the
    grader's own failure included, is a row."""
    checkout = LearnerCheckout(learner)
    present = [(problem, checkout.stub(problem)) for problem in problems if not checkout.missing(problem)]
    rows = {
        problem.id: _row(learner, problem, Status.MISSING, f"no file {checkout.stub(problem)}")
        for problem in problems
        if checkout.missing(problem)
    }
    try:
        for result in grader.grade_files(present) if present else []:
            rows[result.problem] = Row(
                learner=learner.name,
                problem=result.problem,
                status=result.status,
                score=result.score,
                max_score=result.points,
                pitfall=result.pitfall.name if result.pitfall else "",
                message=result.message,
                seconds=round(result.seconds, 3),
            )
    except Exception as exc:  # the course cannot grade, or a bug of the grader's: the batch goes on
        failed = f"internal error: {type(exc).__name__}: {exc}"
        if isinstance(exc, CourseError):
            failed = str(exc).splitlines()[0]
        rows |= {p.id: _row(learner, p, Status.GRADER_ERROR, failed) for p, _ in present if p.id not in rows}
    return [rows[problem.id] for problem in problems]


def shard_of(learners: list[Path], shard: tuple[int, int] | None) -> list[Path]:
    """The learners of shard K of N: every N-th learner of the sorted roster from the K-th on, so that the
    shards differ in size by one at most and every learner is in exactly one."""
    if shard is None:
        return learners
    number, count = shard
    return learners[number - 1 :: count]


def grade_roster(
    course: Course,
    roster: Path,
    grader: Grader,
    jobs: int = 1,
    on_row: Callable[[int, int, Row], None] | None = None,
    shard: tuple[int, int] | None = None,
) -> list[Row]:
    """Grades every learner (of `shard`, K of N, if given) on every problem and returns the rows in (learner,
    course order)."""
    learners = shard_of(learners_in(roster), shard)
    problems = course.problems()
    total = len(learners) * len(problems)
    grader.prepare(problems)  # the references once, before learners run side by side
    rows: list[Row] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(grade_learner, grader, problems, learner) for learner in learners]
        for future in as_completed(futures):
            for row in future.result():
                rows.append(row)
                if on_row:
                    on_row(len(rows), total, row)
    return in_order(rows, [learner.name for learner in learners], [problem.id for problem in problems])


def in_order(rows: list[Row], learners: list[str], problems: list[str]) -> list[Row]:
    """The rows by learner (in roster order), then problem (in course order): a gradebook's order."""
    order = {learner: i for i, learner in enumerate(learners)}
    position = {problem: i for i, problem in enumerate(problems)}
    return sorted(rows, key=lambda row: (order[row.learner], position[row.problem]))


def _cell(value: object) -> object:
    """Keeps spreadsheet programs from reading a text cell as a formula."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def gradebook_csv(rows: list[Row]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([_cell(getattr(row, column)) for column in COLUMNS])
    return buffer.getvalue()


def summary_markdown(rows: list[Row], mode: str) -> str:
    """Returns the batch summary: pass rate per problem, the commonest named pitfalls, learners' totals."""
    problems = list(dict.fromkeys(row.problem for row in rows))
    learners = list(dict.fromkeys(row.learner for row in rows))
    lines = [
        f"# Gradebook summary ({mode} cases)",
        "",
        f"{len(learners)} learners, {len(problems)} problems.",
        "",
        "| problem | passed | failed | errors | missing | pass rate | commonest named pitfalls |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for problem in problems:
        mine = [row for row in rows if row.problem == problem]
        counts = Counter(row.status for row in mine)
        pitfalls = Counter(row.pitfall for row in mine if row.pitfall).most_common(3)
        named = ", ".join(f"`{name}` ({count})" for name, count in pitfalls) or "none"
        rate = counts["pass"] / len(mine)
        errors = counts["error"] + counts[Status.GRADER_ERROR]
        lines.append(
            f"| {problem} | {counts['pass']} | {counts['fail']} | {errors} | {counts[Status.MISSING]} "
            f"| {rate:.0%} | {named} |"
        )
    lines += ["", "| learner | score | out of |", "|---|---:|---:|"]
    for learner in learners:
        mine = [row for row in rows if row.learner == learner]
        lines.append(
            f"| {cell(learner)} | {sum(r.score for r in mine):g} | {sum(r.max_score for r in mine):g} |"
        )
    broken = [row for row in rows if row.status is Status.GRADER_ERROR]
    if broken:
        lines += ["", "**The grader could not grade these (not the learners' fault):**", ""]
        lines += [f"- {cell(row.learner)} / {row.problem}: {cell(row.message)}" for row in broken]
    return "\n".join(lines) + "\n"
