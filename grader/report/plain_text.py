"""The text report: what a learner reads after `grade <id>`."""

from __future__ import annotations

import textwrap

import numpy as np

from grader.report.naming_text import naming_paragraphs
from grader.report.profile_table import profile_lines
from grader.results import CaseResult, GradeReport, ProblemResult, Status, bytes_cut, entry_name

_COLORS = {Status.PASS: "32", Status.FAIL: "31", Status.ERROR: "31", Status.NOT_RUN: "33"}
STATUS_WORDS = {Status.PASS: "PASS", Status.FAIL: "FAIL", Status.ERROR: "ERROR", Status.NOT_RUN: "SKIP"}
INDENT = " " * 8
MAX_ENTRIES_SHOWN = 6
SHOWN_HEAD, SHOWN_TAIL = 5, 15  # lines of the learner's prints shown


def _badge(status: Status, color: bool) -> str:
    word = f"{STATUS_WORDS[status]:<5}"
    return f"\033[{_COLORS[status]}m{word}\033[0m" if color else word


def _number(value: float) -> str:
    return f"{value:.7g}"


def _ratios(expected: np.ndarray, got: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """Each entry's error divided by the allowed error: inf where the non-finite pattern differs."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        error = np.where(np.isfinite(expected) & np.isfinite(got), np.abs(got - expected), np.inf)
        error = np.where(np.isnan(expected) & np.isnan(got), 0.0, error)
        error = np.where(np.isinf(expected) & (got == expected), 0.0, error)
        allowed = atol + rtol * np.abs(np.nan_to_num(expected, posinf=0.0, neginf=0.0))
        return np.where(error == 0, 0.0, error / allowed)


def _entries(case: CaseResult, result: ProblemResult) -> list[str]:
    """Returns a small table of the entries that matter: all of a short output, else the first entries
    outside the tolerance and the worst ones, each marked inside or outside."""
    expected = np.asarray(case.expected, dtype=np.float64).reshape(-1)
    got = np.asarray(case.got, dtype=np.float64).reshape(-1) if case.got is not None else None
    if got is None or got.shape != expected.shape:
        shown = np.array2string(expected, precision=7, threshold=MAX_ENTRIES_SHOWN)
        return [f"{INDENT}expected {shown}"]
    ratios = _ratios(expected, got, result.rtol, result.atol)
    outside = np.flatnonzero(ratios > 1)
    note = ""
    if expected.size <= MAX_ENTRIES_SHOWN:
        picked = list(range(expected.size))
    else:
        half = MAX_ENTRIES_SHOWN // 2
        worst = outside[np.argsort(-ratios[outside], kind="stable")][:half]
        picked = sorted(set(outside[:half].tolist()) | set(worst.tolist()))
        note = (
            f"{INDENT}({len(picked)} of the {outside.size} entries outside the tolerance shown, of "
            f"{expected.size}: the first ones, and the worst)"
        )
    names = [entry_name(i, expected.size, result.segments) for i in picked]
    width = max(6, *(len(name) for name in names))
    lines = [f"{INDENT}{'entry':>{width}}  {'expected':>15}  {'got':>15}"]
    for name, i in zip(names, picked, strict=True):
        mark = "outside" if ratios[i] > 1 else "inside"
        lines.append(f"{INDENT}{name:>{width}}  {_number(expected[i]):>15}  {_number(got[i]):>15}  {mark}")
    if note:
        lines.append(note)
    return lines


def _case_head(case: CaseResult, color: bool) -> str:
    timing = f"  {case.seconds:.2f} s" if case.seconds is not None else ""
    head = f"  {_badge(case.status, color)} {case.label}{timing}"
    return head if case.status is Status.PASS else f"{head}  {case.message}"


def case_details(case: CaseResult, result: ProblemResult, seen_errors: set[str]) -> list[str]:
    """The lines under a case's head line, indented by INDENT: the traceback of an error not shown yet
    (`seen_errors` holds the messages shown), or the entries and errors of a failure; then the inputs and
    the seed. Nothing for a case that passed or did not run."""
    if case.status in (Status.PASS, Status.NOT_RUN):
        return []
    lines = []
    if case.status is Status.ERROR:
        if case.traceback and case.message not in seen_errors:
            lines += [INDENT + line for line in case.traceback.rstrip().splitlines()]
        seen_errors.add(case.message)
    else:
        if case.expected is not None:
            lines += _entries(case, result)
        if case.max_abs_err is not None:
            lines.append(
                f"{INDENT}max abs error {case.max_abs_err:.3g}, max rel error {case.max_rel_err:.3g}; "
                f"allowed: {result.atol:g} + {result.rtol:g} * |expected| "
                f"(worst entry at {case.error_ratio:.3g}x the allowed error)"
            )
    if case.inputs:
        lines.append(f"{INDENT}inputs: {case.inputs}")
    if case.seed is not None:
        number = case.index + 1
        lines.append(
            f"{INDENT}seed {case.seed}; rebuild the inputs with: "
            f"from grader import practice_case; inputs = practice_case({result.problem!r}, {number})"
        )
    return lines


def _case_lines(case: CaseResult, result: ProblemResult, color: bool, seen_errors: set[str]) -> list[str]:
    return [_case_head(case, color), *case_details(case, result, seen_errors)]


def _wrap(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, width=100, initial_indent=indent, subsequent_indent=indent)


def captured_lines(name: str, text: str) -> list[str]:
    """The learner's own prints: the first and last lines, saying how much was left out."""
    if not text.strip():
        return []
    body = text.rstrip().splitlines()
    cut = bytes_cut(text)
    notes = [f"{cut} bytes of output cut"] if cut else []
    if len(body) > SHOWN_HEAD + SHOWN_TAIL:
        notes.append(f"{len(body) - SHOWN_HEAD - SHOWN_TAIL:,} lines not shown")
        body = [*body[:SHOWN_HEAD], "...", *body[-SHOWN_TAIL:]]
    header = f"  Your code printed to {name}" + (f" ({'; '.join(notes)})" if notes else "") + ":"
    return [header, *[f"    | {line}" for line in body]]


def render_problem(result: ProblemResult, mode: str, color: bool = False) -> str:
    lines = [f"{result.problem}: {result.title}  [{mode} cases, {result.submission}]"]
    if result.never_ran:
        lines.append(f"  {_badge(result.status, color)} {result.message}")
        lines += [INDENT + line for line in result.detail.rstrip().splitlines()]
    else:
        seen: set[str] = set()
        for case in result.cases:
            lines += _case_lines(case, result, color, seen)
    paragraphs = naming_paragraphs(result)
    if paragraphs:
        lines.append("")
    for sentence, pitfall in paragraphs:
        lines += _wrap(sentence, "  ")
        if pitfall:
            lines += _wrap(pitfall.explanation, "    ")
    if result.profile is not None:
        lines += ["", *profile_lines(result)]
    lines += captured_lines("stdout", result.stdout) + captured_lines("stderr", result.stderr)
    lines.append(
        f"  {_badge(result.status, color)} {result.problem}: {result.message} ({result.seconds:.1f} s)"
    )
    if result.sandbox is not None:
        lines.append(f"  sandbox: {result.sandbox.describe()}")
    return "\n".join(lines)


def render_text(report: GradeReport, color: bool = False) -> str:
    blocks = [render_problem(result, report.mode, color) for result in report.problems]
    if len(report.problems) > 1:
        passed = sum(result.passed for result in report.problems)
        blocks.append(f"{passed} of {len(report.problems)} problems passed.")
    return "\n\n".join(blocks) + "\n"
