"""Writing a grading report in one of the supported formats."""

from __future__ import annotations

from grader.report.json_document import render_json
from grader.report.plain_text import render_text
from grader.results import GradeReport

FORMATS = ("text", "json")


def render(report: GradeReport, fmt: str, color: bool = False) -> str:
    """Returns the report as text for stdout in format `fmt` (one of FORMATS)."""
    if fmt == "json":
        return render_json(report)
    return render_text(report, color=color)


__all__ = ["FORMATS", "render"]
