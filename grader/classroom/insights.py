"""What a class got wrong: each problem's failing submissions in groups of the same behaviour.

Two submissions behave the same when they give the grader's same answer (grader/grading/compare.py: the
same shape and non-finite pattern, entries within the problem's tolerance) on every practice case, and,
where both were profiled, depart from the reference's dtypes in the same places. The cost is linear in the
class: submissions go into buckets by what must be equal exactly (which cases returned an array, each
one's shape and non-finite pattern, what came instead of one), and in a bucket each is compared with the
representatives of the groups found so far (the first member of each), never with every other submission.
"""

from __future__ import annotations

import math

import numpy as np

from grader.behaviours import (
    Behaviour,
    BehaviourGroup,
    BehaviourRecord,
    FailingCase,
    PracticeFacts,
    ProblemInsights,
)
from grader.course.problems import Tolerance
from grader.grading.compare import compare_arrays

Output = np.ndarray | str | None


def _pattern(value: Output) -> object:
    """What two outputs must share exactly to be the same answer."""
    if value is None or isinstance(value, str):
        return value
    flat = np.asarray(value, dtype=np.float64).reshape(-1)
    return flat.shape, np.isnan(flat).tobytes(), np.sign(flat[np.isinf(flat)]).tobytes()


def bucket_key(behaviour: Behaviour, cases: list[int]) -> tuple:
    return tuple(_pattern(behaviour.outputs.get(i)) for i in cases)


def same_answer(one: Output, other: Output, tolerance: Tolerance) -> bool:
    """Whether `one` gives the grader's same answer as `other` (taken as the expected output)."""
    if isinstance(one, np.ndarray) and isinstance(other, np.ndarray):
        return compare_arrays(one, other, tolerance).passed
    return not isinstance(one, np.ndarray) and not isinstance(other, np.ndarray) and one == other


def same_behaviour(one: Behaviour, other: Behaviour, cases: list[int], tolerance: Tolerance) -> bool:
    return all(same_answer(one.outputs.get(i), other.outputs.get(i), tolerance) for i in cases)


def group_numbers(behaviours: list[Behaviour], facts: PracticeFacts) -> list[list[Behaviour]]:
    """The behaviours in groups of the same answer on every practice case, in order of first member."""
    cases = sorted(facts.families)
    tolerance = Tolerance(rtol=facts.rtol, atol=facts.atol)
    buckets: dict[tuple, list[list[Behaviour]]] = {}
    groups: list[list[Behaviour]] = []
    for behaviour in behaviours:
        found = buckets.setdefault(bucket_key(behaviour, cases), [])
        for group in found:
            if same_behaviour(behaviour, group[0], cases, tolerance):
                group.append(behaviour)
                break
        else:
            found.append([behaviour])
            groups.append(found[-1])
    return groups


def split_by_dtypes(group: list[Behaviour]) -> list[list[Behaviour]]:
    """A group of the same numbers split where the profiled members depart from the reference's dtypes in
    other places; members without a profile join the largest part (the numbers are all they tell)."""
    parts: dict[tuple[str, ...], list[Behaviour]] = {}
    for behaviour in group:
        if behaviour.profiled:
            parts.setdefault(behaviour.departures, []).append(behaviour)
    if len(parts) < 2:
        return [group]
    largest = max(parts.values(), key=len)
    largest += [behaviour for behaviour in group if not behaviour.profiled]
    return sorted(parts.values(), key=lambda part: group.index(part[0]))


def failing_cases(behaviour: Behaviour, facts: PracticeFacts) -> list[FailingCase]:
    """The practice cases `behaviour` fails, each with its error in tolerances (inf: no comparable array)."""
    tolerance = Tolerance(rtol=facts.rtol, atol=facts.atol)
    failing = []
    for index in sorted(facts.families):
        got, expected = behaviour.outputs.get(index), facts.reference.get(index)
        family = facts.families[index]
        if expected is None:
            continue
        if not isinstance(got, np.ndarray):
            failing.append(FailingCase(index, family, math.inf, got or "returned nothing"))
            continue
        comparison = compare_arrays(got, expected, tolerance)
        if not comparison.passed:
            failing.append(FailingCase(index, family, comparison.error_ratio))
    return failing


def _plotted(behaviour: Behaviour, facts: PracticeFacts, failing: list[FailingCase]) -> int | None:
    """The failing case to draw: the first whose output has the reference's shape, else the first."""
    for case in failing:
        got = behaviour.outputs.get(case.case)
        if isinstance(got, np.ndarray) and got.shape == facts.reference[case.case].shape:
            return case.case
    return None


def problem_insights(
    facts: PracticeFacts, statuses: dict[str, int], behaviours: list[Behaviour]
) -> ProblemInsights:
    """One problem's groups, largest first (ties by their representative's name), numbered from 1."""
    parts = [part for group in group_numbers(behaviours, facts) for part in split_by_dtypes(group)]
    parts.sort(key=lambda part: (-len(part), part[0].learner))
    groups = []
    for number, part in enumerate(parts, start=1):
        failing = failing_cases(part[0], facts)
        plotted = _plotted(part[0], facts, failing)
        groups.append(BehaviourGroup(number, tuple(part), tuple(failing), plotted))
    ungrouped = max(0, statuses.get("fail", 0) - len(behaviours))
    return ProblemInsights(facts, dict(statuses), tuple(groups), ungrouped)


def class_insights(record: BehaviourRecord) -> list[ProblemInsights]:
    """Every problem of the record, in the record's (course) order."""
    by_problem: dict[str, list[Behaviour]] = {}
    for behaviour in sorted(record.behaviours, key=lambda b: b.learner):
        by_problem.setdefault(behaviour.problem, []).append(behaviour)
    return [
        problem_insights(
            record.facts.get(problem) or _no_facts(problem), statuses, by_problem.get(problem, [])
        )
        for problem, statuses in record.statuses.items()
    ]


def _no_facts(problem: str) -> PracticeFacts:
    """A problem with nothing to group (no failing submission kept): its verdict counts only."""
    return PracticeFacts(problem, "", 0.0, 0.0, "", {}, {})


def find_group(
    insights: list[ProblemInsights], problem: str, number: int
) -> tuple[PracticeFacts, BehaviourGroup]:
    """The problem's group `number`, as the page and `grade insights` number them; KeyError if none."""
    for found in insights:
        if found.facts.problem == problem:
            for group in found.groups:
                if group.number == number:
                    return found.facts, group
            raise KeyError(f"{problem} has groups 1 to {len(found.groups)}, not {number}")
    raise KeyError(f"the record has no failing submission of {problem}")
