"""Verdicts: one case's result from what the learner's run produced and the expected output, and one
problem's status and one-line message from its cases."""

from __future__ import annotations

import numpy as np

from grader.course.cases import Case, describe_inputs
from grader.course.problems import Problem
from grader.grading.compare import compare_outputs
from grader.grading.naming import Naming, naming_note
from grader.protocol.payloads import Raised, Returned
from grader.results import CaseResult, PrecisionProfile, ProblemResult, Status
from grader.running.limits import Limits, describe_size
from grader.running.outcomes import LoadFailure, RunOutcome


def _limit_message(raised: Raised, limits: Limits) -> str:
    """Returns the reason for an exception that means a limit was hit, else ""."""
    if raised.limit == "memory":
        limit = (
            f": the limit is {describe_size(limits.memory_bytes)} (--memory-limit)"
            if limits.memory_bytes
            else ""
        )
        return f"out of memory ({raised.type_name}){limit}"
    if raised.limit == "output":
        return f"wrote more than {describe_size(limits.output_bytes)} of output (the output limit)"
    return ""


NARROW_FLOATS = ("float16", "bfloat16", "float8", "float4")  # dtype names that start so are under 32 bits
NARROWER = ", narrower than the float32 the statement asks for: cast the result to float32"


def narrower_than_promised(returned: Returned, returns: str) -> bool:
    """Whether an array promised as float32 came back in a 16-bit or 8-bit float dtype. Its values rounded
    to that dtype may or may not stay within the tolerance, case by case; the dtype fails on every case."""
    promised = returns.startswith("float32")
    return promised and returned.kind == "array" and returned.dtype.startswith(NARROW_FLOATS)


def case_result(
    case: Case,
    outcome: RunOutcome,
    expected: np.ndarray | None,
    problem: Problem,
    hidden: bool,
    limits: Limits,
) -> CaseResult:
    inputs = "" if hidden else describe_inputs(case)
    seed = None if hidden else case.seed
    ran = outcome.cases.get(case.index)
    if ran is None:
        if outcome.stopped_in_case == case.index:
            return CaseResult(
                case.index, case.family, Status.ERROR, message=outcome.stopped, inputs=inputs, seed=seed
            )
        if outcome.grader_failure:
            reason = "the grader failed"
        elif outcome.load_failure:
            reason = "the submission did not load"
        else:
            reason = "an earlier case stopped the run" if outcome.stopped else "no result came back"
        return CaseResult(case.index, case.family, Status.NOT_RUN, message=f"not run: {reason}")
    if ran.raised:
        raised = ran.raised
        if raised.rejected:  # it ran, but what it wrote fails the problem's check
            return CaseResult(
                case.index, case.family, Status.FAIL, message=raised.message, seconds=ran.seconds
            )
        if raised.not_implemented:  # the untouched stub: its traceback teaches nothing
            message = f"not implemented yet ({raised.message})" if raised.message else "not implemented yet"
            return CaseResult(case.index, case.family, Status.ERROR, message=message, seconds=ran.seconds)
        message = _limit_message(raised, limits) or (
            f"raised {raised.type_name}: {raised.message}" if raised.message else f"raised {raised.type_name}"
        )
        return CaseResult(
            case.index,
            case.family,
            Status.ERROR,
            message=message,
            traceback=raised.traceback,
            seconds=ran.seconds,
            inputs=inputs,
            seed=seed,
        )
    if ran.returned is None or expected is None:  # nothing to compare it with: never a pass
        return CaseResult(case.index, case.family, Status.NOT_RUN, message="not compared: no expected output")
    comparison = compare_outputs(ran.returned, expected, problem.tolerance, problem.returns)
    got = ran.returned.values if ran.returned.kind == "array" else None
    passed, message = comparison.passed, comparison.message
    narrower = narrower_than_promised(ran.returned, problem.returns)
    if narrower:
        passed = False
        message = f"returned an array of dtype {ran.returned.dtype}{NARROWER}"
        message += "" if comparison.passed else f" ({comparison.message})"
    return CaseResult(
        case.index,
        case.family,
        Status.PASS if passed else Status.FAIL,
        message=message,
        expected=expected,
        got=got,
        max_abs_err=comparison.max_abs_err,
        max_rel_err=comparison.max_rel_err,
        error_ratio=comparison.error_ratio,
        seconds=ran.seconds,
        inputs=inputs,
        seed=seed,
        narrower=narrower,
    )


GRADER_FAULTS = ("harness", "sandbox")  # load failures not the learner's: the course's code, the machine


def summarise(
    cases: list[Case], results: list[CaseResult], outcome: RunOutcome, limits: Limits
) -> tuple[Status, str, str]:
    """The problem's verdict: its status, a one-line reason, and whose fault a status other than pass is
    ("learner" or "grader"; "" for a pass). The one place that decides a pass, which needs positive
    evidence: every case asked for came back from the learner's run, was compared here and is within the
    tolerance, and nothing went wrong on the way. Anything else (a case not run, a run the grader could not
    make or read, a protocol error) is an error with its reason, never a pass."""
    if not limits.settings.protects("positive-pass"):
        return _summarise_as_once(results, outcome.load_failure)
    if outcome.grader_failure:
        return Status.ERROR, f"the grader failed, not your code: {outcome.grader_failure}", "grader"
    if outcome.load_failure:
        fault = "grader" if outcome.load_failure.kind in GRADER_FAULTS else "learner"
        return Status.ERROR, outcome.load_failure.message, fault
    if outcome.protocol_error:
        return Status.ERROR, outcome.protocol_error, "learner"
    if not cases:
        return Status.ERROR, "the problem has no case to grade", "grader"
    errors = [case for case in results if case.status is Status.ERROR]
    failures = [case for case in results if case.status is Status.FAIL]
    if errors:
        first = errors[0]
        if all(case.message == first.message for case in errors) and len(errors) == len(results):
            return Status.ERROR, f"{first.message} (every case)", "learner"
        return Status.ERROR, f"{first.label}: {first.message}", "learner"
    if failures:
        first = failures[0]
        narrow = [case for case in failures if case.narrower]
        if narrow:  # the dtype, whatever the values: on every case, so the message says it first
            return Status.FAIL, f"{len(narrow)} of {len(results)} cases: {narrow[0].message}", "learner"
        if all(case.max_abs_err is not None for case in failures):  # numbers, just too far off
            return Status.FAIL, f"{len(failures)} of {len(results)} cases outside the tolerance", "learner"
        if len(failures) == len(results) and all(case.message == first.message for case in failures):
            return Status.FAIL, f"{first.message} (every case)", "learner"
        message = f"{len(failures)} of {len(results)} cases failed; {first.label}: {first.message}"
        return Status.FAIL, message, "learner"
    passed = {case.index for case in results if case.status is Status.PASS}
    missing = [case for case in cases if case.index not in passed]
    if missing or len(results) != len(cases):
        label = f"case {missing[0].index + 1} ({missing[0].family})" if missing else "a case"
        return Status.ERROR, f"no result came back for {label}, and the grader cannot tell why", "grader"
    return Status.PASS, f"all {len(cases)} cases within the tolerance", ""


def _summarise_as_once(
    results: list[CaseResult], load_failure: LoadFailure | None
) -> tuple[Status, str, str]:
    """The verdict as it was before a pass needed positive evidence: a case that never ran counted as
    nothing wrong (GRADE_TEST_UNPROTECTED=positive-pass: the tests that show why it may not)."""
    if load_failure:
        return (
            Status.ERROR,
            load_failure.message,
            "grader" if load_failure.kind in GRADER_FAULTS else "learner",
        )
    errors = [case for case in results if case.status is Status.ERROR]
    failures = [case for case in results if case.status is Status.FAIL]
    if errors:
        return Status.ERROR, f"{errors[0].label}: {errors[0].message}", "learner"
    if failures:
        return Status.FAIL, f"{len(failures)} of {len(results)} cases failed", "learner"
    return Status.PASS, f"all {len(results)} cases within the tolerance", ""


def problem_result(
    problem: Problem,
    outcome: RunOutcome,
    case_results: list[CaseResult],
    verdict: tuple[Status, str, str],
    naming: Naming,
    profile: PrecisionProfile | None,
    submission: str,
    seconds: float,
) -> ProblemResult:
    """One problem's result: its verdict (`summarise`'s status, message and fault), the mistake named, the
    precision profile, and what the run printed."""
    status, message, fault = verdict
    message += naming_note(naming)
    matched = naming.named
    return ProblemResult(
        problem=problem.id,
        title=problem.title,
        status=status,
        submission=submission,
        message=message,
        fault=fault,
        cases=tuple(case_results),
        pitfall=matched[0] if matched else None,
        also_matches=tuple(matched[1:]),
        pitfall_tied=naming.tied,
        closest=naming.closest,
        rtol=problem.tolerance.rtol,
        atol=problem.tolerance.atol,
        points=problem.points,
        function=problem.function,
        segments=problem.segments,
        detail=outcome.load_failure.detail if outcome.load_failure else "",
        stdout=outcome.stdout,
        stderr=outcome.stderr,
        seconds=seconds,
        sandbox=outcome.sandbox,
        profile=profile,
        practice_outputs={index: _kept(returned) for index, returned in naming.practice.items()},
    )


def _kept(returned: Returned | str) -> np.ndarray | str:
    """A practice output as a failed answer's result keeps it: a float array's values, else what it was
    (without any text of the learner's value), or why the problem's harness rejected it."""
    if isinstance(returned, str):
        return returned
    if returned.kind == "array" and returned.is_float:
        return returned.values
    return returned.describe() if returned.kind == "array" else f"a {returned.type_name}"


def refused_result(problem: Problem, shown: str, reason: str) -> ProblemResult:
    """The result of a file that cannot be graded as a submission: the learner's error, nothing run."""
    return ProblemResult(
        problem=problem.id,
        title=problem.title,
        status=Status.ERROR,
        submission=shown,
        message=reason,
        fault="learner",
        rtol=problem.tolerance.rtol,
        atol=problem.tolerance.atol,
        points=problem.points,
        function=problem.function,
        segments=problem.segments,
    )
