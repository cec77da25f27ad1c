"""The record a batch keeps for `grade insights`, beside its gradebook (`GRADEBOOK.behaviour.json`): each
failing submission's outputs on the practice cases (which hidden mode has anyway: they name the mistake),
its precision profile's departures when one was made, and its file; each problem's reference outputs on
the practice cases and its verdict counts. Shards' records merge like their gradebooks."""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from pathlib import Path

from grader.behaviours import Behaviour, BehaviourRecord, PracticeFacts
from grader.classroom.batch import Row
from grader.course.cases import make_cases
from grader.course.problems import Course, Problem
from grader.errors import CourseError, UsageError
from grader.expected.sources import expected_outputs
from grader.profile.compare import dtype_departures
from grader.results import ProblemResult, Status
from grader.running.limits import Limits

SUFFIX = ".behaviour.json"


def record_path(gradebook: Path) -> Path:
    return gradebook.with_suffix(SUFFIX)


def behaviour_of(learner: str, result: ProblemResult, file: Path) -> Behaviour | None:
    """The behaviour of a failed answer (None for any other result, or one that returned nothing on the
    practice cases): its practice outputs, its name or nearest miss, its dtype departures."""
    if result.status is not Status.FAIL or result.fault == "grader" or not result.practice_outputs:
        return None
    profile = result.profile
    profiled = profile is not None and not profile.error
    return Behaviour(
        learner=learner,
        problem=result.problem,
        file=os.fsdecode(os.path.abspath(file)),
        outputs=dict(result.practice_outputs),
        pitfall=result.pitfall.name if result.pitfall else "",
        closest=result.closest,
        departures=tuple(dtype_departures(profile.learner, profile.reference)) if profiled else (),
        profile_lines=tuple(profile.differences) if profiled else (),
        profiled=profiled,
    )


class BehaviourKeeper:
    """Collects the behaviours of a batch's failed answers as they are graded (from the pool's threads)."""

    def __init__(self) -> None:
        self._kept: list[Behaviour] = []
        self._lock = threading.Lock()

    def __call__(self, learner: str, result: ProblemResult, file: Path) -> None:
        behaviour = behaviour_of(learner, result, file)
        if behaviour is not None:
            with self._lock:
                self._kept.append(behaviour)

    def behaviours(self) -> tuple[Behaviour, ...]:
        """What was kept, in (learner, problem) order whatever order the pool graded in."""
        with self._lock:
            return tuple(sorted(self._kept, key=lambda b: (b.learner, b.problem)))


def practice_facts(course: Course, problems: list[Problem], limits: Limits) -> dict[str, PracticeFacts]:
    """Each problem's reference outputs on its practice cases (from the output store, where grading and
    naming left them) and each case's family; a problem whose reference fails is left out."""
    cases = {problem.id: make_cases(problem) for problem in problems}
    try:
        references = expected_outputs(course, None, limits).start(problems, cases)
    except CourseError:  # no reference to compare with: the gradebook says why, insights have nothing
        return {}
    facts = {}
    try:
        for problem in problems:
            try:
                outputs = references.outputs(problem)
            except CourseError:
                continue
            facts[problem.id] = PracticeFacts(
                problem=problem.id,
                title=problem.title,
                rtol=problem.tolerance.rtol,
                atol=problem.tolerance.atol,
                returns=problem.returns,
                families={case.index: case.family for case in cases[problem.id]},
                reference={i: values for i, values in outputs.items() if hasattr(values, "shape")},
                segments=tuple(problem.segments),
            )
    finally:
        references.cancel()
    return facts


def status_counts(rows: list[Row]) -> dict[str, dict[str, int]]:
    """Problem -> status -> how many rows."""
    counts: dict[str, Counter] = {}
    for row in rows:
        counts.setdefault(row.problem, Counter())[str(row.status)] += 1
    return {problem: dict(counter) for problem, counter in counts.items()}


def record_text(record: BehaviourRecord) -> str:
    return json.dumps(record.to_dict(), indent=None, separators=(",", ":"))


def read_record(path: Path) -> BehaviourRecord:
    """The record at `path`, or beside the gradebook `path`; UsageError when there is none, or not one."""
    candidate = path if path.name.endswith(SUFFIX) else record_path(path)
    try:
        return BehaviourRecord.from_dict(json.loads(candidate.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise UsageError(
            f"no {candidate.name} beside {path}: `grade batch` (or `grade merge`) of this grader writes it"
        ) from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"{candidate}: not a behaviour record of this grader ({exc})") from None


def merge_records(records: list[BehaviourRecord]) -> BehaviourRecord:
    """One record of the whole class from the shards' (already checked to make one roster)."""
    facts: dict[str, PracticeFacts] = {}
    statuses: dict[str, Counter] = {}
    for record in records:
        facts |= record.facts
        for problem, counts in record.statuses.items():
            statuses.setdefault(problem, Counter()).update(counts)
    behaviours = sorted((b for r in records for b in r.behaviours), key=lambda b: (b.learner, b.problem))
    merged = {problem: dict(counter) for problem, counter in statuses.items()}
    return BehaviourRecord(records[0].mode, facts, merged, tuple(behaviours))
