"""The GitHub Actions report: workflow-command annotations on the learner's file, and a job step summary."""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Iterator, Mapping
from pathlib import Path

from grader.report.markdown import cell, inline
from grader.report.plain_text import render_text
from grader.results import GradeReport, ProblemResult, Status

SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
GROUP_TITLE = "grade report"
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)', re.MULTILINE)
_SYNTAX_LINE = re.compile(r"\((?P<name>[^(),]+), line (?P<line>\d+)\)")
_PROFILE_PLACE = re.compile(r" at (?P<name>[^\s:]+):(?P<line>\d+)")  # "your matmul at stub.py:27 ran ..."


def escape_data(text: str) -> str:
    """Escapes the data of a workflow command (after its `::`)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escapes a property value of a workflow command (`key=value`)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, data: str = "", **properties: object) -> str:
    """Returns one workflow command line, `::name key=value,...::data`, escaped."""
    listed = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    return f"::{name}{' ' + listed if listed else ''}::{escape_data(data)}"


def _same_file(frame: str, submission: str) -> bool:
    if frame == submission:
        return True
    try:
        return Path(frame).resolve() == Path(submission).resolve()
    except (OSError, RuntimeError, ValueError):
        return False


def _traceback_line(result: ProblemResult) -> int | None:
    """The line of the deepest frame in the learner's file, from a case's traceback or the load failure's."""
    tracebacks = [case.traceback for case in result.cases if case.status is Status.ERROR and case.traceback]
    for text in [*tracebacks, result.detail]:
        lines = [int(m["line"]) for m in _FRAME.finditer(text) if _same_file(m["path"], result.submission)]
        if lines:
            return lines[-1]
    return None


def _syntax_error_line(result: ProblemResult) -> int | None:
    """The line a syntax error names in the problem's message: "... (stub.py, line 4)"."""
    match = _SYNTAX_LINE.search(result.message)
    if match and match["name"] == Path(result.submission).name:
        return int(match["line"])
    return None


def _def_line(result: ProblemResult) -> int | None:
    """The line of `def <function>` in the submission file, when both can be found."""
    if not result.function:
        return None
    try:
        source = Path(result.submission).read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return None
    pattern = rf"^[ \t]*(?:async[ \t]+)?def[ \t]+{re.escape(result.function)}[ \t]*\("
    match = re.search(pattern, source, re.MULTILINE)
    return source.count("\n", 0, match.start()) + 1 if match else None


def annotation_line(result: ProblemResult) -> int:
    """The line of the learner's file that an annotation on `result` points at."""
    return _traceback_line(result) or _syntax_error_line(result) or _def_line(result) or 1


def _annotation(result: ProblemResult) -> str:
    name = "notice" if result.passed else "error"
    title = f"{result.problem}: {result.status}"
    return command(name, result.message, file=result.submission, line=annotation_line(result), title=title)


def _grouped(text: str) -> Iterator[str]:
    """The plain report in a collapsed group, with commands stopped so that nothing in it runs as one."""
    token = secrets.token_hex(16)
    yield command("group", GROUP_TITLE)
    yield command("stop-commands", token)
    yield text.rstrip("\n")
    yield f"::{token}::"
    yield command("endgroup")


def _profile_annotations(result: ProblemResult) -> list[str]:
    """A warning on each line of the learner's file where the precision profile found dtypes that differ
    from the reference's (the verdict's annotation stays where it is)."""
    differences = result.profile.differences if result.profile else ()
    warnings = []
    for text in differences:
        place = _PROFILE_PLACE.search(text)
        if place and place["name"] == Path(result.submission).name:
            title = f"{result.problem}: dtypes differ from the reference's"
            warnings.append(command("warning", text, file=result.submission, line=place["line"], title=title))
    return warnings


def render_github(report: GradeReport) -> str:
    annotations = [
        line for result in report.problems for line in [_annotation(result), *_profile_annotations(result)]
    ]
    return "\n".join([*annotations, *_grouped(render_text(report, color=False))]) + "\n"


def _row(result: ProblemResult) -> str:
    cells = [
        f"{result.problem}: {result.title}",
        str(result.status),
        f"{result.score:g} / {result.points:g}",
        result.message,
    ]
    return "| " + " | ".join(cell(text) for text in cells) + " |"


def _pitfall_lines(report: GradeReport) -> list[str]:
    lines = [
        f"- **{inline(result.problem)}**: `{inline(pitfall.name)}`, {inline(pitfall.title)}. "
        f"{inline(pitfall.explanation)}"
        for result in report.problems
        for pitfall in (result.pitfall, *result.also_matches)
        if pitfall
    ]
    return ["", "### Named pitfalls", "", *lines] if lines else []


def render_step_summary(report: GradeReport) -> str:
    """Returns a Markdown summary of the report for the job's step summary page."""
    passed = sum(result.passed for result in report.problems)
    heading = (
        f"## Grade report ({report.mode} cases): {passed} of {len(report.problems)} problems passed, "
        f"{report.score:g} of {report.points:g} points"
    )
    table = ["| Problem | Status | Score | Why |", "| --- | --- | --- | --- |"]
    table += [_row(result) for result in report.problems]
    sandbox = [] if report.sandbox is None else ["", f"Sandbox: {inline(report.sandbox.describe())}."]
    return "\n".join([heading, "", *table, *_pitfall_lines(report), *sandbox]) + "\n"


def append_step_summary(report: GradeReport, environ: Mapping[str, str] = os.environ) -> None:
    """Appends the step summary to the file named by $GITHUB_STEP_SUMMARY; does nothing when it is unset."""
    path = environ.get(SUMMARY_ENV)
    if not path:
        return
    with open(path, "a", encoding="utf-8") as summary:
        summary.write(render_step_summary(report) + "\n")
