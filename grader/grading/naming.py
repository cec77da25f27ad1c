"""Naming a learner's mistake, always on the practice cases, so that a submission gets the same name in
practice and hidden mode.

The outputs of the reference and of every pitfall file on the practice cases are public and kept on disk
(or stored in a learner copy), so naming costs one run of the learner's code on those cases: in hidden
mode the learner's child runs them after the hidden cases, and only a submission that failed waits for
them. A pitfall is named when its file explains the learner's outputs on every practice case (the same
verdict everywhere, the same numbers wherever the learner failed: grader/grading/diagnose.py), or when the
problem's harness rejected what the learner wrote and named the pitfall. When several explain them, the
dtypes the learner's code ran (its precision profile) choose the one whose file ran the same dtypes; where
they cannot, the names are given as equals. When none does, none is named, and the nearest miss is told.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from grader.course.cases import PROFILE_CASE, Case
from grader.course.problems import Course, Problem
from grader.expected.output_cache import practice_store
from grader.expected.stored import StoredOutputs
from grader.expected.trusted import REFERENCE, TrustedOutputs, TrustedRequest, arrays
from grader.grading.diagnose import Diagnosis, diagnose
from grader.profile.compare import profile_distance, profile_made, runs_the_mistakes_dtypes
from grader.protocol.payloads import Returned
from grader.results import ClosestPitfall, MatchedPitfall
from grader.running.limits import Limits
from grader.running.outcomes import RunOutcome

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


@dataclass(frozen=True)
class Naming:
    """What the grader says of a failed answer's mistake: the pitfalls named, first the lead; whether they
    are equals (the numbers and the dtypes do not tell them apart); the nearest miss when none is named."""

    named: list[MatchedPitfall] = field(default_factory=list)
    tied: bool = False
    closest: ClosestPitfall | None = None
    compared: bool = False  # whether the outputs were compared with the pitfalls' at all
    # the answer's outputs on the practice cases; where the harness rejected what it wrote, a phrase
    practice: dict[int, Returned | str] = field(default_factory=dict)


def name_mistake(
    course: Course,
    problem: Problem,
    practice: list[Case],
    run: RunOutcome,
    limits: Limits,
    stored: StoredOutputs | None = None,
    rejected: Iterable[str] = (),
) -> Naming:
    """Names the pitfalls a learner's run on the practice cases reproduces, after those the harness named
    (`rejected`, from any run)."""
    names = named_by_check(problem, [*rejected, *rejections(run)])
    returned = {i: ran.returned for i, ran in run.cases.items() if ran.returned is not None}
    outputs_kept = {**returned, **_rejected_cases(run)}
    unnamed = Naming(names, practice=outputs_kept)
    if not returned:
        return unnamed
    paths = course.pitfall_paths(problem)
    files = {REFERENCE: course.reference_path(problem), **paths}
    if paths and files[REFERENCE].is_file():
        results = _trusted_outputs(TrustedRequest(problem, files, practice), limits)
        if isinstance(results[REFERENCE], str):
            return unnamed  # the broken reference is reported where the submission is compared with it
        reference = arrays(results.pop(REFERENCE))
    elif stored is not None:
        results, reference = stored.pitfalls(practice), stored.reference(practice)
        files = {}  # a learner copy has no pitfall files to trace
    else:
        return unnamed
    outputs = {label: arrays(result) for label, result in results.items() if isinstance(result, dict)}
    diagnosis = diagnose(problem, returned, reference, outputs, [case.index for case in practice])
    if files:
        profiles = _profiles(problem, diagnosis, run.profile, files, practice, limits)
    else:
        profiles = _stored_profiles(diagnosis, run.profile, stored, practice)
    diagnosis = _same_dtypes(diagnosis, run.profile, profiles)
    found, tied = _break_tie(diagnosis, run.profile, profiles)
    named = names + [matched(p) for p in found if matched(p) not in names]
    closest = _closest(diagnosis, practice) if not named else None
    complete = all(case.index in returned for case in practice)  # else no pitfall file's verdicts
    return Naming(named, tied and not names, closest, compared=complete, practice=outputs_kept)


def _rejected_cases(run: RunOutcome) -> dict[int, str]:
    """The cases whose output the problem's harness rejected, each as what it named (never its message,
    which may quote what the learner's code wrote)."""
    return {
        i: f"rejected by the problem's check ({ran.raised.pitfall or 'no pitfall named'})"
        for i, ran in run.cases.items()
        if ran.raised and ran.raised.rejected
    }


def naming_note(naming: Naming) -> str:
    """What the one-line message of a failed problem adds about its mistake."""
    quoted = [repr(pitfall.name) for pitfall in naming.named]
    if naming.tied:
        return f"; this matches the named pitfalls {', '.join(quoted[:-1])} and {quoted[-1]}, equally"
    if quoted:
        return f"; this matches the named pitfall {quoted[0]}"
    if naming.compared:
        return "; no known mistake matches"
    return ""


def _trusted_outputs(request: TrustedRequest, limits: Limits) -> dict:
    running = TrustedOutputs([request], limits, practice_store(limits.settings)).start()
    try:
        return running.result(request.problem.id)
    finally:
        running.cancel()  # over already: this waits for its folder to go


def _profiles(
    problem: Problem,
    diagnosis: Diagnosis,
    learner: dict | None,
    files: dict,
    practice: list[Case],
    limits: Limits,
) -> dict[str, dict] | None:
    """The precision profiles of the reference and of every pitfall file that explains the numbers, on the
    practice case the learner's code was traced on (traced once, then kept in the practice store); None
    when nothing is named or the learner's code has no profile (a learner copy: `_stored_profiles`)."""
    if not diagnosis.named or not profile_made(learner) or not files:
        return None
    labels = [REFERENCE, *(label for pitfall in diagnosis.named for label in diagnosis.labels[pitfall.name])]
    case = next((c for c in practice if c.index == PROFILE_CASE), practice[0])
    request = TrustedRequest(problem, {label: files[label] for label in labels}, [], case, tuple(labels))
    running = TrustedOutputs([request], limits, profiles=practice_store(limits.settings)).start()
    try:
        return {label: running.profile(problem.id, label) or {"error": "none"} for label in labels}
    finally:
        running.cancel()


def _stored_profiles(
    diagnosis: Diagnosis, learner: dict | None, stored: StoredOutputs | None, practice: list[Case]
) -> dict[str, dict] | None:
    """In a learner copy: the profiles of the reference and of the pitfall files that explain the numbers,
    as `grade export` stored them (their summaries); None where one of them is missing."""
    if stored is None or not diagnosis.named or not profile_made(learner):
        return None
    case = next((c for c in practice if c.index == PROFILE_CASE), practice[0])
    found = stored.profiles(case)
    labels = [REFERENCE, *(label for pitfall in diagnosis.named for label in diagnosis.labels[pitfall.name])]
    return {label: found[label] for label in labels} if all(label in found for label in labels) else None


def _same_dtypes(diagnosis: Diagnosis, learner: dict | None, profiles: dict[str, dict] | None) -> Diagnosis:
    """The diagnosis without the pitfalls whose files the numbers match but the dtypes do not: where a
    pitfall's file runs other dtypes than the reference, the learner's code must run the file's (a frozen
    forward copy and a gradient divided by S in fp16 give the same numbers; only one divides in fp16)."""
    if profiles is None:
        return diagnosis
    kept = {
        pitfall.name: [
            label
            for label in diagnosis.labels[pitfall.name]
            if runs_the_mistakes_dtypes(learner, profiles[label], profiles[REFERENCE])
        ]
        for pitfall in diagnosis.named
    }
    named = [pitfall for pitfall in diagnosis.named if kept[pitfall.name]]
    return Diagnosis(named, {p.name: kept[p.name] for p in named}, diagnosis.nearest)


def _break_tie(
    diagnosis: Diagnosis, learner: dict | None, profiles: dict[str, dict] | None
) -> tuple[list, bool]:
    """The named pitfalls, the one whose file ran the learner's dtypes first when several explain the
    numbers; and whether they stay equals (no profiles to compare, or none closer than another)."""
    named = diagnosis.named
    if len(named) < 2:
        return named, False
    if profiles is None:
        return named, True
    distances = [profile_distance(learner, profiles[diagnosis.labels[p.name][0]]) for p in named]
    if any(d is None for d in distances):
        return named, True
    best = min(distances)
    if distances.count(best) > 1:
        return named, True
    lead = distances.index(best)
    return [named[lead], *named[:lead], *named[lead + 1 :]], False


def _closest(diagnosis: Diagnosis, practice: list[Case]) -> ClosestPitfall | None:
    miss = diagnosis.nearest
    if miss is None:
        return None
    number = {case.index: position + 1 for position, case in enumerate(practice)}
    return ClosestPitfall(
        miss.pitfall.name,
        miss.pitfall.title,
        tuple(number[i] for i in miss.agrees),
        tuple(number[i] for i in miss.differs),
    )
