"""Grading results as plain data, and their JSON form (the schema documented in docs/json-report.md)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from grader.sandbox_report import Sandbox

SCHEMA_VERSION = 1


_CUT = "[... {} bytes of output cut ...]"  # where a child's long output lost its middle
_CUT_FOUND = re.compile(re.escape(_CUT).replace(r"\{\}", r"([\d,]+)"))


def output_cut_marker(cut: int) -> str:
    """Returns the line put where `cut` bytes of a child's output were left out."""
    return _CUT.format(f"{cut:,}")


def bytes_cut(output: str) -> str | None:
    """Returns how many bytes `output` says were cut ("12,345"), or None when nothing was."""
    found = _CUT_FOUND.search(output)
    return found.group(1) if found else None


def entry_name(index: int, size: int, segments: tuple[str, ...]) -> str:
    """Names entry `index` of an output of `size` entries: `scales[4]` when the output concatenates equal
    segments (`losses`, `scales`), else its flat index."""
    if segments and size % len(segments) == 0:
        length = size // len(segments)
        return f"{segments[index // length]}[{index % length}]"
    return str(index)


class Status(StrEnum):
    """A verdict. Problems and cases are pass, fail or error (a case may also be not_run); a gradebook row
    may also be missing (no submission file) or grader_error (the course could not grade: not the
    learner's fault)."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    NOT_RUN = "not_run"
    MISSING = "missing"
    GRADER_ERROR = "grader_error"


@dataclass(frozen=True)
class MatchedPitfall:
    name: str
    title: str
    explanation: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "title": self.title, "explanation": self.explanation}


@dataclass(frozen=True)
class ClosestPitfall:
    """When no pitfall explains a failed answer: the one that gives its numbers on the most practice cases
    it failed (`agrees`), and the practice cases where it does not (`differs`), numbered from 1."""

    name: str
    title: str
    agrees: tuple[int, ...]
    differs: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "agrees": list(self.agrees),
            "differs": list(self.differs),
        }


@dataclass(frozen=True)
class CaseResult:
    """One call of the learner's function: its verdict, and on failure what was expected and what came."""

    index: int
    family: str
    status: Status
    message: str = ""
    expected: np.ndarray | None = None
    got: np.ndarray | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    error_ratio: float | None = None
    seconds: float | None = None
    traceback: str = ""
    inputs: str = ""  # a summary of the inputs; practice cases only
    seed: int | None = None  # the seed of the case's generator; practice cases only
    narrower: bool = False  # a float32 promise kept in a 16-bit or narrower float: fails whatever the values

    @property
    def label(self) -> str:
        return f"case {self.index + 1} ({self.family})"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"index": self.index, "family": self.family, "status": str(self.status)}
        if self.seconds is not None:
            data["seconds"] = round(self.seconds, 4)
        if self.status in (Status.FAIL, Status.ERROR, Status.NOT_RUN):
            data["message"] = self.message
        if self.status is Status.FAIL:
            data.update(
                expected=_floats(self.expected),
                got=_floats(self.got),
                max_abs_err=_float(self.max_abs_err),
                max_rel_err=_float(self.max_rel_err),
                error_ratio=_float(self.error_ratio),
            )
        if self.traceback:
            data["traceback"] = self.traceback
        if self.inputs:
            data["inputs"] = self.inputs
        if self.seed is not None:
            data["seed"] = self.seed
        return data


@dataclass(frozen=True)
class PrecisionProfile:
    """Where the learner's dtypes differ from the reference's, from tracing both on one practice case
    (grader/profile/profiler.py, grader/profile/compare.py). Advice: it never changes a verdict."""

    case: int  # the index of the practice case traced
    differences: tuple[str, ...] = ()  # in the learner's terms, first differences first
    error: str = ""  # why there is no profile to compare ("" when there is)
    learner: dict = field(default_factory=dict)  # {"entries": [...], "summary": {role: {dtypes: count}}}
    reference: dict = field(default_factory=dict)  # {"summary": ...}: the reference's lines are not shown

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "differences": list(self.differences),
            "error": self.error,
            "learner": self.learner,
            "reference": self.reference,
        }


@dataclass(frozen=True)
class ProblemResult:
    """The verdict on one problem: `status` is pass only when every case passed."""

    problem: str
    title: str
    status: Status
    submission: str
    message: str = ""  # one line: why the problem failed or errored
    fault: str = ""  # whose fault a status other than pass is: "learner", or "grader" (never the learner's)
    cases: tuple[CaseResult, ...] = ()
    pitfall: MatchedPitfall | None = None
    also_matches: tuple[MatchedPitfall, ...] = ()  # other pitfalls whose outputs are the same here
    pitfall_tied: bool = False  # `pitfall` and `also_matches` explain it equally: the dtypes did not choose
    closest: ClosestPitfall | None = None  # a failed answer no pitfall explains: the nearest miss
    rtol: float = 0.0
    atol: float = 0.0
    detail: str = ""  # a load failure's traceback or source excerpt
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    points: float = 1.0  # the problem's worth; a pass scores all of it, anything else nothing
    function: str = ""  # the function the statement asks for
    segments: tuple[str, ...] = ()  # the named parts of the output, in order (problem.toml `segments`)
    sandbox: Sandbox | None = None  # None when no learner code ran (a missing stub)
    profile: PrecisionProfile | None = None  # a failed answer's (or, asked for, any answer's) dtype profile
    # A failed answer's outputs on the practice cases, by case index: a float array, or what came instead
    # (a case that returned nothing is absent). What `grade insights` groups a class by; not in the JSON.
    practice_outputs: dict[int, np.ndarray | str] = field(default_factory=dict)

    @property
    def never_ran(self) -> bool:
        """Whether no case ran (a submission that did not load, or the untouched stub's every case)."""
        return all(case.status is Status.NOT_RUN for case in self.cases)

    @property
    def passed(self) -> bool:
        return self.status is Status.PASS

    @property
    def score(self) -> float:
        return self.points if self.passed else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "problem": self.problem,
            "title": self.title,
            "status": str(self.status),
            "message": self.message,
            "fault": self.fault or None,
            "submission": self.submission,
            "pitfall": self.pitfall.to_dict() if self.pitfall else None,
            "also_matches": [pitfall.to_dict() for pitfall in self.also_matches],
            "pitfall_tied": self.pitfall_tied,
            "closest_pitfall": self.closest.to_dict() if self.closest else None,
            "tolerance": {"rtol": self.rtol, "atol": self.atol},
            "segments": list(self.segments),
            "cases": [case.to_dict() for case in self.cases],
            "detail": self.detail,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "seconds": round(self.seconds, 3),
            "points": self.points,
            "score": self.score,
            "sandbox": self.sandbox.to_dict() if self.sandbox else None,
            "profile": self.profile.to_dict() if self.profile else None,
        }


@dataclass(frozen=True)
class GradeReport:
    """The results of one `grade` command."""

    mode: str  # "practice" or "hidden"
    problems: tuple[ProblemResult, ...] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.problems)

    @property
    def score(self) -> float:
        return sum(result.score for result in self.problems)

    @property
    def points(self) -> float:
        return sum(result.points for result in self.problems)

    @property
    def sandbox(self) -> Sandbox | None:
        """The weakest protection any problem of the report ran under; None when no learner code ran."""
        ran = [result.sandbox for result in self.problems if result.sandbox is not None]
        return min(ran, key=lambda sandbox: (sandbox.held, bool(sandbox.command))) if ran else None

    def to_dict(self) -> dict[str, Any]:
        counts = {str(status): 0 for status in (Status.PASS, Status.FAIL, Status.ERROR)}
        for result in self.problems:
            counts[str(result.status)] += 1
        return {
            "schema_version": SCHEMA_VERSION,
            "mode": self.mode,
            "summary": {"total": len(self.problems), **counts},
            "sandbox": self.sandbox.to_dict() if self.sandbox else None,
            "problems": [result.to_dict() for result in self.problems],
        }


def _float(value: float | None) -> float | str | None:
    """Returns a JSON-safe float: non-finite values become the strings "nan", "inf", "-inf"."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else str(value)


def _floats(values: np.ndarray | None) -> list[float | str | None] | None:
    return None if values is None else [_float(v) for v in np.asarray(values, dtype=np.float64).reshape(-1)]
