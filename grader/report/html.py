"""The report of one problem as HTML, for a notebook's rich display: the text report's content, with the
statuses coloured, the named pitfall set apart, and a plot where there is one.

Everything that comes from the learner's code (messages, tracebacks, prints, the function's name) and
everything else too is escaped: only this module's own tags reach the page."""

from __future__ import annotations

import base64
import textwrap
from html import escape

from grader.report.naming_text import naming_paragraphs
from grader.report.plain_text import STATUS_WORDS, captured_lines, case_details
from grader.report.profile_table import profile_lines
from grader.results import MatchedPitfall, ProblemResult, Status

_COLORS = {Status.PASS: "#1a7f37", Status.FAIL: "#cf222e", Status.ERROR: "#cf222e", Status.NOT_RUN: "#9a6700"}
_MUTED = "color: #57606a"
_PRE = "margin: 0.2em 0 0.4em 0; font-size: 0.85em; white-space: pre-wrap"


def _badge(status: Status) -> str:
    style = f"color: white; background: {_COLORS[status]}; padding: 0 0.4em; border-radius: 3px"
    return f'<span style="{style}; font-family: monospace">{STATUS_WORDS[status]}</span>'


def _pre(lines: list[str]) -> str:
    return f'<pre style="{_PRE}">{escape(textwrap.dedent(chr(10).join(lines)))}</pre>'


def _cases(result: ProblemResult) -> str:
    """A row per case, with the text report's details (entries, errors, inputs, seed) under the failing."""
    rows, seen = [], set()
    for case in result.cases:
        seconds = f"{case.seconds:.2f} s" if case.seconds is not None else ""
        message = "" if case.status is Status.PASS else escape(case.message)
        rows.append(
            f"<tr><td>{_badge(case.status)}</td><td>{escape(case.label)}</td>"
            f'<td style="{_MUTED}">{seconds}</td><td style="text-align: left">{message}</td></tr>'
        )
        details = case_details(case, result, seen)
        if details:
            rows.append(f'<tr><td></td><td colspan="3" style="text-align: left">{_pre(details)}</td></tr>')
    return f'<table style="margin: 0">{"".join(rows)}</table>'


def _pitfall(sentence: str, pitfall: MatchedPitfall | None) -> str:
    style = "border-left: 4px solid #cf222e; padding: 0.1em 0.8em; margin: 0.6em 0"
    explained = f"<p>{escape(pitfall.explanation)}</p>" if pitfall else ""
    return f'<div style="{style}"><p><strong>{escape(sentence)}</strong></p>{explained}</div>'


def render_problem_html(
    result: ProblemResult, mode: str, footer: str = "", plot_png: bytes | None = None
) -> str:
    """Returns one problem's report as an HTML fragment: the same content as the text report (the cases,
    the named pitfall, where the dtypes differ from the reference's, the learner's prints, the summary and
    sandbox lines), then `footer` (the hint line) and `plot_png`, a PNG image of the failing case's series,
    when there is one."""
    parts = [
        f"<p><strong>{escape(result.problem)}</strong>: {escape(result.title)} "
        f'<span style="{_MUTED}">[{escape(mode)} cases, {escape(result.submission)}]</span></p>'
    ]
    if result.never_ran:
        parts.append(f"<p>{_badge(result.status)} {escape(result.message)}</p>")
        if result.detail.strip():
            parts.append(_pre(result.detail.rstrip().splitlines()))
    else:
        parts.append(_cases(result))
    parts += [_pitfall(sentence, pitfall) for sentence, pitfall in naming_paragraphs(result)]
    profile = profile_lines(result)
    if profile:
        style = "border-left: 4px solid #0969da; padding: 0.1em 0.8em; margin: 0.6em 0"
        parts.append(f'<div style="{style}">{_pre(profile)}</div>')
    if plot_png:
        encoded = base64.b64encode(plot_png).decode("ascii")
        alt = "your output against the reference's on the failing case"
        parts.append(f'<img alt="{alt}" src="data:image/png;base64,{encoded}">')
    for name, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        printed = captured_lines(name, text)
        if printed:
            parts.append(f"<p>{escape(printed[0].strip())}</p>{_pre(printed[1:])}")
    parts.append(
        f"<p>{_badge(result.status)} <strong>{escape(result.problem)}</strong>: {escape(result.message)} "
        f'<span style="{_MUTED}">({result.seconds:.1f} s)</span></p>'
    )
    if result.sandbox is not None:
        parts.append(f'<p style="{_MUTED}">sandbox: {escape(result.sandbox.describe())}</p>')
    if footer.strip():
        parts.append(f"<p>{escape(footer.strip())}</p>")
    return f'<div class="grade-report">{"".join(parts)}</div>'
