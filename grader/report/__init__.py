"""Writing a grading report in one of the supported formats."""

from __future__ import annotations

from grader.report.github import append_step_summary, render_github
from grader.report.gradescope import render_gradescope
from grader.report.json_document import render_json
from grader.report.junit import render_junit
from grader.report.plain_text import render_text
from grader.results import GradeReport

FORMATS = ("text", "json", "junit", "gradescope", "github")


def render(
    report: GradeReport, fmt: str, color: bool = False, hidden_visibility: str = "after_due_date"
) -> str:
    """Returns the report as text for stdout in format `fmt` (one of FORMATS).

    `hidden_visibility` is the Gradescope visibility of hidden-mode results. For "github" the Markdown
    summary is also appended to $GITHUB_STEP_SUMMARY when that is set.
    """
    if fmt == "json":
        return render_json(report)
    if fmt == "junit":
        return render_junit(report)
    if fmt == "gradescope":
        return render_gradescope(report, hidden_visibility)
    if fmt == "github":
        append_step_summary(report)
        return render_github(report)
    return render_text(report, color=color)


__all__ = ["FORMATS", "render"]
