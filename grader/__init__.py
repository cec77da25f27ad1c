"""Grader for JAX/Flax mixed-precision exercises.

The package is a folder per part (CONTRIBUTING.md has the map): command/, course/, authoring/, child/,
profile/, running/, expected/, grading/, classroom/, report/, and at this top the plain data every part
passes around (errors, results, sandbox_report, settings) and the public entry points (this module's
grade_function and practice_case, notebook.grade_here, `python -m grader`).

Notebook use:

    from grader import grade_function
    result = grade_function("bf16_train_step", mixed_precision_step)
    print(result.status, result.message)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader.course.cases import SECRET_ENV, make_cases
from grader.course.problems import Course, find_course
from grader.course.secret import environment_secret, take_secret
from grader.errors import UsageError
from grader.grading.grader import Grader
from grader.results import CaseResult, GradeReport, MatchedPitfall, ProblemResult, Status
from grader.running.limits import Limits
from grader.settings import Settings


def _course(course_root: str | Path | None, settings: Settings) -> Course:
    return find_course(Path(course_root) if course_root else None, settings.course_root)


def _grader(course_root: str | Path | None, secret: str | None, timeout: float) -> Grader:
    settings = Settings.from_environment()
    return Grader(
        _course(course_root, settings),
        secret=secret if secret is not None else environment_secret(),
        limits=Limits(timeout, settings=settings),
    )


def grade_function(
    problem_id: str,
    fn: Callable,
    *,
    course_root: str | Path | None = None,
    secret: str | None = None,
    timeout: float = Limits.timeout,
) -> ProblemResult:
    """Grades a function object on the practice cases, called in this process, and returns the same result
    as `grade`. Hidden cases are never graded here: the function could read whatever this process holds, so
    with a secret (given, or in $GRADE_SECRET, which is then wiped from this process) it raises UsageError
    and the function never runs; `grade_file` and the `grade` command grade hidden cases in a child."""
    if secret is not None or environment_secret():
        take_secret()  # out of this process's environment, before any learner code runs again
        raise UsageError(
            "grade_function runs your function in this process, which could read the secret, so it grades "
            "the practice cases only; hidden cases are graded by `grade ID --submission FILE` (or "
            f"grade_file), which runs the code in an isolated child. Unset {SECRET_ENV} here."
        )
    grader = _grader(course_root, None, timeout)
    return grader.grade_function(grader.course.problem(problem_id), fn)


def practice_case(problem_id: str, number: int, *, course_root: str | Path | None = None) -> dict[str, Any]:
    """Returns the inputs of practice case `number` (as the report numbers it, from 1), by name."""
    problem = _course(course_root, Settings.from_environment()).problem(problem_id)
    cases = make_cases(problem)
    if not 1 <= number <= len(cases):
        raise ValueError(f"{problem_id} has practice cases 1 to {len(cases)}")
    return dict(cases[number - 1].inputs)


def grade_file(
    problem_id: str,
    path: str | Path,
    *,
    course_root: str | Path | None = None,
    secret: str | None = None,
    timeout: float = Limits.timeout,
) -> ProblemResult:
    """Grades a submission file in an isolated child process, as `grade ID --submission FILE` does."""
    grader = _grader(course_root, secret, timeout)
    return grader.grade_file(grader.course.problem(problem_id), Path(path))


__all__ = [
    "CaseResult",
    "GradeReport",
    "MatchedPitfall",
    "ProblemResult",
    "Status",
    "grade_file",
    "grade_function",
    "practice_case",
]
