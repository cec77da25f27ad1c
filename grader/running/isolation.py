"""Running submissions in a fresh child interpreter: one child for a list of jobs, a fresh one after a job
that stops it, and the pipe its results come back on.

The child (grader/child/main.py, where learner code runs) is spawned, never forked, so it starts with no JAX
state of ours. It grades copies of the submissions' bytes written into its private folder
(grader/running/submission.py), never the learner's paths. Results come back over a private pipe as JSON
lines, each checked against the protocol (grader/running/protocol.py); the child's stdout, stderr and exit
status are never read as a verdict. Its limits are in grader/running/limits.py, its sandboxes in
grader/running/sandbox.py, and its processes are counted, found and killed by grader/running/processes.py.

Whatever happens, every job ends with an outcome that says why it has no more: its cases, a load failure, a
stop (a limit, a crash, a protocol error: the learner's), or the grader's own failure (`grader_failure`:
the run could not be made or read, never the learner's fault). The verdict (grader/grading/verdicts.py) never
passes a job whose cases did not all come back.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from grader.results import Sandbox
from grader.running import kernel_cache
from grader.running.folders import usage
from grader.running.jobs import Job, cpu_seconds, encode_request
from grader.running.limits import Limits, describe_size
from grader.running.outcomes import CaseOutcome, LoadFailure, RunOutcome, describe_exit, read_capped
from grader.running.processes import (
    exit_status_unreaped,
    kill_group,
    kill_orphans,
    resident_bytes,
    start_child,
)
from grader.running.protocol import EventReader, ProtocolError
from grader.running.sandbox import process_mode, reported, sandbox_prefix, sandbox_request, unreported

CHILD_SCRIPT = Path(__file__).parent.parent / "child" / "main.py"


_LIVE: set[IsolatedRun] = set()  # runs started and not yet closed
_LIVE_LOCK = threading.Lock()


def close_all() -> None:
    """Closes every run still open, so that no child and no private folder outlives this process: called
    at exit (a run's thread is a daemon, which the interpreter would stop mid-clean-up)."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for run in live:
        run.close()


atexit.register(close_all)

DISK_CHECK_SECONDS = 0.5  # how often what a learner's child wrote is counted
MAX_FOLDER_ENTRIES = 20_000  # files and folders a learner's child may make in its folders


class IsolatedRun:
    """Child interpreters running a list of jobs in order: one child for them all, as long as none of them
    stops it. A job that times out, crashes, runs out of memory or breaks the protocol ends its child; the
    jobs after it go on in a fresh child, so one broken problem costs the others nothing.

    `start()` returns at once; `wait_for(label)` returns one outcome as soon as its job is over; `close()`
    stops what is left and returns once every process is gone and every private folder removed. Runs (a
    learner's and the reference's) can be in flight together.
    """

    def __init__(
        self,
        jobs: list[Job],
        limits: Limits,
        trusted: bool = False,
        needed: Callable[[Job, RunOutcome, str], bool] | None = None,
        learner: str = "",
    ) -> None:
        """`needed(job, outcome of the answer it serves, "run" or "profile")` decides whether the child runs
        a job that serves another (`after`), and whether it profiles a job marked `profile_if_failed`;
        without it, all do. `learner` names whose compiled kernels a learner's children may keep between
        runs (grader/running/kernel_cache.py; "": none); the course's own code (`trusted`) keeps the
        course's."""
        if len({job.label for job in jobs}) != len(jobs):
            raise ValueError("every job of a run needs its own label")
        self.jobs = jobs
        self.needed = needed
        self.limits = limits
        self.trusted = trusted
        self.learner = None if trusted else learner
        self._thread: threading.Thread | None = None
        self._outcomes = {job.label: RunOutcome(label=job.label) for job in jobs}
        self._over = {job.label: threading.Event() for job in jobs}
        self._process: subprocess.Popen | None = None
        self._cancelled = threading.Event()
        self.sandbox = Sandbox()
        settings = limits.settings
        self._strict = settings.protects("strict-protocol")
        self._disk = None if trusted or not settings.protects("disk-limit") else limits.disk_bytes
        self._cache = None if trusted else settings.compilation_cache(self.learner)

    def start(self) -> IsolatedRun:
        with _LIVE_LOCK:
            _LIVE.add(self)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Stops the child if it is still running: its outcomes are no longer needed."""
        self._cancelled.set()
        if self._process is not None:
            self._kill(self._process)

    def close(self) -> None:
        """Cancels what is left and waits until the run has cleaned up after itself: no process of its
        children left, no private folder on disk."""
        self.cancel()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        with _LIVE_LOCK:
            _LIVE.discard(self)

    def _kill(self, process: subprocess.Popen) -> None:
        """Kills the child and every process it started (grader/running/processes.py)."""
        kill_group(process, as_once=not self.limits.settings.protects("process-namespace"))

    def wait_for(self, label: str) -> RunOutcome:
        """Returns the outcome of one job as soon as it is over (its child may go on with the next)."""
        assert self._thread is not None, "start() first"
        self._over[label].wait()
        return self._outcomes[label]

    def is_over(self, label: str) -> bool:
        return self._over[label].is_set()

    def _skipped(self, job: Job) -> bool:
        """Skips (and marks over) a job whose `after` job stopped its child or failed to load: the same code
        would only hang or crash again."""
        before = self._outcomes.get(job.after)
        if before is None or not (before.stopped or before.load_failure):
            return False
        self._outcomes[job.label].stopped = f"not run: {job.after} did not finish"
        self._over[job.label].set()
        return True

    def _sandbox(self) -> list[str]:
        """The sandbox command for this run's children: none for the course's own code."""
        return [] if self.trusted else sandbox_prefix(self.limits.settings, self.jobs[0].problem)

    def _run(self) -> None:
        remaining = list(self.jobs)
        try:
            while remaining and not self._cancelled.is_set():
                remaining = [job for job in remaining if not self._skipped(job)]
                if remaining:
                    remaining = remaining[self._run_child(remaining) :]
        except BaseException as exc:  # the grader's own failure (no disk, no child): never the learner's
            failure = f"{type(exc).__name__}: {exc}"[:2000]
            for job in self.jobs:
                if not self._over[job.label].is_set():
                    self._outcomes[job.label].grader_failure = failure
                    self._outcomes[job.label].sandbox = self.sandbox
        finally:
            for over in self._over.values():
                over.set()
            with _LIVE_LOCK:
                _LIVE.discard(self)  # its children are gone and its folders removed

    def _run_child(self, jobs: list[Job]) -> int:
        """Runs `jobs` in one fresh child and returns how many of them are over (all, unless it stopped)."""
        workdir = Path(tempfile.mkdtemp(prefix="grade-"))
        try:
            prefix = self._sandbox()
            paths = self._write_copies(workdir, jobs)
            if prefix:  # the sandbox may run the child as another user (setpriv, runuser)
                for folder in (workdir, *{path.parent for path in paths.values()}):
                    folder.chmod(0o777)
            return self._run_in(workdir, jobs, prefix, paths)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
            if self._cache is not None and self.limits.settings.protects("private-cache"):
                kernel_cache.prune(self._cache)

    @staticmethod
    def _write_copies(workdir: Path, jobs: list[Job]) -> dict[str, Path]:
        """Writes each submission's bytes into the child's folder, once for the jobs that share them (a
        hidden run and the practice run that names its mistake); returns each job's copy by label."""
        copies: dict[tuple[str, bytes], Path] = {}
        for job in jobs:
            key = (job.submission.name, job.submission.source)
            if key not in copies:  # in a folder of its own, under its own name
                folder = workdir / f"submission-{len(copies)}"
                folder.mkdir()
                copies[key] = folder / job.submission.name
                copies[key].write_bytes(job.submission.source)
        return {job.label: copies[(job.submission.name, job.submission.source)] for job in jobs}

    def _run_in(self, workdir: Path, jobs: list[Job], prefix: list[str], paths: dict[str, Path]) -> int:
        request_read, request_write = os.pipe()
        result_read, result_write = os.pipe()
        control_read, control_write = os.pipe()  # the grader's answers to the child's "ask" events
        # Before its first job the child writes here (JAX's own warnings); each job then writes to files of
        # its own (grader/child/main.py), so that prints show up in the report of the problem that made them.
        stdout_path, stderr_path = workdir / ".stdout", workdir / ".stderr"
        fds = (request_read, result_write, control_read)
        isolate = process_mode(self.limits, self.trusted)
        try:
            with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
                process = start_child(
                    [*prefix, sys.executable, "-I", "-u", str(CHILD_SCRIPT), *map(str, fds), *isolate],
                    pass_fds=fds,
                    stdin=subprocess.DEVNULL,
                    stdout=stdout,
                    stderr=stderr,
                    cwd=workdir,
                    env=self.limits.settings.child_environment(workdir, self.learner, sandboxed=bool(prefix)),
                )
        except BaseException:  # no child: the grader's failure, reported by _run
            for fd in (request_write, result_read, control_write):
                os.close(fd)
            raise
        finally:
            for fd in fds:
                os.close(fd)
        self._process = process
        self.sandbox = unreported(self.limits, prefix)
        sandbox = sandbox_request(self.limits, [job.problem for job in jobs], self.trusted, prefix)
        if self._cancelled.is_set():
            self._kill(process)
        self._control = control_write
        request = encode_request(jobs, paths, self.limits, self.trusted, sandbox, ask=self.needed is not None)
        writer = threading.Thread(target=self._write_request, args=(request_write, request), daemon=True)
        writer.start()
        self._reported = False  # whether the child said what held (and so whether a PID namespace did)
        self._watched = [workdir, *([self._cache] if self._cache else [])]
        self._written_before = sum(usage(folder)[0] for folder in self._watched[1:])
        self._disk_checked = time.monotonic()
        try:
            over = self._collect(process, EventReader(result_read, self._strict), jobs, workdir, sandbox)
        finally:
            self._kill(process)
            os.close(result_read)
            os.close(control_write)
            writer.join(timeout=5)
        for number, job in enumerate(jobs[:over]):
            if not self._over[job.label].is_set():  # the job the child stopped in
                self._finish(job, workdir, number)
        return over

    def _finish(self, job: Job, workdir: Path, number: int) -> None:
        """Attaches what the job printed to its outcome and makes the outcome available."""
        outcome = self._outcomes[job.label]
        outcome.sandbox = self.sandbox
        before = [read_capped(workdir / name) for name in (".stdout", ".stderr")] if number == 0 else ["", ""]
        outcome.stdout = before[0] + read_capped(workdir / f".stdout-{number}")
        outcome.stderr = before[1] + read_capped(workdir / f".stderr-{number}")
        self._over[job.label].set()

    def _write_request(self, fd: int, request: bytes) -> None:
        try:
            with os.fdopen(fd, "wb") as sink:
                sink.write(request)
        except OSError:
            pass  # the child died before reading: its outcome says why

    def _unexpected(self, event: dict, expected: str) -> None:
        """An event that is not the one the protocol allows next: a protocol error (skipped, as it once
        was, only in the tests that show why not)."""
        if self._strict:
            raise ProtocolError(f"a {event['event']!r} event where {expected} was due")

    def _collect(
        self,
        process: subprocess.Popen,
        reader: EventReader,
        jobs: list[Job],
        workdir: Path,
        sandbox: dict | None,
    ) -> int:
        """Reads the child's events into the jobs' outcomes; returns how many jobs are over (the job the
        child stopped in counts as over)."""
        failures = self._ready(process, reader, jobs, sandbox)
        if failures is None:
            return len(jobs)
        for number, job in enumerate(jobs):
            outcome = self._outcomes[job.label]
            if job.problem.id in failures:  # the course's code failed: the child skips its jobs
                message, detail = failures[job.problem.id]
                outcome.load_failure = LoadFailure(kind="harness", message=message, detail=detail)
                self._finish(job, workdir, number)
                continue
            try:
                finished = self._collect_job(process, reader, job, outcome)
            except ProtocolError as exc:
                self._broken(process, outcome, job, exc)
                return number + 1
            if not finished:
                return number + 1
            self._finish(job, workdir, number)
        return len(jobs)

    def _ready(
        self, process: subprocess.Popen, reader: EventReader, jobs: list[Job], sandbox: dict | None
    ) -> dict[str, tuple[str, str]] | None:
        """Waits for the ready event, the child's last word before it imports any submission: what its
        sandbox holds and which harnesses failed. Returns those failures by problem, or None when the run
        ends here (the child never got ready, which no learner code caused, or the sandbox that is required
        did not hold), every job's outcome then saying why."""
        deadline = time.monotonic() + self.limits.start_timeout
        try:
            event = reader.next_event(deadline, lambda: self._over_limit(process))
            if isinstance(event, dict) and event["event"] != "ready":
                raise ProtocolError(f"a {event['event']!r} event before the child was ready")
            if isinstance(event, dict) and (event["sandbox"] is None) != (sandbox is None):
                raise ProtocolError("a sandbox report the grader did not ask for, or none where it did")
        except ProtocolError as exc:
            self._kill(process)
            event, why = None, f"it sent {exc}"
        else:
            why = (
                "" if isinstance(event, dict) else self._halt(process, event, self.limits.start_timeout, jobs)
            )
        if not isinstance(event, dict):
            for job in jobs:
                failure = f"the grading process stopped before it loaded any submission: {why}"
                self._outcomes[job.label].grader_failure = failure
            return None
        if event["sandbox"] is not None:
            self.sandbox = reported(event["sandbox"], self.sandbox)
        self._reported = True
        if sandbox is not None and sandbox["required"] and not self.sandbox.filesystem:
            message = f"the sandbox is required (--require-sandbox) but did not hold: {self.sandbox.reason}"
            for job in jobs:
                self._outcomes[job.label].load_failure = LoadFailure(kind="sandbox", message=message)
            return None
        return event["harness_failures"]

    def _collect_job(
        self, process: subprocess.Popen, reader: EventReader, job: Job, outcome: RunOutcome
    ) -> bool:
        """Reads one job's events: the question whether to run it (when it serves another), its load, its
        cases in order, its profile. Returns False when the child stopped in it; raises ProtocolError."""
        expected = [case.index for case in job.cases]
        position = -1  # -1: waiting for the job's load event; else the position of its next case
        asks = bool(job.after) and self.needed is not None
        deadline = time.monotonic() + self.limits.start_timeout
        while position < len(expected):
            event = reader.next_event(deadline, lambda: self._over_limit(process))
            if not isinstance(event, dict):
                self._stop(process, outcome, position, expected, event, [job])
                return False
            if event.get("label") != job.label:
                self._unexpected(event, f"an event of {job.label!r}")
                continue
            if event["event"] == "ask" and event["what"] == "run" and asks:
                asks = False
                if not self._answer(job, "run"):
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
        return self._collect_profile(process, reader, job, outcome) if job.profile else True

    def _collect_profile(
        self, process: subprocess.Popen, reader: EventReader, job: Job, outcome: RunOutcome
    ) -> bool:
        """Reads the job's precision profile (or the question before it); False when the child stopped
        while tracing, which costs the profile only, never the job's verdict."""
        asks = job.profile_if_failed and self.needed is not None
        deadline = time.monotonic() + self.limits.timeout
        while True:
            event = reader.next_event(deadline, lambda: self._over_limit(process))
            if not isinstance(event, dict):
                reason = self._halt(process, event, self.limits.timeout, [job])
                outcome.profile = {"error": f"the trace stopped the process: {reason}"}
                return False
            if event.get("label") != job.label:
                self._unexpected(event, f"an event of {job.label!r}")
            elif event["event"] == "ask" and event["what"] == "profile" and asks:
                asks = False
                if not self._answer(job, "profile"):
                    return True
            elif event["event"] == "profile" and not asks:
                outcome.profile = event["profile"]
                return True
            else:
                self._unexpected(event, "its profile")

    def _answer(self, job: Job, what: str) -> bool:
        """Tells the child whether to run `job` (a job serving another) or profile it, by whether the answer
        it serves failed; returns the answer."""
        run = self.needed(job, self._outcomes[job.after or job.label], what)
        with contextlib.suppress(OSError):  # the child is gone: the next read says so
            os.write(self._control, b"1" if run else b"0")
        return run

    def _over_limit(self, process: subprocess.Popen) -> str:
        """ "memory" or "disk" when the child's processes use more memory, or have written more to their
        folders, than the limits allow; else "". Where no PID namespace holds a learner's processes, what
        escaped the child's session is killed here as soon as it is found."""
        settings = self.limits.settings
        limit = self.limits.memory_bytes
        if limit is not None and resident_bytes(process.pid, settings.protects("process-namespace")) > limit:
            return "memory"
        if self.trusted:
            return ""
        if self._reported and not self.sandbox.processes and settings.protects("process-namespace"):
            kill_orphans()  # no PID namespace held: what escaped the session goes as soon as it is found
        if self._disk is not None and time.monotonic() - self._disk_checked > DISK_CHECK_SECONDS:
            self._disk_checked = time.monotonic()
            counted = [usage(folder, MAX_FOLDER_ENTRIES) for folder in self._watched]
            written = sum(size for size, _ in counted) - self._written_before
            if written > self._disk or any(entries > MAX_FOLDER_ENTRIES for _, entries in counted):
                return "disk"
        return ""

    def _halt(self, process: subprocess.Popen, why: str | None, limit: float, jobs: list[Job]) -> str:
        """Stops the child and says why it stopped: a time, memory or disk limit it ran over, or how it
        ended."""
        if why in ("timeout", "memory", "disk"):
            self._kill(process)
            if why == "timeout":
                return f"timed out after {limit:g} s"
            if why == "disk":
                size = describe_size(self._disk or 0)
                return f"wrote more than {size} or {MAX_FOLDER_ENTRIES:,} files to its folders (disk limit)"
            return f"out of memory: used more than {describe_size(self.limits.memory_bytes)} (--memory-limit)"
        returncode = exit_status_unreaped(process, timeout=10)
        self._kill(process)  # also what it left behind
        status = process.returncode if returncode is None else returncode
        return describe_exit(status, cpu_seconds(self.limits, jobs))

    def _stop(
        self,
        process: subprocess.Popen,
        outcome: RunOutcome,
        position: int,
        expected: list[int],
        why: str | None,
        jobs: list[Job],
    ) -> None:
        limit = self.limits.start_timeout if position == -1 else self.limits.timeout
        reason = self._halt(process, why, limit, jobs)
        if position == -1:
            outcome.load_failure = LoadFailure(kind="crash", message=f"{reason} while loading the submission")
        else:
            outcome.stopped = reason
            outcome.stopped_in_case = expected[position]

    def _broken(self, process: subprocess.Popen, outcome: RunOutcome, job: Job, exc: ProtocolError) -> None:
        """Ends a run whose result channel carried what the protocol does not allow: after the child was
        ready, only learner code can have written it, so it is the learner's error, whatever came before."""
        self._kill(process)
        outcome.protocol_error = f"protocol error on the grader's private result channel: {exc}"
        outcome.stopped = outcome.protocol_error
        missing = [case.index for case in job.cases if case.index not in outcome.cases]
        outcome.stopped_in_case = missing[0] if missing else None
