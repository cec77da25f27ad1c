"""Verdicts: one case's result from what the learner's run produced and the expected output, and one
problem's status and one-line message from its cases."""

from __future__ import annotations

import numpy as np

from grader.cases import Case, describe_inputs
from grader.compare import compare_outputs
from grader.limits import Limits, describe_size
from grader.outcomes import LoadFailure, RunOutcome
from grader.problems import Problem
from grader.protocol import Raised
from grader.results import CaseResult, Status


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
        reason = "an earlier case stopped the run" if outcome.stopped else "the submission did not load"
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
    assert ran.returned is not None and expected is not None
    comparison = compare_outputs(ran.returned, expected, problem.tolerance, problem.returns)
    got = ran.returned.values if ran.returned.kind == "array" else None
    return CaseResult(
        case.index,
        case.family,
        Status.PASS if comparison.passed else Status.FAIL,
        message=comparison.message,
        expected=expected,
        got=got,
        max_abs_err=comparison.max_abs_err,
        max_rel_err=comparison.max_rel_err,
        error_ratio=comparison.error_ratio,
        seconds=ran.seconds,
        inputs=inputs,
        seed=seed,
    )


def summarise(cases: list[CaseResult], load_failure: LoadFailure | None) -> tuple[Status, str]:
    if load_failure:
        return Status.ERROR, load_failure.message
    errors = [case for case in cases if case.status is Status.ERROR]
    failures = [case for case in cases if case.status is Status.FAIL]
    if errors:
        first = errors[0]
        if all(case.message == first.message for case in errors) and len(errors) == len(cases):
            return Status.ERROR, f"{first.message} (every case)"
        return Status.ERROR, f"{first.label}: {first.message}"
    if failures:
        first = failures[0]
        if all(case.max_abs_err is not None for case in failures):  # numbers, just too far off
            return Status.FAIL, f"{len(failures)} of {len(cases)} cases outside the tolerance"
        if len(failures) == len(cases) and all(case.message == first.message for case in failures):
            return Status.FAIL, f"{first.message} (every case)"
        return Status.FAIL, f"{len(failures)} of {len(cases)} cases failed; {first.label}: {first.message}"
    return Status.PASS, f"all {len(cases)} cases within the tolerance"
