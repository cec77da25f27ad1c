"""Outputs of the course's own code (the reference and the named pitfalls) on a list of cases.

Trusted files run together in one child, on the same machine and backend as the learner's code: the
reference is never compared across machines.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader.course.cases import Case
from grader.course.problems import Problem
from grader.errors import CourseError
from grader.expected import output_cache
from grader.running.isolation import IsolatedRun
from grader.running.jobs import Job
from grader.running.limits import Limits
from grader.running.outcomes import RunOutcome
from grader.running.submission import Submission


@dataclass(frozen=True)
class Rejection:
    """A case on which the problem's harness rejected what a file wrote (naming `pitfall`, if any)."""

    pitfall: str
    message: str


Outputs = dict[int, np.ndarray | Rejection]
REFERENCE = "reference"  # the label of the reference solution among trusted files
_memo: dict[tuple[str, int], np.ndarray | Rejection] = {}  # (file digest, case seed) -> output
_profiles: dict[tuple[str, int], dict] = {}  # (file digest, case seed) -> the reference's precision profile


def file_digest(source: bytes, problem: Problem) -> str:
    """Digest of what decides a file's outputs besides the case: its content, and the problem's harness."""
    digest = hashlib.sha256(source)
    if problem.harness_path is not None:
        digest.update(b"\0harness\0" + problem.harness_path.read_bytes())
    return digest.hexdigest()


def _outputs(outcome: RunOutcome) -> Outputs | str:
    """Returns the outputs of every case, or why the run could not produce them."""
    if outcome.grader_failure:
        return outcome.grader_failure
    if outcome.load_failure:
        return f"{outcome.load_failure.message}\n{outcome.load_failure.detail}\n{outcome.stderr}"
    outputs: Outputs = {}
    for index, case in outcome.cases.items():
        if case.raised and case.raised.rejected:
            outputs[index] = Rejection(case.raised.pitfall, case.raised.message)
            continue
        if case.raised:
            raised = case.raised
            return f"case {index + 1} raised {raised.type_name}: {raised.message}\n{raised.traceback}"
        if case.returned is None or case.returned.kind != "array":
            return f"case {index + 1} returned {case.returned.describe() if case.returned else 'nothing'}"
        outputs[index] = case.returned.values
    if outcome.stopped:
        return f"{outcome.stopped}\n{outcome.stderr}"
    return outputs


@dataclass(frozen=True)
class TrustedRequest:
    """The course's own files (label -> path) whose outputs on one problem's cases are needed."""

    problem: Problem
    paths: dict[str, Path]
    cases: list[Case]
    profile: Case | None = None  # a practice case to trace files on (grader/profile/profiler.py)
    traced: tuple[str, ...] = (REFERENCE,)  # the labels of the files traced on it


class TrustedOutputs:
    """Computes (in the background, in one child for every problem, once `start()` is called) the outputs of
    the course's own files; `result(problem_id)` waits for one problem's.

    Outputs are remembered per (file content, case seed) for the life of the process, and with a `store` on
    disk too (grader/expected/output_cache.py), so a file runs only on cases it has not seen. With `keep`
    false the store is only read: hidden-case outputs are written by `grade prepare` alone.

    A request's `profile` case has its `traced` files (the reference by default) traced on it, in the same
    child when the file runs anyway; a profile, about a practice case, is kept in `profiles` (the practice
    store) in either mode.
    """

    def __init__(
        self,
        requests: list[TrustedRequest],
        limits: Limits,
        store: output_cache.OutputStore | None = None,
        keep: bool = True,
        profiles: output_cache.OutputStore | None = None,
    ) -> None:
        self.requests = {request.problem.id: request for request in requests}
        self.store, self.keep, self.profiles = store, keep, profiles
        self._profile_jobs: dict[tuple[str, str], str] = {}  # (problem id, label) -> the job that profiles it
        self._disk_keys: dict[tuple[str, int], str] = {}
        self._on_disk: set[tuple[str, int]] = set()  # (file digest, seed) the store is known to hold
        files = {
            (request.problem.id, label): Submission.of_course_file(path)
            for request in requests
            for label, path in request.paths.items()
        }
        problems = {request.problem.id: request.problem for request in requests}
        self.digests = {key: file_digest(file.source, problems[key[0]]) for key, file in files.items()}
        jobs = []
        for request in requests:
            for label in request.paths:
                digest = self.digests[(request.problem.id, label)]
                file = files[(request.problem.id, label)]
                missing = [case for case in request.cases if not self._known(digest, case)]
                traced = label in request.traced and not self._profile_known(request, label)
                profile = request.profile if traced else None
                job = f"{request.problem.id}/{label}"
                if profile is not None:  # with the file's cases, or alone when they are all known
                    self._profile_jobs[(request.problem.id, label)] = job if missing else f"{job}/profile"
                    jobs.append(
                        Job(
                            self._profile_jobs[(request.problem.id, label)],
                            file,
                            request.problem,
                            missing,
                            profile=profile,
                        )
                    )
                elif missing:
                    jobs.append(Job(job, file, request.problem, missing))
        self._limits = limits
        self._pending = jobs
        self.run: IsolatedRun | None = None
        self.jobs = {job.label for job in jobs}

    def start(self) -> TrustedOutputs:
        """Starts computing what no memory or cache holds, in one child (returns at once)."""
        if self._pending and self.run is None:
            self.run = IsolatedRun(self._pending, self._limits, trusted=True).start()
        return self

    def _disk_key(self, digest: str, case: Case) -> str:
        """The output cache's key of one file's output on one case, computed once (it hashes the inputs)."""
        if (digest, case.seed) not in self._disk_keys:
            self._disk_keys[(digest, case.seed)] = output_cache.entry_key(digest, case)
        return self._disk_keys[(digest, case.seed)]

    def _known(self, digest: str, case: Case) -> bool:
        if (digest, case.seed) in _memo:
            return True
        stored = self.store.load(self._disk_key(digest, case)) if self.store else None
        if stored is not None:
            _memo[(digest, case.seed)] = stored
            self._on_disk.add((digest, case.seed))
        return stored is not None

    def _keep(self, digest: str, case: Case) -> None:
        """Stores a file's output on a case (computed now, or earlier in this process) where the store lacks
        it; once per entry."""
        output = _memo.get((digest, case.seed))
        if not (self.store and self.keep and isinstance(output, np.ndarray)):
            return
        if (digest, case.seed) not in self._on_disk:
            key = self._disk_key(digest, case)
            if not self.store.has(key):
                self.store.save(key, output)
            self._on_disk.add((digest, case.seed))

    def _profile_key(self, request: TrustedRequest, label: str) -> tuple[str, int]:
        assert request.profile is not None
        return self.digests[(request.problem.id, label)], request.profile.seed

    def _profile_known(self, request: TrustedRequest, label: str) -> bool:
        """Whether the file's profile is in memory or in the store (read into memory if so)."""
        if request.profile is None:
            return True
        key = self._profile_key(request, label)
        if self.profiles:
            disk_key = output_cache.profile_key(key[0], request.profile)
            stored = self.profiles.load_document(disk_key)
            if stored is not None:
                _profiles.setdefault(key, stored)
            elif key in _profiles:  # traced earlier in this process for another store: kept here too
                self.profiles.save_document(disk_key, _profiles[key])
        return key in _profiles

    def reference_profile(self, problem_id: str) -> dict | None:
        """The reference's precision profile on the request's profile case (see `profile`)."""
        return self.profile(problem_id, REFERENCE)

    def profile(self, problem_id: str, label: str) -> dict | None:
        """A traced file's precision profile on the request's profile case, waiting for it; None when none
        was asked for, {"error": reason} when it could not be made."""
        request = self.requests[problem_id]
        if request.profile is None or label not in request.traced:
            return None
        key = self._profile_key(request, label)
        if key not in _profiles:
            outcome = self.start().run.wait_for(self._profile_jobs[(problem_id, label)])
            found = outcome.profile or {"error": outcome.stopped or f"{label} was not profiled"}
            if "error" in found:
                return found
            _profiles[key] = found
            if self.profiles:
                self.profiles.save_document(output_cache.profile_key(key[0], request.profile), found)
        return _profiles[key]

    def cancel(self) -> None:
        """Stops the computation (nothing more will be compared with these outputs) and waits until its
        child is gone and its folder removed."""
        if self.run:
            self.run.close()

    def settle_profiles(self, wait: float) -> None:
        """Keeps every precision profile traced so far, waiting up to `wait` seconds in all for those still
        being traced: a profile asked for and never read (the answer passed) would otherwise be traced
        again, in a child of its own, by every later run."""
        if self.run is None:
            return
        deadline = time.monotonic() + wait
        for (problem_id, label), job in self._profile_jobs.items():
            if self.run.wait_until_over(job, max(deadline - time.monotonic(), 0.0)):
                self.profile(problem_id, label)

    def ready(self, problem_id: str) -> bool:
        """Whether `result(problem_id)` would return at once."""
        labels = [f"{problem_id}/{label}" for label in self.requests[problem_id].paths]
        return all(job not in self.jobs or (self.run and self.run.is_over(job)) for job in labels)

    def result(self, problem_id: str) -> dict[str, Outputs | str]:
        """Returns, per label, the outputs by case index or the reason the file failed."""
        request = self.requests[problem_id]
        results: dict[str, Outputs | str] = {}
        for label in request.paths:
            digest = self.digests[(problem_id, label)]
            job = f"{problem_id}/{label}"
            outputs = _outputs(self.start().run.wait_for(job)) if job in self.jobs else {}
            if isinstance(outputs, str):
                results[label] = outputs
                continue
            for case in request.cases:
                if case.index in outputs:
                    _memo[(digest, case.seed)] = outputs[case.index]
                self._keep(digest, case)
            missing = [case.label for case in request.cases if (digest, case.seed) not in _memo]
            if missing:  # the run was cancelled, or ended before reaching them
                results[label] = f"no output for {missing[0]}: the run ended before it"
                continue
            results[label] = {case.index: _memo[(digest, case.seed)] for case in request.cases}
        return results


def arrays(outputs: Outputs) -> dict[int, np.ndarray]:
    """Returns the cases of `outputs` that returned a value (leaving out those a harness rejected)."""
    return {index: value for index, value in outputs.items() if isinstance(value, np.ndarray)}


def reference_outputs_or_raise(
    results: dict[str, Outputs | str], label: str, path: Path
) -> dict[int, np.ndarray]:
    """Returns the reference's outputs, or raises CourseError: a broken reference is never the learner's."""
    outputs = results[label]
    if isinstance(outputs, str):
        raise CourseError(f"the reference {path} failed, so nothing can be graded:\n{outputs}")
    rejected = [value for value in outputs.values() if isinstance(value, Rejection)]
    if rejected:
        raise CourseError(f"the problem's harness rejected the reference {path}: {rejected[0].message}")
    return arrays(outputs)
