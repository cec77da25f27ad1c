"""Running submissions in a fresh child interpreter: one child for a list of jobs, a fresh one after a job
that stops it, and the pipe its results come back on.

The child (grader/child.py, where learner code runs) is spawned, never forked, so it starts with no JAX state
of ours. Results come back over a private pipe as JSON lines; the child's stdout, stderr and exit status are
never read as a verdict. Its limits are in grader/limits.py, its sandboxes in grader/sandbox.py, and the
processes it leaves behind are found and killed by grader/processes.py.
"""

from __future__ import annotations

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

from grader.jobs import Job, cpu_seconds, encode_request
from grader.limits import Limits, describe_size
from grader.outcomes import CaseOutcome, LoadFailure, RunOutcome, describe_exit, read_capped
from grader.processes import exit_status_unreaped, kill_group, resident_bytes, start_child
from grader.protocol import EventReader, decode_profile, decode_raised, decode_returned
from grader.results import Sandbox
from grader.sandbox import landlock_request, reported, sandbox_prefix, unreported

CHILD_SCRIPT = Path(__file__).with_name("child.py")


class IsolatedRun:
    """Child interpreters running a list of jobs in order: one child for them all, as long as none of them
    stops it. A job that times out, crashes or runs out of memory ends its child; the jobs after it go on
    in a fresh child, so one broken problem costs the others nothing.

    `start()` returns at once; `wait_for(label)` returns one outcome as soon as its job is over. Runs (a
    learner's and the reference's) can be in flight together.
    """

    def __init__(
        self,
        jobs: list[Job],
        limits: Limits,
        trusted: bool = False,
        needed: Callable[[Job, RunOutcome, str], bool] | None = None,
    ) -> None:
        """`needed(job, outcome of the answer it serves, "run" or "profile")` decides whether the child runs
        a job that serves another (`after`), and whether it profiles a job marked `profile_if_failed`;
        without it, all do."""
        if len({job.label for job in jobs}) != len(jobs):
            raise ValueError("every job of a run needs its own label")
        self.jobs = jobs
        self.needed = needed
        self.limits = limits
        self.trusted = trusted
        self._thread: threading.Thread | None = None
        self._outcomes = {job.label: RunOutcome(label=job.label) for job in jobs}
        self._over = {job.label: threading.Event() for job in jobs}
        self._process: subprocess.Popen | None = None
        self._cancelled = threading.Event()
        self.sandbox = Sandbox()

    def start(self) -> IsolatedRun:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Stops the child if it is still running: its outcomes are no longer needed."""
        self._cancelled.set()
        if self._process is not None:
            kill_group(self._process)

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
        finally:
            for over in self._over.values():
                over.set()

    def _run_child(self, jobs: list[Job]) -> int:
        """Runs `jobs` in one fresh child and returns how many of them are over (all, unless it stopped)."""
        workdir = Path(tempfile.mkdtemp(prefix="grade-"))
        prefix = self._sandbox()
        if prefix:
            workdir.chmod(0o777)  # the sandbox may run the child as another user (setpriv, runuser)
        try:
            return self._run_in(workdir, jobs, prefix)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def _run_in(self, workdir: Path, jobs: list[Job], prefix: list[str]) -> int:
        request_read, request_write = os.pipe()
        result_read, result_write = os.pipe()
        control_read, control_write = os.pipe()  # the grader's answers to the child's "ask" events
        # Before its first job the child writes here (JAX's own warnings); each job then writes to files of
        # its own (grader/child.py), so that prints show up in the report of the problem that made them.
        stdout_path, stderr_path = workdir / ".stdout", workdir / ".stderr"
        with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
            fds = (request_read, result_write, control_read)
            process = start_child(
                [*prefix, sys.executable, "-I", "-u", str(CHILD_SCRIPT), *map(str, fds)],
                pass_fds=fds,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                cwd=workdir,
                env=self.limits.settings.child_environment(workdir, self.trusted, sandboxed=bool(prefix)),
            )
        self._process = process
        self.sandbox = unreported(self.limits, prefix)
        landlock = landlock_request(self.limits, [job.problem for job in jobs], self.trusted, prefix)
        # A child asked to restrict itself reports it before any learner code runs: that first report is the
        # only one taken. A child not asked reports nothing, so any report it sends was forged.
        self._sandbox_reported = landlock is None
        if self._cancelled.is_set():
            kill_group(process)
        os.close(request_read)
        os.close(result_write)
        os.close(control_read)
        self._control = control_write
        request = encode_request(jobs, self.limits, self.trusted, landlock, ask=self.needed is not None)
        writer = threading.Thread(target=self._write_request, args=(request_write, request), daemon=True)
        writer.start()
        over = 0
        try:
            over = self._collect(process, EventReader(result_read), jobs, workdir)
        finally:
            kill_group(process)
            os.close(result_read)
            os.close(control_write)
            writer.join(timeout=5)
            for number, job in enumerate(jobs[: max(over, 1)]):
                if not self._over[job.label].is_set():  # the job the child stopped in
                    self._finish(job, workdir, number)
        return max(over, 1)

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

    def _collect(self, process: subprocess.Popen, reader: EventReader, jobs: list[Job], workdir: Path) -> int:
        """Reads the child's events into the jobs' outcomes; returns how many jobs are over (the job the
        child stopped in counts as over)."""
        for number, job in enumerate(jobs):
            outcome = self._outcomes[job.label]
            expected = [case.index for case in job.cases]
            position = -1  # -1: waiting for the job's load event; else the position of its next case
            deadline = time.monotonic() + self.limits.start_timeout
            while position < len(expected):
                event = reader.next_event(deadline, lambda: self._over_memory(process))
                if event in ("timeout", "memory", None):
                    self._stop(process, outcome, position, expected, event, jobs)
                    return number + 1
                if event.get("event") == "sandbox":
                    if not self._sandbox_reported:
                        self.sandbox, self._sandbox_reported = reported(event, self.sandbox), True
                    continue
                if event.get("label") != job.label:
                    continue  # garbage or events out of order: only the grader's protocol counts
                if event.get("event") == "ask" and position == -1 and job.after and self.needed:
                    if self._answer(job, "run"):
                        continue
                    outcome.stopped = "not run: not needed"
                    break
                if event.get("event") == "load" and position == -1:
                    if event.get("ok") is not True:
                        outcome.load_failure = LoadFailure(
                            kind=str(event.get("kind", "import")),
                            message=str(event.get("message", ""))[:4000],
                            detail=str(event.get("detail", ""))[:8000],
                        )
                    position = 0 if event.get("ok") is True else len(expected)
                elif event.get("event") == "case" and position >= 0:
                    index = expected[position]
                    if event.get("index") != index:
                        continue
                    seconds = event.get("seconds")
                    outcome.cases[index] = CaseOutcome(
                        index=index,
                        seconds=float(seconds) if isinstance(seconds, int | float) else 0.0,
                        returned=decode_returned(event["returned"]) if "returned" in event else None,
                        raised=decode_raised(event["raised"]) if "raised" in event else None,
                    )
                    position += 1
                else:
                    continue
                deadline = time.monotonic() + self.limits.timeout
            profiled = job.profile and not (outcome.load_failure or outcome.stopped)
            if profiled and not self._collect_profile(process, reader, job, outcome):
                return number + 1
            self._finish(job, workdir, number)
        return len(jobs)

    def _collect_profile(
        self, process: subprocess.Popen, reader: EventReader, job: Job, outcome: RunOutcome
    ) -> bool:
        """Reads the job's precision profile (or the question before it); False when the child stopped
        while tracing, which costs the profile only, never the job's verdict."""
        deadline = time.monotonic() + self.limits.timeout
        while True:
            event = reader.next_event(deadline, lambda: self._over_memory(process))
            if event in ("timeout", "memory", None):
                reason = self._halt(process, event, self.limits.timeout, [job])
                outcome.profile = {"error": f"the trace stopped the process: {reason}"}
                return False
            if event.get("label") != job.label:
                continue
            if event.get("event") == "ask" and event.get("what") == "profile" and self.needed:
                if not self._answer(job, "profile"):
                    return True
            elif event.get("event") == "profile":
                outcome.profile = decode_profile(event.get("profile"))
                return True

    def _answer(self, job: Job, what: str) -> bool:
        """Tells the child whether to run `job` (a job serving another) or profile it, by whether the answer
        it serves failed; returns the answer."""
        run = self.needed(job, self._outcomes[job.after or job.label], what)
        with contextlib.suppress(OSError):  # the child is gone: the next read says so
            os.write(self._control, b"1" if run else b"0")
        return run

    def _over_memory(self, process: subprocess.Popen) -> bool:
        limit = self.limits.memory_bytes
        return limit is not None and resident_bytes(process.pid) > limit

    def _halt(self, process: subprocess.Popen, why: str | None, limit: float, jobs: list[Job]) -> str:
        """Stops the child and says why it stopped: a time or memory limit it ran over, or how it ended."""
        if why in ("timeout", "memory"):
            kill_group(process)
            if why == "timeout":
                return f"timed out after {limit:g} s"
            return f"out of memory: used more than {describe_size(self.limits.memory_bytes)} (--memory-limit)"
        returncode = exit_status_unreaped(process, timeout=10)
        kill_group(process)  # also what it left behind
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
