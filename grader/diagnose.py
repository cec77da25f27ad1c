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
    families: dict[int, str] | None = None,
) -> list[Pitfall]:
    """Returns the pitfalls whose outputs (of any of their forms, keyed by label) match the returned
    outputs within tolerance, closest first.

    With `families` (case index -> family), a pitfall file must match on the cases of the families built
    to expose it, where its numbers are designed to be stable; elsewhere a chaotic run (say, eager against
    jitted fp16 arithmetic) may drift without changing what the mistake is. Candidates are ranked by how
    closely they match there, then on every case, passing ones included, so that two mistakes that tie on
    their own families are told apart where they differ. A pitfall file only counts where it differs from
    the reference on at least one of the cases it must match, so a mistake the cases cannot show is never
    named.
    """
    closeness: dict[str, tuple[float, float]] = {}
    for label, outputs in pitfall_outputs.items():
        shared = [index for index in returned if index in outputs]
        own = set(problem.families_of(label)) if families else set()
        judged = [i for i in shared if families[i] in own] if own else shared
        if not judged:
            continue
        ratios = {
            i: compare_outputs(returned[i], outputs[i], problem.tolerance, problem.returns) for i in shared
        }
        if not all(ratios[i].passed for i in judged):
            continue
        shows = any(
            not compare_outputs(
                Returned.from_array(outputs[i]), reference[i], problem.tolerance, problem.returns
            ).passed
            for i in judged
            if i in reference
        )
        if not shows:
            continue
        name = problem.pitfall(label).name
        rank = (max(ratios[i].error_ratio for i in judged), max(r.error_ratio for r in ratios.values()))
        closeness[name] = min(rank, closeness.get(name, (float("inf"), float("inf"))))
    order = [pitfall.name for pitfall in problem.pitfalls]
    ranked = sorted(closeness, key=lambda name: (closeness[name], order.index(name)))
    return [problem.pitfall(name) for name in ranked]
