"""Naming a learner's mistake, always on the practice cases, so that a submission gets the same name in
practice and hidden mode.

The outputs of the reference and of every pitfall file on the practice cases are public and kept on disk
(or stored in a learner copy), so naming costs one run of the learner's code on those cases: in hidden
mode the learner's child runs them after the hidden cases, and only a submission that failed waits for
them. A pitfall is named when the learner's outputs reproduce its file's on every practice case (also the
cases where both equal the reference, which tells apart mistakes that tie on some cases), or when the
problem's harness rejected what the learner wrote and named the pitfall.
"""

from __future__ import annotations

from collections.abc import Iterable

from grader.cases import Case
from grader.diagnose import diagnose
from grader.limits import Limits
from grader.outcomes import RunOutcome
from grader.output_cache import practice_store
from grader.problems import Course, Problem
from grader.results import MatchedPitfall
from grader.stored import StoredOutputs
from grader.trusted import REFERENCE, TrustedOutputs, TrustedRequest, arrays

PRACTICE_RUN = "#naming"  # suffix of the label of the learner's run on the practice cases (hidden mode)


def naming_label(problem_id: str) -> str:
    return f"{problem_id}{PRACTICE_RUN}"


def matched(pitfall) -> MatchedPitfall:
    return MatchedPitfall(pitfall.name, pitfall.title, pitfall.explanation)


def named_by_check(problem: Problem, names: Iterable[str]) -> list[MatchedPitfall]:
    """Returns the pitfalls that the problem's harness named when it rejected cases, first named first."""
    known = {pitfall.name: pitfall for pitfall in problem.pitfalls}
    return [matched(known[name]) for name in dict.fromkeys(names) if name in known]


def rejections(outcome: RunOutcome) -> list[str]:
    """The pitfall names a harness gave the cases it rejected in one run."""
    return [ran.raised.pitfall for ran in outcome.cases.values() if ran.raised and ran.raised.rejected]


def name_mistake(
    course: Course,
    problem: Problem,
    practice: list[Case],
    run: RunOutcome,
    limits: Limits,
    stored: StoredOutputs | None = None,
    rejected: Iterable[str] = (),
) -> list[MatchedPitfall]:
    """Returns the pitfalls a learner's run on the practice cases reproduces, closest first, after those
    the harness named (`rejected`, from any run)."""
    names = named_by_check(problem, [*rejected, *rejections(run)])
    returned = {i: ran.returned for i, ran in run.cases.items() if ran.returned is not None}
    if not returned:
        return names
    paths = course.pitfall_paths(problem)
    if paths and course.reference_path(problem).is_file():
        request = TrustedRequest(problem, {REFERENCE: course.reference_path(problem), **paths}, practice)
        store = practice_store(limits.settings)
        running = TrustedOutputs([request], limits, store).start()
        try:
            results = running.result(problem.id)
        finally:
            running.cancel()  # over already: this waits for its folder to go
        if isinstance(results[REFERENCE], str):
            return names  # the broken reference is reported where the submission is compared with it
        reference = arrays(results.pop(REFERENCE))
    elif stored is not None:
        results, reference = stored.pitfalls(practice), stored.reference(practice)
    else:
        return names
    outputs = {label: arrays(result) for label, result in results.items() if isinstance(result, dict)}
    families = {case.index: case.family for case in practice}
    found = [matched(p) for p in diagnose(problem, returned, reference, outputs, families)]
    return names + [pitfall for pitfall in found if pitfall not in names]
