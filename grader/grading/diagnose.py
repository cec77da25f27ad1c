"""Naming the mistake: which of a problem's pitfalls explain the learner's outputs.

A pitfall file explains a learner's outputs on a set of cases when, on every one of them, it gets the same
verdict as the learner (both within the tolerance of the reference, or both not), and wherever the learner
failed, its numbers are the learner's within the tolerance. A name is given only then: a pitfall that
differs from the learner on a case the learner failed would send the learner to code they did not write.
A learner whose function raised or returned nothing on some case has a verdict no pitfall file gives, so
nothing is named from the numbers (a problem's harness may still name what it rejected).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grader.course.problems import Pitfall, Problem
from grader.grading.compare import compare_outputs
from grader.protocol.payloads import Returned


@dataclass(frozen=True)
class NearMiss:
    """The pitfall that comes closest when none explains the outputs: it gives the learner's numbers on the
    failed cases `agrees` and not on the cases `differs` (case indices), and agrees on more cases than it
    differs (a pitfall that shares one case of many would send the learner the wrong way)."""

    pitfall: Pitfall
    agrees: tuple[int, ...]
    differs: tuple[int, ...]


@dataclass(frozen=True)
class Diagnosis:
    """The pitfalls that explain the outputs, closest first, each with the labels of its files that do (a
    pitfall and its forms); or, when none does, the nearest miss (or None)."""

    named: list[Pitfall]
    labels: dict[str, list[str]]
    nearest: NearMiss | None = None


def _passes(values: Returned, expected: np.ndarray, problem: Problem) -> bool:
    return compare_outputs(values, expected, problem.tolerance, problem.returns).passed


def diagnose(
    problem: Problem,
    returned: dict[int, Returned],
    reference: dict[int, np.ndarray],
    pitfall_outputs: dict[str, dict[int, np.ndarray]],
    cases: list[int] | None = None,
) -> Diagnosis:
    """Returns the pitfalls whose files (keyed by label: a pitfall or one of its forms) explain the learner's
    `returned` outputs on `cases` (by default every case in `reference`), closest first."""
    cases = list(reference) if cases is None else cases
    if not cases or any(i not in returned or i not in reference for i in cases):
        return Diagnosis([], {})
    failed = {i for i in cases if not _passes(returned[i], reference[i], problem)}
    if not failed:
        return Diagnosis([], {})
    closeness: dict[str, float] = {}
    labels: dict[str, list[str]] = {}
    misses: list[tuple[int, int, str, tuple[int, ...], tuple[int, ...]]] = []
    order = [pitfall.name for pitfall in problem.pitfalls]
    for label, outputs in pitfall_outputs.items():
        if any(i not in outputs for i in cases):
            continue
        name = problem.pitfall(label).name
        agrees, differs, worst = [], [], 0.0
        for i in cases:
            if i in failed:
                same = compare_outputs(returned[i], outputs[i], problem.tolerance, problem.returns)
                (agrees if same.passed else differs).append(i)
                worst = max(worst, same.error_ratio)
            elif not _passes(Returned.from_array(outputs[i]), reference[i], problem):
                differs.append(i)  # the learner passed where the pitfall fails
        if not differs:
            closeness[name] = min(worst, closeness.get(name, float("inf")))
            labels.setdefault(name, []).append(label)
        elif len(agrees) > len(differs):  # a near miss worth telling: it agrees on most failed cases
            misses.append((-len(agrees), order.index(name), name, tuple(agrees), tuple(differs)))
    ranked = sorted(closeness, key=lambda name: (closeness[name], order.index(name)))
    named = [problem.pitfall(name) for name in ranked]
    nearest = None
    if not named and misses:
        _, _, name, agrees, differs = min(misses)
        nearest = NearMiss(problem.pitfall(name), agrees, differs)
    return Diagnosis(named, {name: labels[name] for name in ranked}, nearest)
