"""A learner's checkout: `problems/<id>/stub.py` for every problem, in this course, in a learner copy, or in
one folder of a class's roster. Where its stubs are, whether one is missing or untouched, and the result a
missing one gets, in one place."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from grader.course.problems import Problem
from grader.errors import UsageError
from grader.results import ProblemResult, Status


@dataclass(frozen=True)
class LearnerCheckout:
    root: Path

    @classmethod
    def at(cls, root: Path) -> LearnerCheckout:
        """The checkout at `root`; a UsageError when it has no problems/ folder."""
        if not (root / "problems").is_dir():
            raise UsageError(f"{root}: no problems/ folder there, so no learner checkout")
        return cls(root)

    def stub(self, problem: Problem) -> Path:
        return self.root / "problems" / problem.id / "stub.py"

    def missing(self, problem: Problem) -> bool:
        """Whether the stub is absent: nothing there, or something that is not a file (a folder, a pipe).
        Never raises, and follows no link: a link counts as present, and so does a stub the OS will not even
        look at (a name too long, a folder without permission), so that reading it says why."""
        try:
            mode = os.lstat(self.stub(problem)).st_mode
        except OSError as exc:
            return exc.errno in (errno.ENOENT, errno.ENOTDIR)
        return not (stat.S_ISREG(mode) or stat.S_ISLNK(mode))

    def untouched(self, problem: Problem) -> bool:
        """Whether the stub still raises the NotImplementedError it was handed out with (`grade check` makes
        sure every stub carries the problem's `untouched_marker`)."""
        try:
            return problem.untouched_marker in self.stub(problem).read_text(
                encoding="utf-8", errors="replace"
            )
        except OSError:
            return False

    def missing_result(self, problem: Problem, path: Path | None = None) -> ProblemResult:
        """The result of a problem whose submission file is not there: an error, never a crash."""
        path = path or self.stub(problem)
        return ProblemResult(
            problem=problem.id,
            title=problem.title,
            status=Status.ERROR,
            submission=str(path),
            message=f"no submission file at {path}",
            rtol=problem.tolerance.rtol,
            atol=problem.tolerance.atol,
            points=problem.points,
            function=problem.function,
        )
