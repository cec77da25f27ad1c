"""The sandboxes around learner code, as the grader sees them: the GRADE_SANDBOX command put before the
child, and the Landlock restriction the child applies to itself (grader/child.py, grader/landlock.py):
what the child is asked for, and what it reports."""

from __future__ import annotations

import dataclasses
import shutil

from grader.errors import CourseError, UsageError
from grader.limits import Limits
from grader.problems import Problem
from grader.results import Sandbox
from grader.settings import LANDLOCK_ENV, REQUIRE_SANDBOX_ENV, SANDBOX_ENV, Settings


def sandbox_prefix(settings: Settings, problem: Problem) -> list[str]:
    """Returns the command put before a learner's child interpreter: GRADE_SANDBOX with `{solutions}`
    and `{course}` replaced by the course's folders; empty when unset."""
    course = problem.directory.parent.parent
    places = {"{course}": str(course), "{solutions}": str(course / "solutions")}
    words = []
    for word in settings.sandbox_words():
        for placeholder, path in places.items():
            word = word.replace(placeholder, path)
        words.append(word)
    return words


def check_sandbox_required(limits: Limits) -> None:
    """Raises UsageError when a sandbox is required but switched off with no GRADE_SANDBOX to stand in; a
    kernel without Landlock is found by the child itself, which then grades nothing (grader/child.py)."""
    settings = limits.settings
    if settings.require_sandbox and not settings.landlock and not settings.sandbox_words():
        raise UsageError(
            f"a sandbox is required (--require-sandbox or {REQUIRE_SANDBOX_ENV}=1), but Landlock is switched "
            f"off ({LANDLOCK_ENV}=off) and {SANDBOX_ENV} is not set"
        )


def check_sandbox(settings: Settings) -> None:
    """Raises CourseError when GRADE_SANDBOX is set but names a command that is not installed."""
    words = settings.sandbox_words()
    if words and shutil.which(words[0]) is None:
        raise CourseError(f"{SANDBOX_ENV} names {words[0]!r}, which is not installed")


def landlock_request(
    limits: Limits, problems: list[Problem], trusted: bool, prefix: list[str]
) -> dict | None:
    """What a child needs to restrict itself with Landlock: the folders it must never read (the course
    checkouts, which hold the solutions); None for the course's own code (unless `landlock_course`) or when
    switched off. With `require_sandbox` and no GRADE_SANDBOX the child grades nothing unless it holds."""
    if not limits.settings.landlock or (trusted and not limits.landlock_course):
        return None
    courses = sorted({str(problem.directory.parent.parent) for problem in problems})
    return {"forbidden": courses, "required": limits.settings.require_sandbox and not prefix}


def unreported(limits: Limits, prefix: list[str]) -> Sandbox:
    """What protects a child before it reports its sandbox: no Landlock, and why; the GRADE_SANDBOX
    command."""
    if not limits.settings.landlock:
        reason = f"switched off: {LANDLOCK_ENV}=off"
    else:
        reason = "the child stopped before it reported its sandbox"
    return Sandbox(reason=reason, command=" ".join(prefix))


def reported(event: dict, before: Sandbox) -> Sandbox:
    """`before` with the protections a child reports (learner code has not run yet when it does), checked
    field by field."""
    abi = event.get("abi")
    return dataclasses.replace(
        before,
        abi=abi if isinstance(abi, int) else 0,
        **{key: event.get(key) is True for key in ("filesystem", "network", "signals")},
        reason=str(event.get("reason", ""))[:300],
    )
