"""Progressive hints: `problems/<id>/hints.md`, one `## Hint N` section per level."""

from __future__ import annotations

import re

from grader.course.problems import Problem
from grader.errors import CourseError

_HEADING = re.compile(r"^## Hint \d+\s*$", re.MULTILINE)


def load_hints(problem: Problem) -> list[str]:
    """Returns the hint texts in order, most general first."""
    try:
        text = problem.hints_path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CourseError(f"{problem.id} has no hints ({exc})") from exc
    return [section.strip() for section in _HEADING.split(text)[1:] if section.strip()]
