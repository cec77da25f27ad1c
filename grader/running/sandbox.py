"""The sandboxes around learner code, as the grader sees them: the GRADE_SANDBOX command put before the child,
and the Landlock restriction the child applies to itself (grader/child/main.py, grader/child/landlock.py):
what the child is asked for, and what it reports."""

from __future__ import annotations

import dataclasses
import shutil

from grader.course.problems import Problem
from grader.errors import CourseError, UsageError
from grader.running.limits import Limits
from grader.running.packages import may_use_gpu
from grader.sandbox_report import REPORTED, Sandbox
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
    kernel without Landlock is found by the child itself, which then grades nothing (grader/child/main.py)."""
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


def sandbox_request(limits: Limits, problems: list[Problem], trusted: bool, prefix: list[str]) -> dict | None:
    """What a child is asked to close before it imports a submission (grader/child/main.py): with Landlock,
    the folders it must never read (the course checkouts, which hold the solutions; None where Landlock is
    off); whether it grades nothing unless Landlock holds (`require_sandbox` and no GRADE_SANDBOX); whether it
    closes sockets with seccomp. None for the course's own code, unless `landlock_course`."""
    settings = limits.settings
    if trusted and not limits.landlock_course:
        return None
    courses = sorted({str(problem.directory.parent.parent) for problem in problems})
    return {
        "forbidden": courses if settings.landlock else None,
        "required": settings.require_sandbox and not prefix,
        "sockets": settings.protects("socket-filter"),
        "ipc": settings.protects("kernel-objects"),
        "powers": settings.protects("no-privileges"),
    }


def process_mode(limits: Limits, trusted: bool) -> list[str]:
    """The child's last argument, whether it enters a PID namespace of its own
    (grader/child/process_namespace.py): learners' do ("isolate"), except where JAX may start CUDA, which
    fails in one (cuInit gives CUDA_ERROR_OPERATING_SYSTEM): "gpu", and the orphan hunt holds instead
    (grader/running/processes.py)."""
    if trusted or not limits.settings.protects("process-namespace"):
        return []
    return ["gpu"] if may_use_gpu() else ["isolate"]


def unreported(limits: Limits, prefix: list[str]) -> Sandbox:
    """What protects a child before it reports its sandbox: nothing yet; the GRADE_SANDBOX command."""
    reason = "the child stopped before it reported its sandbox"
    return Sandbox(
        reason=reason if limits.settings.landlock else f"switched off: {LANDLOCK_ENV}=off",
        sockets_reason=reason,
        processes_reason=reason,
        kernel_objects_reason=reason,
        privileges_reason=reason,
        command=" ".join(prefix),
        unprotected=tuple(sorted(limits.settings.unprotected)),
    )


def _text(report: dict, key: str) -> str:
    value = report.get(key, "")
    return value[:300] if isinstance(value, str) else ""


def reported(report: dict, before: Sandbox) -> Sandbox:
    """`before` with the protections a child reports in its ready event (learner code has not run yet when
    it does), checked field by field."""
    abi = report.get("abi")
    replaced = {
        "abi": abi if type(abi) is int and 0 <= abi < 1000 else 0,
        **{key: report.get(key) is True for key in REPORTED},
        "sockets_reason": _text(report, "sockets_reason"),
        "processes_reason": _text(report, "processes_reason"),
        "kernel_objects_reason": _text(report, "kernel_objects_reason"),
        "privileges_reason": _text(report, "privileges_reason"),
    }
    if before.reason.startswith("switched off") and not replaced["filesystem"]:
        return dataclasses.replace(before, **replaced)
    return dataclasses.replace(before, **replaced, reason=_text(report, "reason"))
