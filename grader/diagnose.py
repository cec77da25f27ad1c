"""Naming the mistake: which of a problem's pitfalls reproduces the learner's outputs."""

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
) -> Pitfall | None:
    """Returns the pitfall whose outputs match every returned output within tolerance, if one does.

    A pitfall only counts where it differs from the reference on at least one of those cases, so that a
    pitfall the cases cannot show is never named. Of several matches, the closest wins.
    """
    best: tuple[float, Pitfall] | None = None
    for pitfall in problem.pitfalls:
        outputs = pitfall_outputs.get(pitfall.name)
        shared = [index for index in returned if outputs and index in outputs]
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
        worst = max(match.error_ratio for match in matches)
        if best is None or worst < best[0]:
            best = (worst, pitfall)
    return best[1] if best else None
