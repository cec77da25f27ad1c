"""The measured margins of a problem, per platform: what `grade check ID --secrets N --record` measured
(each pitfall's smallest error ratio on its families, each variant's largest, each natural mistake's
smallest), kept in `problems/<id>/margins.toml` and shown as a table in the problem's GRADING.md by
`grade docs`. So the numbers a reader sees are the check's, and `grade docs --check` says when the table
and the record part."""

from __future__ import annotations

import datetime
import math
import platform
import tomllib
from collections.abc import Iterable
from importlib.metadata import version

from grader.authoring.discrimination import aim_of
from grader.course.problems import Problem
from grader.errors import CourseError

KINDS = ("pitfall", "variant", "mistake")
FILE = "margins.toml"
HEADER = (
    "# Measured by `grade check ID --secrets N --record` on each platform; shown in GRADING.md by\n"
    "# `grade docs`. Ratios are error / tolerance: a pitfall's smallest on its families, a variant's\n"
    "# largest, a natural mistake's smallest, over the practice cases and the hidden cases of N secrets.\n"
)


def platform_label() -> str:
    """This platform as the record names it: Python and jax versions."""
    return f"Python {platform.python_version()}, jax {version('jax')}"


def read(problem: Problem) -> dict[str, dict]:
    """The record: {platform: {"secrets": N, "date": ..., "pitfall": {name: ratio}, ...}}; {} if none."""
    path = problem.directory / FILE
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise CourseError(f"{path} cannot be read: {exc}") from None


def _number(value: float) -> str:
    return "inf" if math.isinf(value) else repr(float(value))


def _key(name: str) -> str:
    return f'"{name}"'


def write(problem: Problem, label: str, secrets: int, ratios: Iterable[tuple[str, str, float]]) -> None:
    """Records `ratios` ((kind, file name, ratio) rows) as measured on platform `label` over `secrets`
    secrets, replacing that platform's earlier record and keeping the others'."""
    record = read(problem)
    record[label] = {"secrets": secrets, "date": datetime.date.today().isoformat()}
    for kind, name, ratio in ratios:
        record[label].setdefault(kind, {})[name] = ratio
    lines = [HEADER]
    for platform_name in sorted(record):
        entry = record[platform_name]
        lines.append(f"[{_key(platform_name)}]")
        lines.append(f"secrets = {int(entry['secrets'])}")
        lines.append(f'date = "{entry["date"]}"')
        for kind in KINDS:
            if entry.get(kind):
                lines.append(f"[{_key(platform_name)}.{kind}]")
                lines += [f"{_key(name)} = {_number(r)}" for name, r in sorted(entry[kind].items())]
        lines.append("")
    (problem.directory / FILE).write_text("\n".join(lines), encoding="utf-8")


def _ratio(value: float | None) -> str:
    if value is None:
        return ""
    return "inf" if math.isinf(value) else f"{value:.3g}"


def margins_table(problem: Problem) -> str:
    """The table GRADING.md shows: one row per pitfall, variant and natural mistake, one column per
    platform measured, and the aim each must meet."""
    record = read(problem)
    if not record:
        return "Not measured yet: run `grade check ID --secrets 20 --families --record` on each platform."
    platforms = sorted(record)
    head = " | ".join(f"{p} ({record[p]['secrets']} secrets, {record[p]['date']})" for p in platforms)
    rows = [f"| file | aim | {head} |", "|---|---|" + "---|" * len(platforms)]
    for kind in KINDS:
        for file in sorted({file for p in platforms for file in record[p].get(kind, {})}):
            cells = " | ".join(_ratio(record[p].get(kind, {}).get(file)) for p in platforms)
            rows.append(f"| {kind} `{file}` | {aim_of(problem, kind, file)} | {cells} |")
    return "\n".join(rows)


def _rtol(rtol: float) -> str:
    """`rtol` as written for a reader: a power of two as 2^-k with its decimal value."""
    if rtol > 0 and math.log2(rtol).is_integer():
        return f"2^{int(math.log2(rtol))} = {rtol:g}"
    return f"{rtol:g}"


def _extreme(entry: dict, kind: str, pick) -> str:
    ratios = entry.get(kind, {})
    if not ratios:
        return "none recorded"
    name = pick(ratios, key=lambda n: (ratios[n], n))
    return f"{_ratio(ratios[name])} (`{name}`)"


def tolerance_summary(problem: Problem) -> str:
    """The Tolerance section's numbers: the tolerance as `problem.toml` sets it and, per platform measured,
    the accepted forms' largest error and the named mistakes' smallest, both over the tolerance."""
    tolerance = problem.tolerance
    lines = [
        f"An entry passes when `|got - expected| <= atol + rtol * |expected|`, with `rtol = "
        f"{_rtol(tolerance.rtol)}` and `atol = {tolerance.atol:g}` (`problem.toml`)."
    ]
    record = read(problem)
    if not record:
        return lines[0] + " Not measured yet: run `grade check ID --secrets 20 --families --record`."
    lines += [
        "",
        "| platform (`grade check --record`) | accepted forms' largest error / tolerance | "
        "pitfalls' smallest, on their families | natural mistakes' smallest |",
        "|---|---|---|---|",
    ]
    for label in sorted(record):
        entry = record[label]
        lines.append(
            f"| {label}, {entry['secrets']} secrets | {_extreme(entry, 'variant', max)} | "
            f"{_extreme(entry, 'pitfall', min)} | {_extreme(entry, 'mistake', min)} |"
        )
    return "\n".join(lines)


def record_check(problem: Problem, findings: Iterable, secrets: int) -> None:
    """Records what a check of `problem` measured on this platform (its pitfall, variant and mistake rows)."""
    rows = [(f.kind, f.name, f.ratio) for f in findings if f.kind in KINDS and f.ratio is not None]
    write(problem, platform_label(), secrets, rows)
