"""`grade batch ROSTER_DIR --out gradebook.csv`: every learner's checkout graded, one CSV row per problem.

Each subfolder of ROSTER_DIR is one learner's checkout with `problems/<id>/stub.py`. Learners are graded
in a pool of `jobs` threads, each learner in one child process for all problems (a fresh one after a
problem that kills it); whatever one learner's code or folder does is that learner's rows, never the
batch's end. The reference runs once per problem for the whole batch. A Markdown summary is written beside
the CSV. Learners' folder names are hostile input: rows carry them escaped to printable text (`learner_name`).
"""

from __future__ import annotations

import csv
import io
import os
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from grader.course.checkout import LearnerCheckout
from grader.course.problems import Course, Problem
from grader.errors import CourseError, UsageError
from grader.grading.grader import Grader
from grader.report.markdown import cell
from grader.results import ProblemResult, Status

COLUMNS = ("learner", "problem", "status", "score", "max_score", "pitfall", "message", "seconds")
_SHORT_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


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
    learners = sorted(p for p in roster.iterdir() if _is_learner(p))
    if not learners:
        raise UsageError(f"{roster} has no learner folders")
    return learners


def _is_learner(entry: Path) -> bool:
    """Whether a roster entry is a learner: a visible folder, or one that cannot even be looked at (grading
    it then says why, in that learner's rows)."""
    if entry.name.startswith("."):
        return False
    try:
        return entry.is_dir()
    except OSError:
        return True


def learner_name(learner: Path) -> str:
    """The learner's folder name as the gradebook shows it: printable text, one line. A byte that is not
    UTF-8 shows as `\\xNN`, a control or invisible character as `\\n`, `\\t`, `\\r` or `\\uNNNN`, and a
    backslash as two, so that distinct folders never share a name and none can forge a row or move a
    terminal's cursor."""
    text = os.fsencode(learner.name).decode("utf-8", "surrogateescape")
    return "".join("\\\\" if char == "\\" else char if char.isprintable() else _escape(char) for char in text)


def _printable(text: str) -> str:
    """Text for a gradebook cell from the grader or the OS, which may quote a learner's path: lines and tabs
    kept, any other character `learner_name` would escape escaped likewise (backslashes kept as they are)."""
    return "".join(char if char.isprintable() or char in "\n\t" else _escape(char) for char in text)


def _escape(char: str) -> str:
    """One character as a backslash escape (see `learner_name`)."""
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # how Python decodes a byte of a file name that is not UTF-8
        return f"\\x{code - 0xDC00:02x}"
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _row(learner: str, problem: Problem, status: Status, message: str = "") -> Row:
    return Row(learner, problem.id, status, 0.0, problem.points, message=_printable(message))


# What a batch hands on, besides the rows, of each graded result: (learner's printable name, result, file).
OnResult = Callable[[str, ProblemResult, Path], None]


def grade_learner(
    grader: Grader, problems: list[Problem], learner: Path, on_result: OnResult | None = None
) -> list[Row]:
    """Grades one learner on every problem, in one child process for all of them; every outcome is a row:
    a stub the OS will not let the grader read is the learner's `error`, the grader's own failure (the course
    cannot grade, or a bug) a `grader_error`. `on_result` gets each graded result with its file."""
    name = learner_name(learner)
    rows: dict[str, Row] = {}
    present: list[tuple[Problem, Path]] = []
    try:
        checkout = LearnerCheckout(learner)
        for problem in problems:
            if checkout.missing(problem):
                rows[problem.id] = _row(name, problem, Status.MISSING, f"no file {checkout.stub(problem)}")
            elif unreadable := _unreadable(checkout, problem):
                rows[problem.id] = _row(name, problem, Status.ERROR, unreadable)
            else:
                present.append((problem, checkout.stub(problem)))
        files = {problem.id: path for problem, path in present}
        handed = (lambda result: on_result(name, result, files[result.problem])) if on_result else None
        for result in grader.grade_files(present, on_result=handed, root=learner) if present else []:
            rows[result.problem] = Row(
                learner=name,
                problem=result.problem,
                status=Status.GRADER_ERROR if result.fault == "grader" else result.status,
                score=result.score,
                max_score=result.points,
                pitfall=result.pitfall.name if result.pitfall else "",
                message=_printable(result.message),
                seconds=round(result.seconds, 3),
            )
    except Exception as exc:  # whatever it was, the batch goes on
        status, reason = _failure(exc, learner)
        rows |= {p.id: _row(name, p, status, reason) for p in problems if p.id not in rows}
    return [rows[problem.id] for problem in problems]


def _unreadable(checkout: LearnerCheckout, problem: Problem) -> str | None:
    """Why the OS will not even look at a present stub (a name too long, a linked or locked folder on the way
    to it), or None. No link is followed here: what a stub is, a link included, grading judges."""
    stub = checkout.stub(problem)
    try:
        os.lstat(stub)
    except OSError as exc:
        return f"{stub.relative_to(checkout.root)} cannot be read: {exc.strerror or exc}"
    return None


def _failure(exc: Exception, learner: Path) -> tuple[Status, str]:
    """The status and reason of the rows a failure left ungraded: the learner's `error` when the OS refused
    a file of their folder, else the grader's."""
    if isinstance(exc, OSError) and (file := _file_of(exc, learner)) is not None:
        return Status.ERROR, f"{file} cannot be read: {exc.strerror or exc}"
    if isinstance(exc, CourseError):
        return Status.GRADER_ERROR, str(exc).partition("\n")[0]
    return Status.GRADER_ERROR, f"internal error: {type(exc).__name__}: {exc}"


def _file_of(exc: OSError, learner: Path) -> str | None:
    """The file of the learner's folder that `exc` is about, relative to that folder; None when it is about
    none of theirs (then it is the grader's own failure)."""
    root = os.path.abspath(learner)
    for name in (exc.filename, exc.filename2):
        if isinstance(name, (str, bytes)):
            path = os.path.abspath(os.fsdecode(name))
            if os.path.commonpath([root, path]) == root:
                return os.path.relpath(path, root)
    return None


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
    on_result: OnResult | None = None,
) -> list[Row]:
    """Grades every learner (of `shard`, K of N, if given) on every problem and returns the rows in (learner,
    course order); `on_result` gets each graded result (from the pool's threads)."""
    learners = shard_of(learners_in(roster), shard)
    problems = course.problems()
    total = len(learners) * len(problems)
    grader.prepare(problems)  # the references once, before learners run side by side
    rows: list[Row] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(grade_learner, grader, problems, learner, on_result) for learner in learners]
        for future in as_completed(futures):
            for row in future.result():
                rows.append(row)
                if on_row:
                    on_row(len(rows), total, row)
    names = [learner_name(learner) for learner in learners]
    return in_order(rows, names, [problem.id for problem in problems])


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
