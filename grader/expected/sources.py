"""Where the expected outputs of a problem on some cases come from, behind one interface chosen once per
grader: the reference solution run live in a trusted child (its practice-case outputs kept in the on-disk
output cache, and its hidden-case outputs read from there when `grade prepare` kept them; see
grader/expected/output_cache.py), or, in a learner copy with no solutions/, the outputs stored at export
(grader/expected/stored.py), which cover the practice cases only."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Protocol

import numpy as np

from grader.course.cases import SECRET_ENV, Case
from grader.course.problems import Course, Problem
from grader.errors import CourseError
from grader.expected.output_cache import OutputStore, hidden_store, practice_store
from grader.expected.stored import StoredOutputs, load_stored
from grader.expected.trusted import REFERENCE, TrustedOutputs, TrustedRequest, reference_outputs_or_raise
from grader.running.limits import Limits

# Seconds a run waits, at its end, for a reference profile it started and never needed (the answer passed):
# once kept, no later run traces it again (the wait happens once per reference and platform).
PROFILE_WAIT = 30.0


class References(Protocol):
    """The reference outputs of some problems on their cases, being computed or already there."""

    def outputs(self, problem: Problem) -> dict[int, np.ndarray]:
        """One problem's reference outputs, waiting for them; CourseError when the reference failed."""
        ...

    def ready(self, problem: Problem) -> bool:
        """Whether `outputs(problem)` would return at once."""
        ...

    def profile(self, problem: Problem) -> dict | None:
        """The reference's precision profile on the problem's profile case (grader/profile/profiler.py),
        waiting for it; None when none was asked for or none is stored."""
        ...

    def cancel(self) -> None:
        """Nothing more will be compared with these outputs: stop computing them."""
        ...


class ExpectedOutputs(Protocol):
    def start(
        self, problems: list[Problem], cases: dict[str, list[Case]], profile: dict[str, Case] | None = None
    ) -> References:
        """Starts getting the reference outputs of `problems` on `cases` (by problem id), and its precision
        profile on the practice case `profile` names for a problem; returns at once."""
        ...

    def stored(self, problem: Problem) -> StoredOutputs | None:
        """The outputs a learner copy stores for the problem (its pitfalls' too, for naming); None where the
        course's files run live."""
        ...


def wait_all(references: References, problems: list[Problem]) -> None:
    """Waits until every problem's reference outputs are there; a failed reference is reported when a
    submission is graded against it."""
    for problem in problems:
        with contextlib.suppress(CourseError):
            references.outputs(problem)


class _LiveReferences:
    def __init__(self, outputs: TrustedOutputs, paths: dict[str, Path]) -> None:
        self._outputs, self._paths = outputs, paths

    def outputs(self, problem: Problem) -> dict[int, np.ndarray]:
        return reference_outputs_or_raise(
            self._outputs.result(problem.id), REFERENCE, self._paths[problem.id]
        )

    def ready(self, problem: Problem) -> bool:
        return self._outputs.ready(problem.id)

    def profile(self, problem: Problem) -> dict | None:
        return self._outputs.reference_profile(problem.id)

    def cancel(self) -> None:
        if sys.exc_info()[1] is None:  # not while an error or ^C is on its way out
            self._outputs.settle_profiles(PROFILE_WAIT)
        self._outputs.cancel()


class LiveReference:
    """The instructor's checkout: the reference solution runs in one trusted child for every problem, on
    the cases whose outputs `store` does not hold; with `keep`, what it computes is stored."""

    def __init__(self, course: Course, limits: Limits, store: OutputStore | None, keep: bool) -> None:
        self.course, self.limits, self.store, self.keep = course, limits, store, keep

    def stored(self, problem: Problem) -> StoredOutputs | None:
        return None

    def start(
        self, problems: list[Problem], cases: dict[str, list[Case]], profile: dict[str, Case] | None = None
    ) -> References:
        paths = {problem.id: self.course.reference_path(problem) for problem in problems}
        for problem in problems:
            if not paths[problem.id].is_file():
                raise CourseError(
                    f"no reference solution at {paths[problem.id]}: this checkout cannot grade {problem.id} "
                    "(grading needs the instructor's copy of the course)"
                )
        profile = profile or {}
        requests = [
            TrustedRequest(p, {REFERENCE: paths[p.id]}, cases[p.id], profile.get(p.id)) for p in problems
        ]
        profiles = practice_store(self.limits.settings)  # a practice case's profile: kept in either mode
        running = TrustedOutputs(requests, self.limits, self.store, self.keep, profiles)
        return _LiveReferences(running.start(), paths)


class _StoredReferences:
    def __init__(self, outputs: dict[str, dict[int, np.ndarray]], profiles: dict[str, dict | None]) -> None:
        self._outputs, self._profiles = outputs, profiles

    def outputs(self, problem: Problem) -> dict[int, np.ndarray]:
        return self._outputs[problem.id]

    def ready(self, problem: Problem) -> bool:
        return True

    def profile(self, problem: Problem) -> dict | None:
        return self._profiles.get(problem.id)

    def cancel(self) -> None:
        pass


class StoredReference:
    """A learner copy (no solutions/): the reference outputs stored at export, practice cases only."""

    def __init__(self) -> None:
        self._stored: dict[str, StoredOutputs | None] = {}

    def stored(self, problem: Problem) -> StoredOutputs | None:
        """The problem's stored outputs, read once (the reference and the pitfalls share them)."""
        if problem.id not in self._stored:
            self._stored[problem.id] = load_stored(problem)
        return self._stored[problem.id]

    def start(
        self, problems: list[Problem], cases: dict[str, list[Case]], profile: dict[str, Case] | None = None
    ) -> References:
        outputs, profiles = {}, {}
        for problem in problems:
            kept = self.stored(problem)
            if kept is None:
                raise CourseError(
                    f"no reference solution at {problem.directory.parent.parent / 'solutions'} and no stored "
                    f"outputs: this checkout cannot grade {problem.id} (grading needs the instructor's copy "
                    "of the course, or a learner copy made by `grade export`)"
                )
            outputs[problem.id] = kept.reference(cases[problem.id])
            if profile and problem.id in profile:
                profiles[problem.id] = kept.reference_profile(profile[problem.id])
        return _StoredReferences(outputs, profiles)


def expected_outputs(course: Course, secret: str | None, limits: Limits) -> ExpectedOutputs:
    """Chooses, once, where a grader's expected outputs come from: a checkout with solutions/ runs the
    reference; a learner copy reads what export stored, and cannot grade hidden cases."""
    if (course.root / "solutions").is_dir():
        if secret is None:
            return LiveReference(course, limits, practice_store(limits.settings), keep=True)
        kept = hidden_store(limits.settings)  # what `grade prepare` kept; grading never writes there
        return LiveReference(course, limits, kept, keep=False)
    if secret:
        raise CourseError(
            "hidden cases need the instructor's copy of the course (with solutions/): this is a learner "
            f"copy, which grades the practice cases only; unset {SECRET_ENV} to grade them"
        )
    return StoredReference()
