"""What a class computed, as plain data for `grade insights`: each failing submission's behaviour (its outputs
on the practice cases, where its dtypes depart from the reference's, its file), each problem's practice facts
(the reference's outputs, the families, the tolerance), the groups of submissions that behave the same, and
the JSON form of the record `grade batch` keeps beside its gradebook (`GRADEBOOK.behaviour.json`)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from grader.results import ClosestPitfall

RECORD_VERSION = 1


@dataclass(frozen=True)
class Behaviour:
    """One failing submission of one problem: what it returned on each practice case (a float array, or what
    came instead; a case that returned nothing is absent) and what the grader said of it."""

    learner: str  # printable, as the gradebook shows it
    problem: str
    file: str  # the submission's path
    outputs: dict[int, np.ndarray | str]
    pitfall: str = ""  # the pitfall named, "" when none was
    closest: ClosestPitfall | None = None  # the nearest miss when none was named
    departures: tuple[str, ...] = ()  # "role: signature" pairs where the dtypes depart (no line, no order)
    profile_lines: tuple[str, ...] = ()  # the same in the learner's terms, with their lines
    profiled: bool = False  # whether a precision profile was made at all


@dataclass(frozen=True)
class PracticeFacts:
    """A problem's practice cases as grouping needs them: the reference's outputs and each case's family."""

    problem: str
    title: str
    rtol: float
    atol: float
    returns: str
    families: dict[int, str]  # practice case index -> family
    reference: dict[int, np.ndarray]
    segments: tuple[str, ...] = ()


@dataclass(frozen=True)
class FailingCase:
    """A practice case a group fails: by how many tolerances (inf: another shape or non-finite pattern)."""

    case: int
    family: str
    ratio: float
    note: str = ""  # what came instead of an array, when that is why


@dataclass(frozen=True)
class BehaviourGroup:
    """Failing submissions that give the same answer on every practice case (and, where profiled, depart
    from the reference's dtypes alike); the first member is the representative."""

    number: int  # within its problem, 1 for the largest
    members: tuple[Behaviour, ...]
    failing: tuple[FailingCase, ...]
    plotted_case: int | None = None  # the case whose outputs the page draws against the reference's

    @property
    def representative(self) -> Behaviour:
        return self.members[0]

    @property
    def size(self) -> int:
        return len(self.members)

    @property
    def names(self) -> list[tuple[str, int]]:
        """The pitfalls named for the members, commonest first, with how many each."""
        return Counter(m.pitfall for m in self.members if m.pitfall).most_common()

    @property
    def pitfall(self) -> str:
        """The group's name: the pitfall named for most of its members, "" when most got none."""
        named = self.names
        return named[0][0] if named and 2 * named[0][1] > self.size else ""


@dataclass(frozen=True)
class ProblemInsights:
    """One problem of a class: its verdict counts and its failing submissions' groups, largest first."""

    facts: PracticeFacts
    statuses: dict[str, int]  # status -> rows
    groups: tuple[BehaviourGroup, ...] = ()
    ungrouped: int = 0  # failing rows with no behaviour kept (nothing returned on a practice case)

    @property
    def rows(self) -> int:
        return sum(self.statuses.values())

    @property
    def pass_rate(self) -> float:
        return self.statuses.get("pass", 0) / self.rows if self.rows else 0.0

    @property
    def shared(self) -> list[BehaviourGroup]:
        """The groups of two or more: singletons are folded apart."""
        return [group for group in self.groups if group.size > 1]

    @property
    def singletons(self) -> list[BehaviourGroup]:
        return [group for group in self.groups if group.size == 1]


@dataclass(frozen=True)
class BehaviourRecord:
    """What a batch keeps for insights: its mode, each problem's practice facts and verdict counts, and
    every failing submission's behaviour."""

    mode: str
    facts: dict[str, PracticeFacts]
    statuses: dict[str, dict[str, int]]
    behaviours: tuple[Behaviour, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": RECORD_VERSION,
            "mode": self.mode,
            "facts": {key: _facts_dict(facts) for key, facts in self.facts.items()},
            "statuses": self.statuses,
            "behaviours": [_behaviour_dict(b) for b in self.behaviours],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BehaviourRecord:
        """The record from its JSON form; KeyError, TypeError or ValueError when it is not one."""
        if data.get("version") != RECORD_VERSION:
            raise ValueError(f"version {data.get('version')!r}, not {RECORD_VERSION}")
        facts = {key: _facts(value) for key, value in data["facts"].items()}
        behaviours = tuple(_behaviour(value) for value in data["behaviours"])
        statuses = {
            key: {str(s): int(n) for s, n in value.items()} for key, value in data["statuses"].items()
        }
        return cls(str(data["mode"]), facts, statuses, behaviours)


def _array_json(values: np.ndarray) -> list[float | str]:
    """Floats as JSON numbers, non-finite ones as "nan", "inf", "-inf"."""
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    return [float(v) if math.isfinite(v) else str(float(v)) for v in flat]


def _array(values: list) -> np.ndarray:
    return np.array([float(v) for v in values], dtype=np.float64)


def _output_json(value: np.ndarray | str) -> list | str:
    return value if isinstance(value, str) else _array_json(value)


def _output(value: list | str) -> np.ndarray | str:
    return str(value) if isinstance(value, str) else _array(value)


def _facts_dict(facts: PracticeFacts) -> dict[str, Any]:
    return {
        "problem": facts.problem,
        "title": facts.title,
        "rtol": facts.rtol,
        "atol": facts.atol,
        "returns": facts.returns,
        "families": {str(i): family for i, family in facts.families.items()},
        "reference": {str(i): _array_json(values) for i, values in facts.reference.items()},
        "segments": list(facts.segments),
    }


def _facts(data: dict[str, Any]) -> PracticeFacts:
    return PracticeFacts(
        problem=str(data["problem"]),
        title=str(data["title"]),
        rtol=float(data["rtol"]),
        atol=float(data["atol"]),
        returns=str(data["returns"]),
        families={int(i): str(family) for i, family in data["families"].items()},
        reference={int(i): _array(values) for i, values in data["reference"].items()},
        segments=tuple(str(s) for s in data.get("segments", ())),
    )


def _behaviour_dict(behaviour: Behaviour) -> dict[str, Any]:
    return {
        "learner": behaviour.learner,
        "problem": behaviour.problem,
        "file": behaviour.file,
        "outputs": {str(i): _output_json(value) for i, value in behaviour.outputs.items()},
        "pitfall": behaviour.pitfall,
        "closest": behaviour.closest.to_dict() if behaviour.closest else None,
        "departures": list(behaviour.departures),
        "profile_lines": list(behaviour.profile_lines),
        "profiled": behaviour.profiled,
    }


def _behaviour(data: dict[str, Any]) -> Behaviour:
    closest = data.get("closest")
    return Behaviour(
        learner=str(data["learner"]),
        problem=str(data["problem"]),
        file=str(data["file"]),
        outputs={int(i): _output(value) for i, value in data["outputs"].items()},
        pitfall=str(data.get("pitfall", "")),
        closest=ClosestPitfall(
            str(closest["name"]), str(closest["title"]), tuple(closest["agrees"]), tuple(closest["differs"])
        )
        if closest
        else None,
        departures=tuple(str(d) for d in data.get("departures", ())),
        profile_lines=tuple(str(line) for line in data.get("profile_lines", ())),
        profiled=bool(data.get("profiled", False)),
    )
