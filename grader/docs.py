"""The parts of the README made from the problems' manifests (`problem.toml`): the problem table, kept between
two marker lines and rewritten by `grade docs`; the tests check that the README matches."""

from __future__ import annotations

from pathlib import Path

from grader.errors import CourseError
from grader.problems import Course

START = (
    "<!-- problem table: made by `grade docs` from each problems/<id>/problem.toml; do not edit by hand -->"
)
END = "<!-- end of problem table -->"


def problem_table(course: Course) -> str:
    """The README's problem table: id, the function to write, and the manifest's `teaches` line."""
    rows = ["| id | what you write | what it teaches |", "|---|---|---|"]
    rows += [f"| `{p.id}` | `{p.signature}` | {p.teaches} |" for p in course.problems()]
    return "\n".join(rows)


def with_problem_table(readme: str, course: Course) -> str:
    """`readme` with the text between the markers replaced by the current problem table."""
    if START not in readme or END not in readme:
        raise CourseError(f"the README has no problem table markers ({START} ... {END})")
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{problem_table(course)}\n{END}{tail}"


def update_readme(course: Course, check: bool = False) -> bool:
    """Rewrites the course README's problem table (with `check`, only compares); True when it was current."""
    path: Path = course.root / "README.md"
    readme = path.read_text(encoding="utf-8")
    current = with_problem_table(readme, course)
    if current != readme and not check:
        path.write_text(current, encoding="utf-8")
    return current == readme
