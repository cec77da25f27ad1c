"""What a problem notebook's last cell calls: grade the function the notebook defines, on the practice cases,
and show the report `grade` prints (HTML where the front end shows HTML, text otherwise).

    from grader.notebook import grade_here
    grade_here("loss_scaling", train_with_loss_scaling)
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader import grade_function
from grader.command.grade import hint_footer
from grader.course.problems import Course, find_course
from grader.errors import UsageError
from grader.report.html import render_problem_html
from grader.report.plain_text import render_problem
from grader.report.plot import series_png
from grader.results import ProblemResult
from grader.settings import Settings

MODE = "practice"  # grade_function grades nothing else: it runs the function in the notebook's process


@dataclass(frozen=True)
class NotebookReport:
    """A graded problem as a notebook shows it: `text` is what `grade ID` prints (with the hint line),
    `html` the same report for front ends that show HTML."""

    result: ProblemResult
    text: str
    html: str

    def __repr__(self) -> str:
        return self.text

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text)

    def _repr_html_(self) -> str:
        return self.html


def installed_from(direct_url: str | None) -> Path | None:
    """Returns the local folder that a PEP 610 `direct_url.json` record (which pip writes for an install
    from a folder or a URL) names, or None for a URL that is not a file's."""
    try:
        url = json.loads(direct_url or "{}").get("url", "")
    except (ValueError, AttributeError):
        return None
    if not isinstance(url, str) or not url.startswith("file://"):
        return None
    return Path(urllib.request.url2pathname(urllib.parse.urlsplit(url).path))


def _install_records() -> list[str | None]:
    """The direct_url.json records of the installed distributions that provide the `grader` package."""
    records = []
    for name in importlib.metadata.packages_distributions().get("grader", []):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            records.append(importlib.metadata.distribution(name).read_text("direct_url.json"))
    return records


def notebook_course() -> Course:
    """Returns the course a notebook belongs to: the one `grade` finds ($GRADE_COURSE_ROOT, the working
    folder or one above it, as for a notebook in the course's notebooks/ folder), else the folder the
    grader was pip-installed from (where the set-up cell cloned the course, as in Colab)."""
    try:
        return find_course(course_root=Settings.from_environment().course_root)
    except UsageError:
        folders = [folder for folder in map(installed_from, _install_records()) if folder is not None]
        if not folders:
            raise
        return find_course(folders[0])


def grade_here(problem_id: str, fn: Callable) -> NotebookReport:
    """Grades `fn` on the practice cases of `problem_id`, in this process, and returns the report: the text
    of `grade ID` and the hint line, and the same as HTML with, for a failed multi-step output, a plot of
    the learner's series against the reference's (with matplotlib installed)."""
    course = notebook_course()
    result = grade_function(problem_id, fn, course_root=course.root)
    footer = "" if result.passed else hint_footer(course.problem(problem_id), course.root)
    text = render_problem(result, MODE) + (f"\n{footer}" if footer else "")
    return NotebookReport(result, text, render_problem_html(result, MODE, footer, series_png(result)))
