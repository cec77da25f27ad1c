"""Reading one child's events into the outcomes of its jobs, in the order the protocol allows: the ready
event, then for each job the question whether to run it, its load, its cases in order and its profile.
Anything else is a protocol error, the learner's once the child is ready (grader/protocol/events.py)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from grader.protocol.events import EventReader, ProtocolError
from grader.running.jobs import Job
from grader.running.outcomes import CaseOutcome, LoadFailure, RunOutcome
from grader.running.sandbox import reported
from grader.running.watchdog import Watchdog

if TYPE_CHECKING:
    from grader.running.isolation import IsolatedRun


class Collector:
    """The events of one child of `run`, read from `reader` while `watchdog` holds the child to its limits."""

    def __init__(self, run: IsolatedRun, reader: EventReader, watchdog: Watchdog, strict: bool) -> None:
        self.run, self.reader, self.watchdog, self.strict = run, reader, watchdog, strict
        self.limits = run.limits

    def _unexpected(self, event: dict, expected: str) -> None:
        """An event that is not the one the protocol allows next: a protocol error (skipped, as it once
        was, only in the tests that show why not)."""
        if self.strict:
            raise ProtocolError(f"a {event['event']!r} event where {expected} was due")

    def collect(
        self,
        jobs: list[Job],
        workdir: Path,
        sandbox: dict | None,
    ) -> int:
        """Reads the child's events into the jobs' outcomes; returns how many jobs are over (the job the
        child stopped in counts as over)."""
        failures = self._ready(jobs, sandbox)
        if failures is None:
            return len(jobs)
        for number, job in enumerate(jobs):
            outcome = self.run.outcomes[job.label]
            if job.problem.id in failures:  # the course's code failed: the child skips its jobs
                message, detail = failures[job.problem.id]
                outcome.load_failure = LoadFailure(kind="harness", message=message, detail=detail)
                self.run.finish(job, workdir, number)
                continue
            try:
                finished = self._collect_job(job, outcome)
            except ProtocolError as exc:
                self._broken(outcome, job, exc)
                return number + 1
            if not finished:
                return number + 1
            self.run.finish(job, workdir, number)
        return len(jobs)

    def _ready(self, jobs: list[Job], sandbox: dict | None) -> dict[str, tuple[str, str]] | None:
        """Waits for the ready event, the child's last word before it imports any submission: what its
        sandbox holds and which harnesses failed. Returns those failures by problem, or None when the run
        ends here (the child never got ready, which no learner code caused, or the sandbox that is required
        did not hold), every job's outcome then saying why."""
        deadline = time.monotonic() + self.limits.start_timeout
        try:
            event = self.reader.next_event(deadline, self.watchdog.over_limit)
            if isinstance(event, dict) and event["event"] != "ready":
                raise ProtocolError(f"a {event['event']!r} event before the child was ready")
            if isinstance(event, dict) and (event["sandbox"] is None) != (sandbox is None):
                raise ProtocolError("a sandbox report the grader did not ask for, or none where it did")
        except ProtocolError as exc:
            self.run.kill(self.watchdog.process)
            event, why = None, f"it sent {exc}"
        else:
            why = (
                "" if isinstance(event, dict) else self.watchdog.halt(event, self.limits.start_timeout, jobs)
            )
        if not isinstance(event, dict):
            for job in jobs:
                own = self.limits.settings.protects("own-folders")
                if event == "disk" and own and not self.run.trusted:  # the learner's own folders
                    outcome = self.run.outcomes[job.label]  # its first case says why: the learner's error
                    outcome.stopped = f"its folders were over the disk limit: {why}"
                    outcome.stopped_in_case = job.cases[0].index if job.cases else None
                    continue
                failure = f"the grading process stopped before it loaded any submission: {why}"
                self.run.outcomes[job.label].grader_failure = failure
            return None
        if event["sandbox"] is not None:
            self.run.sandbox = reported(event["sandbox"], self.run.sandbox)
        self.watchdog.hunt_orphans = not self.run.sandbox.processes
        if sandbox is not None and sandbox["required"] and not self.run.sandbox.filesystem:
            message = (
                f"the sandbox is required (--require-sandbox) but did not hold: {self.run.sandbox.reason}"
            )
            for job in jobs:
                self.run.outcomes[job.label].load_failure = LoadFailure(kind="sandbox", message=message)
            return None
        return event["harness_failures"]

    def _collect_job(self, job: Job, outcome: RunOutcome) -> bool:
        """Reads one job's events: the question whether to run it (when it serves another), its load, its
        cases in order, its profile. Returns False when the child stopped in it; raises ProtocolError."""
        expected = [case.index for case in job.cases]
        position = -1  # -1: waiting for the job's load event; else the position of its next case
        asks = bool(job.after) and self.run.needed is not None
        deadline = time.monotonic() + self.limits.start_timeout
        while position < len(expected):
            event = self.reader.next_event(deadline, self.watchdog.over_limit)
            if not isinstance(event, dict):
                self._stop(outcome, position, expected, event, [job])
                return False
            if event.get("label") != job.label:
                self._unexpected(event, f"an event of {job.label!r}")
                continue
            if event["event"] == "ask" and event["what"] == "run" and asks:
                asks = False
                if not self.run.answer(job, "run"):
                    outcome.stopped = "not run: not needed"
                    return True
            elif event["event"] == "load" and position == -1 and not asks:
                if not event["ok"]:
                    outcome.load_failure = LoadFailure(event["kind"], event["message"], event["detail"])
                    return True
                position = 0
            elif event["event"] == "case" and position >= 0 and event["index"] == expected[position]:
                outcome.cases[event["index"]] = CaseOutcome(
                    index=event["index"],
                    seconds=event["seconds"],
                    returned=event["returned"],
                    raised=event["raised"],
                )
                position += 1
            else:
                self._unexpected(event, "its load" if position == -1 else f"case {expected[position] + 1}")
                continue
            deadline = time.monotonic() + self.limits.timeout
        return self._collect_profile(job, outcome) if job.profile else True

    def _collect_profile(self, job: Job, outcome: RunOutcome) -> bool:
        """Reads the job's precision profile (or the question before it); False when the child stopped
        while tracing, which costs the profile only, never the job's verdict."""
        asks = job.profile_if_failed and self.run.needed is not None
        deadline = time.monotonic() + self.limits.timeout
        while True:
            event = self.reader.next_event(deadline, self.watchdog.over_limit)
            if not isinstance(event, dict):
                reason = self.watchdog.halt(event, self.limits.timeout, [job])
                outcome.profile = {"error": f"the trace stopped the process: {reason}"}
                return False
            if event.get("label") != job.label:
                self._unexpected(event, f"an event of {job.label!r}")
            elif event["event"] == "ask" and event["what"] == "profile" and asks:
                asks = False
                if not self.run.answer(job, "profile"):
                    return True
            elif event["event"] == "profile" and not asks:
                outcome.profile = event["profile"]
                return True
            else:
                self._unexpected(event, "its profile")

    def _stop(
        self,
        outcome: RunOutcome,
        position: int,
        expected: list[int],
        why: str | None,
        jobs: list[Job],
    ) -> None:
        limit = self.limits.start_timeout if position == -1 else self.limits.timeout
        reason = self.watchdog.halt(why, limit, jobs)
        if position == -1:
            outcome.load_failure = LoadFailure(kind="crash", message=f"{reason} while loading the submission")
        else:
            outcome.stopped = reason
            outcome.stopped_in_case = expected[position]

    def _broken(self, outcome: RunOutcome, job: Job, exc: ProtocolError) -> None:
        """Ends a run whose result channel carried what the protocol does not allow: after the child was
        ready, only learner code can have written it, so it is the learner's error, whatever came before."""
        self.run.kill(self.watchdog.process)
        outcome.protocol_error = f"protocol error on the grader's private result channel: {exc}"
        outcome.stopped = outcome.protocol_error
        missing = [case.index for case in job.cases if case.index not in outcome.cases]
        outcome.stopped_in_case = missing[0] if missing else None
