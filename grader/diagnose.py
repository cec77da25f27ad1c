"""Naming the mistake: which of a problem's pitfalls reproduce the learner's outputs."""

from __future__ import annotations

import numpy as np

from grader.compare import compare_outputs
from grader.problems import Pitfall, Problem
from grader.protocol import Returned


def diagnose(
    problem: Problem,
    returned: dict[int, Returned],
    reference: dict[int, np.ndarray],
    pitfall_outputs: dict[str, dict[int, np.ndarray]],
) -> list[Pitfall]:
    """Returns the pitfalls whose outputs (of any of their forms, keyed by label) match every returned
    output within tolerance, closest first.

    A pitfall file only counts where it differs from the reference on at least one of those cases, so
    that a mistake the cases cannot show is never named.
    """
    closeness: dict[str, float] = {}
    for label, outputs in pitfall_outputs.items():
        shared = [index for index in returned if index in outputs]
        if not shared:
            continue
        matches = [
            compare_outputs(returned[i], outputs[i], problem.tolerance, problem.returns) for i in shared
        ]
        if not all(match.passed for match in matches):
            continue
        shows = any(
            not compare_outputs(
                Returned.from_array(outputs[i]), reference[i], problem.tolerance, problem.returns
            ).passed
            for i in shared
            if i in reference
        )
        if not shows:
            continue
        name = problem.pitfall(label).name
        worst = max(match.error_ratio for match in matches)
        closeness[name] = min(worst, closeness.get(name, float("inf")))
    order = [pitfall.name for pitfall in problem.pitfalls]
    ranked = sorted(closeness, key=lambda name: (closeness[name], order.index(name)))
    return [problem.pitfall(name) for name in ranked]
