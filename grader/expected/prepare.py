"""`grade prepare`: computes once, ahead of grading, what grading reads from the course's caches, as an
autograder image's set-up step (ci/gradescope/setup.sh).

It runs the reference and every pitfall file on the practice cases (the outputs that name a wrong answer, kept
in the practice store) and, with $GRADE_SECRET set, the reference on the hidden cases, kept in the hidden
store, a folder only its owner may open (grader/expected/output_cache.py). Grading then starts no trusted
child at all: a fresh container pays for the learner's code and little else. Running it compiles the course's
own code too, which fills the course's compilation cache."""

from __future__ import annotations

from dataclasses import dataclass

from grader.course.cases import PROFILE_CASE, Case, make_cases
from grader.course.problems import Course, Problem
from grader.errors import CourseError
from grader.expected.output_cache import hidden_store, practice_store
from grader.expected.trusted import (
    REFERENCE,
    Outputs,
    TrustedOutputs,
    TrustedRequest,
    reference_outputs_or_raise,
)
from grader.running.limits import Limits


def _requests(
    course: Course, problems: list[Problem], secret: str | None, trace_pitfalls: bool = False
) -> list[TrustedRequest]:
    requests = []
    for problem in problems:
        paths = {REFERENCE: course.reference_path(problem)}
        if not paths[REFERENCE].is_file():
            raise CourseError(f"no reference at {paths[REFERENCE]}: this needs the instructor's copy")
        if secret is None:
            paths |= course.pitfall_paths(problem)
        cases = make_cases(problem, secret)
        traced = tuple(paths) if trace_pitfalls else (REFERENCE,)
        profile_case = None if secret else cases[PROFILE_CASE]
        requests.append(TrustedRequest(problem, paths, cases, profile_case, traced))
    return requests


@dataclass(frozen=True)
class Practice:
    """One problem's practice cases, the outputs of the reference and every pitfall file on them (by label),
    and the reference's precision profile on case PROFILE_CASE ({"error": ...} if it could not be made);
    with `trace_pitfalls`, every pitfall file's profile there too (`profiles`, by label)."""

    cases: list[Case]
    outputs: dict[str, Outputs]
    profile: dict | None
    profiles: dict[str, dict] | None = None


def practice_outputs(
    course: Course, problems: list[Problem], limits: Limits, trace_pitfalls: bool = False
) -> dict[str, Practice]:
    """Each problem's `Practice` (by problem id), from the practice store or computed in one trusted child
    and kept there; CourseError when a file of the course fails. `trace_pitfalls`: the pitfall files'
    precision profiles too, which a learner copy needs to name a mistake as the course does."""
    requests = _requests(course, problems, None, trace_pitfalls)
    store = practice_store(limits.settings)
    running = TrustedOutputs(requests, limits, store, profiles=store).start()
    practice = {}
    for request in requests:
        results = running.result(request.problem.id)
        reference_outputs_or_raise(results, REFERENCE, request.paths[REFERENCE])
        for label, why in results.items():
            if isinstance(why, str):
                failed = request.paths[label]
                raise CourseError(f"the pitfall file {failed} failed on a practice case:\n{why}")
        profile = running.reference_profile(request.problem.id)
        profiles = {label: running.profile(request.problem.id, label) for label in request.traced}
        practice[request.problem.id] = Practice(request.cases, results, profile, profiles)
    return practice


def prepare_course(course: Course, secret: str | None, limits: Limits) -> list[str]:
    """Fills the practice store and, with `secret`, the hidden store; returns a line per problem."""
    problems = course.problems()
    lines = []
    for problem_id, done in practice_outputs(course, problems, limits).items():
        profiled = done.profile is not None and "error" not in done.profile
        lines.append(
            f"{problem_id}: practice outputs of the reference and {len(done.outputs) - 1} pitfall files"
            + (", the reference's precision profile" if profiled else "")
        )
    if secret is None:
        return lines
    store = hidden_store(limits.settings)
    if store is None:
        raise CourseError("the cache is off (GRADE_CACHE_DIR=off): there is nowhere to keep hidden outputs")
    requests = _requests(course, problems, secret)
    running = TrustedOutputs(requests, limits, store).start()
    for number, request in enumerate(requests):
        reference_outputs_or_raise(running.result(request.problem.id), REFERENCE, request.paths[REFERENCE])
        lines[number] += f"; the reference's outputs on {len(request.cases)} hidden cases"
    lines.append(f"hidden outputs kept in {store.folder} (readable by its owner only)")
    return lines
