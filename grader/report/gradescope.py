"""The Gradescope report: the results.json of Gradescope's autograder specification, one test per problem."""

from __future__ import annotations

import json
from typing import Any

from grader.report.plain_text import render_problem
from grader.results import GradeReport, ProblemResult

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
_WHEN_SHOWN = {
    "hidden": "Per-problem results are hidden.",
    "after_due_date": "Per-problem results appear after the due date.",
    "after_published": "Per-problem results appear when the grades are published.",
}


def _visibility(mode: str, hidden_visibility: str) -> str:
    return hidden_visibility if mode == "hidden" else "visible"


def _summary(report: GradeReport, visibility: str) -> str:
    """The submission-wide output: a line per problem, unless the problems' results are not shown yet."""
    head = (
        f"Graded {len(report.problems)} problem(s) on {report.mode} cases: "
        f"{report.score:g} of {report.points:g} points."
    )
    if report.sandbox is not None:
        head += f"\nSandbox: {report.sandbox.describe()}."
    if visibility != "visible":
        return f"{head}\n{_WHEN_SHOWN[visibility]}\n"
    lines = [f"{result.problem}: {result.status} - {result.message}" for result in report.problems]
    return "\n".join([head, *lines]) + "\n"


def _test(number: int, result: ProblemResult, mode: str, visibility: str) -> dict[str, Any]:
    test: dict[str, Any] = {
        "name": f"{result.problem}: {result.title}",
        "number": str(number),
        "score": result.score,
        "max_score": result.points,
        "status": "passed" if result.passed else "failed",
        "output": render_problem(result, mode, color=False),
        "output_format": "text",
        "visibility": visibility,
        "tags": [result.problem, str(result.status)],
    }
    if result.pitfall:
        test["extra_data"] = {"pitfall": result.pitfall.to_dict()}
    return test


def render_gradescope(report: GradeReport, hidden_visibility: str = "after_due_date") -> str:
    """Returns results.json; in hidden mode the per-problem tests get `hidden_visibility`."""
    if hidden_visibility not in VISIBILITIES:
        choices = ", ".join(VISIBILITIES)
        raise ValueError(f"hidden_visibility must be one of {choices}, not {hidden_visibility!r}")
    visibility = _visibility(report.mode, hidden_visibility)
    document = {
        "score": report.score,
        "execution_time": round(sum(result.seconds for result in report.problems)),
        "output": _summary(report, visibility),
        "output_format": "text",
        "stdout_visibility": "hidden",
        "tests": [_test(i, result, report.mode, visibility) for i, result in enumerate(report.problems, 1)],
    }
    if visibility != "visible":
        document["visibility"] = visibility  # the whole result, score included, is held back as well
    return json.dumps(document, indent=2, allow_nan=False) + "\n"
