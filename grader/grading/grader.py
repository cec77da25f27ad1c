"""Grading one problem: run the learner and the reference on the same cases, compare, name the mistake."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from grader.course.cases import PROFILE_CASE, Case, make_cases
from grader.course.problems import Course, Problem
from grader.errors import CourseError, UsageError
from grader.expected.sources import References, expected_outputs, wait_all
from grader.grading.in_process import call_in_process, trace_in_process
from grader.grading.naming import Naming, name_mistake, naming_label, rejections
from grader.grading.verdicts import case_result, problem_result, refused_result, summarise
from grader.grading.withheld import withhold
from grader.profile.compare import precision_profile
from grader.results import CaseResult, PrecisionProfile, ProblemResult, Status
from grader.running import kernel_cache
from grader.running.isolation import IsolatedRun
from grader.running.jobs import Job
from grader.running.limits import Limits
from grader.running.outcomes import RunOutcome
from grader.running.sandbox import check_sandbox
from grader.running.submission import Submission, SubmissionRefused, read_submission
from grader.sandbox_report import Sandbox

PROFILE_MODES = ("failing", "always", "off")


def _display_path(path: Path) -> str:
    """Returns `path` relative to the working directory when it lies below it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


class Grader:
    """Grades submissions for the problems of one course, in practice mode or (with a secret) hidden mode."""

    def __init__(
        self,
        course: Course,
        secret: str | None = None,
        limits: Limits | None = None,
        low_memory: bool = False,
        profile: str = "failing",
    ) -> None:
        """`low_memory` runs the reference before the learner's code instead of beside it: one JAX process at
        a time, about half the peak memory, slower. `profile` says whose dtypes are traced and compared with
        the reference's on a practice case (grader/profile/profiler.py): "failing" answers', "always"
        (practice mode only), or "off"."""
        if profile not in PROFILE_MODES:
            raise UsageError(f"profile must be one of {', '.join(PROFILE_MODES)}, not {profile!r}")
        if profile == "always" and secret:
            raise UsageError(
                "--profile shows the trace of every answer: practice mode only (unset GRADE_SECRET)"
            )
        self.course = course
        self.secret = secret or None
        self.limits = limits or Limits()
        self.low_memory = low_memory
        self.profile = profile
        check_sandbox(self.limits.settings)
        if self.limits.settings.cache_root is not None:  # learners' kernels unused for long, or too many, go
            kernel_cache.prune_learners(self.limits.settings.cache_root)
        self.expected = expected_outputs(course, self.secret, self.limits)  # where expected outputs come from

    @property
    def mode(self) -> str:
        return "hidden" if self.secret else "practice"

    def prepare(self, problems: list[Problem]) -> None:
        """Computes the reference outputs of `problems` now, so that graders running side by side (a batch)
        find them ready. A reference that fails is reported when a submission is graded against it."""
        cases = {problem.id: make_cases(problem, self.secret) for problem in problems}
        with contextlib.suppress(CourseError):
            wait_all(self.expected.start(problems, cases), problems)

    def grade_file(self, problem: Problem, submission: Path, root: Path | None = None) -> ProblemResult:
        """Grades `submission` (a learner's stub.py, below their checkout `root`, or any file defining the
        function) in a child process."""
        return self.grade_files([(problem, submission)], root=root)[0]

    def grade_files(
        self,
        items: list[tuple[Problem, Path]],
        on_result: Callable[[ProblemResult], None] | None = None,
        root: Path | None = None,
    ) -> list[ProblemResult]:
        """Grades one learner's files, one per problem, in one child process (a fresh one takes over after a
        submission that kills its child). `root` is the learner's checkout when the files lie in one: no link
        below it is followed. Each file is read once, here (grader/running/submission.py); one that cannot be
        graded as a submission (a link, a device, too large) is an error with the reason. `on_result` gets
        each problem's result as soon as it is known."""
        for _, submission in items:
            if not os.path.lexists(submission):
                raise UsageError(f"no submission file at {submission}")
        start = time.monotonic()
        learner = str((root or items[0][1]).absolute()) if items else ""
        read: dict[str, Submission] = {}
        results: dict[str, ProblemResult] = {}
        for problem, path in items:
            try:
                read[problem.id] = self._read(path, root)
            except SubmissionRefused as exc:
                results[problem.id] = refused_result(problem, _display_path(path.absolute()), str(exc))
        todo = [(problem, path) for problem, path in items if problem.id in read]
        cases = {problem.id: make_cases(problem, self.secret) for problem, _ in todo}
        problems = [problem for problem, _ in todo]
        practice = {p.id: make_cases(p) if self.secret else cases[p.id] for p in problems}
        traced = {p.id: practice[p.id][PROFILE_CASE] for p in problems if self.profile != "off"}
        references = self.expected.start(problems, cases, traced)
        if self.low_memory:
            wait_all(references, problems)
        # Hidden mode: right after each hidden run, the same function on the practice cases, to name a
        # mistake as practice mode does; the child runs it only when the grader says the answer failed (or
        # cannot tell yet), and it reuses what the hidden run loaded and compiled. The precision profile is
        # traced on a practice case after the practice run (asking first, unless every answer is profiled).
        jobs, asks = [], self.profile == "failing"
        for problem in problems:
            profile = {"profile": traced.get(problem.id), "profile_if_failed": asks}
            submission = read[problem.id]
            if not self.secret:
                jobs.append(Job(problem.id, submission, problem, cases[problem.id], **profile))
                continue
            jobs.append(Job(problem.id, submission, problem, cases[problem.id]))
            label = naming_label(problem.id)
            jobs.append(Job(label, submission, problem, practice[problem.id], problem.id, **profile))
        needed = self._answer_failed(cases, references) if self.secret or asks else None
        run = IsolatedRun(jobs, self.limits, needed=needed, learner=learner).start() if jobs else None
        try:
            for problem, path in items:
                if problem.id in results:
                    result = results[problem.id]
                else:
                    assert run is not None
                    result = self._graded(problem, path, run, cases, practice, references, start)
                    start = time.monotonic()
                    results[problem.id] = result
                if on_result:
                    on_result(result)
        finally:
            if run is not None:
                run.close()  # normally over already; after an error, nothing is left running or on disk
            references.cancel()
        return [results[problem.id] for problem, _ in items]

    def _read(self, path: Path, root: Path | None) -> Submission:
        """The submission's bytes, read once (following links only in the tests that show why not)."""
        if not self.limits.settings.protects("submission-copy"):
            return Submission(name=path.name, source=path.read_bytes(), shown=str(path.absolute()))
        return read_submission(path.absolute(), root.absolute() if root else None)

    def _graded(
        self,
        problem: Problem,
        path: Path,
        run: IsolatedRun,
        cases: dict[str, list[Case]],
        practice: dict[str, list[Case]],
        references: References,
        start: float,
    ) -> ProblemResult:
        """The result of one problem of a learner's run, once its job is over."""
        outcome = run.wait_for(problem.id)
        expected = self._expected(outcome, references, problem)
        practice_run = (lambda: run.wait_for(naming_label(problem.id))) if self.secret else None
        namer = self._namer(problem, practice[problem.id], outcome, practice_run)
        profiled = self._profiler(problem, references, practice_run or (lambda: outcome))
        shown = _display_path(path.absolute())
        return self._result(problem, cases[problem.id], outcome, expected, shown, namer, start, profiled)

    def grade_function(self, problem: Problem, fn: Callable) -> ProblemResult:
        """Grades a function object in this process (for notebooks), on the practice cases only: learner code
        in this process could read anything it holds, so a grader with a secret refuses. The reference still
        runs isolated."""
        if self.secret is not None:
            raise UsageError("a function object is graded in this process, on the practice cases only")
        start = time.monotonic()
        cases = make_cases(problem)
        traced = {problem.id: cases[PROFILE_CASE]} if self.profile != "off" else {}
        references = self.expected.start([problem], {problem.id: cases}, traced)
        outcome = call_in_process(problem, fn, cases)
        here = "called in this process by grade_function, on the practice cases only"
        outcome.sandbox = Sandbox(reason=here, sockets_reason=here, processes_reason=here)

        def traced_run() -> RunOutcome:  # traced here too, when the answer failed
            outcome.profile = outcome.profile or trace_in_process(problem, fn, cases[PROFILE_CASE])
            return outcome

        name = getattr(fn, "__qualname__", repr(fn))
        namer = self._namer(problem, cases, outcome, None)
        try:
            expected = self._expected(outcome, references, problem)
            profiled = self._profiler(problem, references, traced_run)
            return self._result(
                problem, cases, outcome, expected, f"<function {name}>", namer, start, profiled
            )
        finally:
            references.cancel()

    def _namer(
        self,
        problem: Problem,
        practice: list[Case],
        outcome: RunOutcome,
        practice_run: Callable[[], RunOutcome] | None,
    ) -> Callable[[], Naming]:
        """Returns how to name a failed submission's mistake: from its run on the practice cases (that is
        `outcome` itself in practice mode; in hidden mode `practice_run` gets it, only when needed)."""

        def name() -> Naming:
            run = practice_run() if practice_run else outcome
            rejected = rejections(outcome) if practice_run else ()
            stored = None if self.secret else self.expected.stored(problem)
            return name_mistake(self.course, problem, practice, run, self.limits, stored, rejected)

        return name

    def _profiler(
        self, problem: Problem, references: References, practice_run: Callable[[], RunOutcome]
    ) -> Callable[[], PrecisionProfile | None]:
        """Returns how to get the answer's precision profile: traced in the practice run (`practice_run`
        gets it), compared with the reference's; None when the run made none."""

        def profiled() -> PrecisionProfile | None:
            learner = practice_run().profile if self.profile != "off" else None
            if learner is None:
                return None
            reference = references.profile(problem) or {"error": "none was made"}
            return precision_profile(PROFILE_CASE, learner, reference)

        return profiled

    def _answer_failed(
        self, cases: dict[str, list[Case]], references: References
    ) -> Callable[[Job, RunOutcome, str], bool]:
        """Whether the child should go on when it asks, from the answer's verdict, or yes when that cannot be
        known yet: the practice run that names a mistake after a hidden run ("run") is for an answer that
        did not pass, the trace ("profile") for one that returned wrong values (an answer that raised has
        its traceback instead). The verdict is known without waiting once the reference's outputs are in."""

        def needed(job: Job, answer: RunOutcome, what: str) -> bool:
            raised = any(case.raised and not case.raised.rejected for case in answer.cases.values())
            if what == "profile" and (raised or answer.load_failure):
                return False  # an error, whatever the reference says
            if not references.ready(job.problem):
                return True
            try:
                expected = self._expected(answer, references, job.problem)
            except CourseError:
                return True  # the broken reference is reported where the answer is graded
            case_results = self._case_results(job.problem, cases[job.problem.id], answer, expected)
            status = summarise(cases[job.problem.id], case_results, answer, self.limits)[0]
            return status is Status.FAIL if what == "profile" else status is not Status.PASS

        return needed

    def _case_results(
        self, problem: Problem, cases: list[Case], outcome: RunOutcome, expected: dict[int, np.ndarray]
    ) -> list[CaseResult]:
        hidden = self.secret is not None
        return [case_result(c, outcome, expected.get(c.index), problem, hidden, self.limits) for c in cases]

    @staticmethod
    def _expected(outcome: RunOutcome, references: References, problem: Problem) -> dict[int, np.ndarray]:
        """Returns the reference outputs, or nothing (without waiting) when no case returned a value."""
        if not any(ran.returned is not None for ran in outcome.cases.values()):
            return {}  # the untouched stub, or code that never returns: nothing to compare
        return references.outputs(problem)

    def _result(
        self,
        problem: Problem,
        cases: list[Case],
        outcome: RunOutcome,
        expected: dict[int, np.ndarray],
        submission: str,
        namer: Callable[[], Naming],
        start: float,
        profiled: Callable[[], PrecisionProfile | None] = lambda: None,
    ) -> ProblemResult:
        """One problem's result, timed from `start`; hidden mode keeps out learner text (withheld.py)."""
        if self.secret is not None and self.limits.settings.withholds_text:
            outcome = withhold(outcome)
        case_results = self._case_results(problem, cases, outcome, expected)
        status, message, fault = summarise(cases, case_results, outcome, self.limits)
        naming = namer() if status is not Status.PASS and fault != "grader" else Naming()
        profile = profiled() if status is Status.FAIL or self.profile == "always" else None
        seconds = time.monotonic() - start
        return problem_result(
            problem, outcome, case_results, (status, message, fault), naming, profile, submission, seconds
        )
