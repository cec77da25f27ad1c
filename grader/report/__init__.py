"""The report formats, in one registry that the usage text, the parser and the dispatch all read, and the one
function that writes a run's reports to their destinations (stdout, files, GitHub's step summary).

Renderers return text and never write anything. Reports only render results: they may import the plain data
(errors, results, sandbox_report, settings) and the profile's vocabulary (grader/profile/profiler.py), nothing
that runs anything."""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TextIO

from grader.errors import UsageError
from grader.report.github import append_step_summary, render_github
from grader.report.gradescope import render_gradescope
from grader.report.json_document import render_json
from grader.report.junit import render_junit
from grader.report.plain_text import render_text
from grader.results import GradeReport

# name -> (renderer(report, color, hidden_visibility), one line for the usage text)
_RENDERERS: dict[str, tuple[Callable[[GradeReport, bool, str], str], str]] = {
    "text": (lambda report, color, _: render_text(report, color=color), "the report for people (default)"),
    "json": (
        lambda report, _, __: render_json(report),
        "one JSON document (schemas/grade_report.schema.json)",
    ),
    "junit": (lambda report, _, __: render_junit(report), "JUnit XML, a test suite per problem"),
    "gradescope": (lambda report, _, vis: render_gradescope(report, vis), "Gradescope's results.json"),
    "github": (lambda report, _, __: render_github(report), "GitHub workflow commands and a step summary"),
}
FORMATS = tuple(_RENDERERS)


def render(
    report: GradeReport, fmt: str, color: bool = False, hidden_visibility: str = "after_due_date"
) -> str:
    """Returns the report in format `fmt` (one of FORMATS); `hidden_visibility` is the Gradescope
    visibility of hidden-mode results. Writes nothing."""
    renderer, _ = _RENDERERS[fmt]
    return renderer(report, color, hidden_visibility)


def describe_formats() -> str:
    return "; ".join(f"{name}: {line}" for name, (_, line) in _RENDERERS.items())


def write_file(path: Path, text: str) -> None:
    """Writes a report (or a gradebook) to `path` whole or not at all, making its folder: the text goes to a
    new file beside it, synced, that then takes its name, so a failure or a crash midway leaves the old file
    as it was. A device or a pipe there (/dev/stdout) is written to as it is. A UsageError says why it could
    not."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        target = Path(os.path.realpath(path))  # through a link, so that the link stays
        if target.exists() and not target.is_file():
            target.write_text(text, encoding="utf-8")
        else:
            _replace(target, text)
    except OSError as exc:
        raise UsageError(f"cannot write the report to {path}: {exc.strerror}") from None


def _replace(path: Path, text: str) -> None:
    """Replaces the file at `path` by one with `text`, or leaves it as it was."""
    # 0o666 less the umask as for a plain write (tempfile's would be 0o600); O_EXCL: never another's file
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with open(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_reports(
    report: GradeReport,
    to_stdout: str | None,
    files: Mapping[Path, str],
    hidden_visibility: str = "after_due_date",
    stdout: TextIO | None = None,
    environ: Mapping[str, str] = os.environ,
) -> None:
    """Writes every report of a run: `files` (path -> format), then the `to_stdout` format (None: none;
    "text" is printed problem by problem as it is graded, so not here); with the github format anywhere, the
    Markdown summary is appended to $GITHUB_STEP_SUMMARY when that is set."""
    for path, fmt in files.items():
        write_file(path, render(report, fmt, hidden_visibility=hidden_visibility))
    if to_stdout not in (None, "text"):
        (stdout or sys.stdout).write(render(report, to_stdout, hidden_visibility=hidden_visibility))
    if "github" in (to_stdout, *files.values()):
        append_step_summary(report, environ)


__all__ = ["FORMATS", "describe_formats", "render", "write_file", "write_reports"]
