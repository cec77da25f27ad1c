"""`grade watch [ID]`: re-grades the problem whose stub changed, on every save, until interrupted, and moves
on to the next unfinished problem when one passes, as rustlings does.

The file events come from watchfiles (a well-kept Rust-backed watcher): a burst of saves arrives as one
batch, so it is graded once. Each grade runs in the isolated child as `grade ID` does, so a stub that does
not parse or a submission that hangs is a report, never the end of the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from grader.course.checkout import LearnerCheckout
from grader.course.problems import Problem
from grader.results import ProblemResult

QUIET_MS = 300  # saves with less than this between them are one burst, graded once
LONGEST_BURST_MS = 5000  # a burst that goes on longer is graded anyway, at this point


def stub_changes(checkout: LearnerCheckout, stop_event=None, quiet_ms: int = QUIET_MS) -> Iterable[set[Path]]:
    """The stubs of `checkout` that changed, one set per burst of saves, until `stop_event` is set. A burst
    ends when no stub has changed for `quiet_ms` (watchfiles' `step`; its `debounce` is the longest burst)."""
    import watchfiles

    def is_stub(_change, path: str) -> bool:
        return Path(path).name == "stub.py"

    for batch in watchfiles.watch(
        checkout.root / "problems",
        watch_filter=is_stub,
        step=quiet_ms,
        debounce=max(LONGEST_BURST_MS, quiet_ms),
        stop_event=stop_event,
        raise_interrupt=False,
    ):
        yield {Path(path).resolve() for _, path in batch}


def next_unfinished(
    problems: list[Problem], passed: Callable[[Problem], bool], after: Problem
) -> Problem | None:
    """The first problem after `after` (wrapping around) that has not passed; None when all have."""
    start = problems.index(after)
    for problem in problems[start + 1 :] + problems[: start + 1]:
        if not passed(problem):
            return problem
    return None


def watch_loop(
    problems: list[Problem],
    checkout: LearnerCheckout,
    first: Problem,
    grade: Callable[[Problem], ProblemResult],
    say: Callable[[str], None],
    changes: Iterable[set[Path]],
    passed: Callable[[Problem], bool],
) -> int:
    """Grades `first`, then the problem whose stub changed after every burst of saves; after a pass, moves on
    to the next unfinished problem and grades it. Returns 0 when every problem has passed, else when
    `changes` ends (interrupted)."""
    current = first
    result = grade(current)
    while True:
        if result.passed:
            following = next_unfinished(problems, passed, current)
            if following is None:
                say("Every problem passed. Well done.")
                return 0
            say(f"{current.id} passed. Next: {following.id} (read problems/{following.id}/README.md).")
            current = following
            result = grade(current)
        say(f"Watching problems/{current.id}/stub.py (and every other stub): save to re-grade, ^C stops.")
        for changed in changes:
            touched = [p for p in problems if checkout.stub(p).resolve() in changed]
            if touched:
                current = current if current in touched else touched[0]
                result = grade(current)
                break
        else:
            return 1
