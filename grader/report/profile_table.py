"""A precision profile in text: the differences under a failed answer's cases, and for `grade ID --profile`
the learner's and the reference's dtypes side by side, role by role."""

from __future__ import annotations

import textwrap

from grader.profile.profiler import ROLES, signature
from grader.results import PrecisionProfile, ProblemResult

_WIDTH = 100
_LISTED = (  # what the profile lists (grader/profile/profiler.py's roles), as both texts say it
    "matmuls, reductions, 16-bit running sums, exp and log, scalings by a scalar, casts, and operations "
    "that mix dtypes"
)


def _wrapped(text: str, first: str, rest: str) -> list[str]:
    return textwrap.wrap(text, width=_WIDTH, initial_indent=first, subsequent_indent=rest)


def profile_lines(result: ProblemResult) -> list[str]:
    """What the report says under a profiled answer: the first differences from the reference's dtypes, that
    there are none, or why there is no profile."""
    profile = result.profile
    if profile is None:
        return []
    traced = f"practice case {profile.case + 1}"
    if profile.error:
        return _wrapped(f"Precision profile ({traced}): {profile.error}", "  ", "    ")
    if not profile.differences:
        same = f"Precision profile ({traced}): the operations it lists ({_LISTED}) ran in the same dtypes"
        same += " as in the reference"
        if not result.passed:
            same += (
                "; it does not list elementwise arithmetic or what is saved, so look there, and at the "
                "order of the steps"
            )
        return _wrapped(same + ".", "  ", "    ")
    lines = [f"  Where your dtypes differ from the reference's ({traced}):"]
    for difference in profile.differences:
        lines += _wrapped(difference, "    - ", "      ")
    return lines


def _yours(profile: PrecisionProfile, role: str) -> dict[str, tuple[str, str]]:
    """The learner's signatures in `role`, each with how often (the summary's count) and on which lines."""
    lines: dict[str, list[str]] = {}
    for entry in profile.learner["entries"]:
        if entry["role"] == role:
            where = str(entry["line"]) if entry.get("line") is not None else "library"
            if where not in lines.setdefault(signature(entry), []):
                lines[signature(entry)].append(where)
    counts = profile.learner["summary"].get(role, {})
    return {
        sig: (str(counts[sig]), ", ".join(lines[sig][:4]) + (", ..." if len(lines[sig]) > 4 else ""))
        for sig in counts
    }


def side_by_side(result: ProblemResult) -> str:
    """The learner's and the reference's profiles, role by role: each dtype signature on one row, with
    how often it ran (and, for the learner, on which lines); `!` marks a row on one side only."""
    profile = result.profile
    case = profile.case + 1 if profile else 1
    head = f"{result.problem}: precision profile on practice case {case}, your code beside the reference"
    if profile is None or profile.error or "entries" not in profile.learner:
        why = profile.error if profile else "no profile was made: the code did not load or run"
        return f"{head}\n  {why}\n"
    files = sorted({e["file"] for e in profile.learner["entries"] if e.get("line") is not None})
    theirs = profile.reference.get("summary", {})
    rows = [
        ("", "your code", "times", f"line of {', '.join(files) or 'your file'}", "the reference", "times")
    ]
    for role in ROLES:
        ours, reference = _yours(profile, role), theirs.get(role, {})
        for number, sig in enumerate(sorted(set(ours) | set(reference), key=lambda s: (s not in ours, s))):
            mark = "" if sig in ours and sig in reference else "!"
            count, where = ours.get(sig, ("", ""))
            yours, its = (f"{mark}{sig}" if sig in side else "" for side in (ours, reference))
            rows.append((role if number == 0 else "", yours, count, where, its, str(reference.get(sig, ""))))
    widths = [max(len(row[column]) for row in rows) for column in range(6)]
    table = [
        "  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    note = (
        f"Only what matters for precision is listed: {_LISTED}. `!` marks dtypes on one side only; "
        "`library` an operation inside a library call. The reference's lines are not shown."
    )
    return "\n".join([head, *table, "", *_wrapped(note, "  ", "  ")]) + "\n"
