"""Running submissions in a fresh child interpreter: one child for a list of jobs, a fresh one after a job
that stops it, and the pipe its results come back on.

The child (grader/child/main.py, where learner code runs) is spawned, never forked, so it starts with no JAX
state of ours. It grades copies of the submissions' bytes written into its private folder
(grader/running/submission.py), never the learner's paths. Results come back over a private pipe as JSON
lines, each checked against the protocol (grader/protocol/events.py); the child's stdout, stderr and exit
status are never read as a verdict. Its events are read into the jobs' outcomes by
grader/running/collect.py while grader/running/watchdog.py holds it to its limits (grader/running/limits.py);
its sandboxes are in grader/running/sandbox.py, and its processes are counted, found and killed by
grader/running/processes.py.

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
from collections.abc import Callable
from pathlib import Path

from grader.protocol.events import EventReader
from grader.running import kernel_cache
from grader.running.collect import Collector
from grader.running.jobs import Job, encode_request
from grader.running.limits import Limits
from grader.running.outcomes import RunOutcome, read_capped
from grader.running.processes import (
    kill_group,
    start_child,
)
from grader.running.sandbox import process_mode, sandbox_prefix, sandbox_request, unreported
from grader.running.watchdog import Watchdog
from grader.sandbox_report import Sandbox

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
        self.outcomes = {job.label: RunOutcome(label=job.label) for job in jobs}
        self._over = {job.label: threading.Event() for job in jobs}
        self._process: subprocess.Popen | None = None
        self._cancelled = threading.Event()
        self.sandbox = Sandbox()
        settings = limits.settings
        self._strict = settings.protects("strict-protocol")
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
            self.kill(self._process)

    def close(self) -> None:
        """Cancels what is left and waits until the run has cleaned up after itself: no process of its
        children left, no private folder on disk."""
        self.cancel()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        with _LIVE_LOCK:
            _LIVE.discard(self)

    def kill(self, process: subprocess.Popen) -> None:
        """Kills the child and every process it started (grader/running/processes.py)."""
        kill_group(process, as_once=not self.limits.settings.protects("process-namespace"))

    def wait_for(self, label: str) -> RunOutcome:
        """Returns the outcome of one job as soon as it is over (its child may go on with the next)."""
        assert self._thread is not None, "start() first"
        self._over[label].wait()
        return self.outcomes[label]

    def is_over(self, label: str) -> bool:
        return self._over[label].is_set()

    def wait_until_over(self, label: str, seconds: float) -> bool:
        """Waits up to `seconds` for one job to be over; returns whether it is."""
        return self._over[label].wait(seconds)

    def _skipped(self, job: Job) -> bool:
        """Skips (and marks over) a job whose `after` job stopped its child or failed to load: the same code
        would only hang or crash again."""
        before = self.outcomes.get(job.after)
        if before is None or not (before.stopped or before.load_failure):
            return False
        self.outcomes[job.label].stopped = f"not run: {job.after} did not finish"
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
                    self.outcomes[job.label].grader_failure = failure
                    self.outcomes[job.label].sandbox = self.sandbox
        finally:
            for over in self._over.values():
                over.set()
            with _LIVE_LOCK:
                _LIVE.discard(self)  # its children are gone and its folders removed

    def _run_child(self, jobs: list[Job]) -> int:
        """Runs `jobs` in one fresh child and returns how many of them are over (all, unless it stopped)."""
        workdir = Path(tempfile.mkdtemp(prefix="grade-"))
        settings = self.limits.settings
        if (
            self._cache is not None
            and settings.protects("private-cache")
            and settings.protects("own-folders")
        ):
            kernel_cache.prune(self._cache)  # what an earlier run left over the limits is not this run's
        try:
            prefix = self._sandbox()
            paths = self._write_copies(workdir, jobs)
            if prefix:  # the sandbox may run the child as another user (setpriv, runuser)
                for folder in (workdir, *{path.parent for path in paths.values()}):
                    folder.chmod(0o777)
            return self._run_in(workdir, jobs, prefix, paths)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
            if self._cache is not None and settings.protects("private-cache"):
                own = settings.protects("own-folders")
                kernel_cache.prune(self._cache, entries=kernel_cache.LEARNER_ENTRIES if own else None)

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
            self.kill(process)
        self._control = control_write
        request = encode_request(jobs, paths, self.limits, self.trusted, sandbox, ask=self.needed is not None)
        writer = threading.Thread(target=self._write_request, args=(request_write, request), daemon=True)
        writer.start()
        watched = [workdir, *([self._cache] if self._cache else [])]
        watchdog = Watchdog(process, self.limits, self.trusted, watched, self.kill)
        try:
            collector = Collector(self, EventReader(result_read, self._strict), watchdog, self._strict)
            over = collector.collect(jobs, workdir, sandbox)
        finally:
            self.kill(process)
            os.close(result_read)
            os.close(control_write)
            writer.join(timeout=5)
        for number, job in enumerate(jobs[:over]):
            if not self._over[job.label].is_set():  # the job the child stopped in
                self.finish(job, workdir, number)
        return over

    def finish(self, job: Job, workdir: Path, number: int) -> None:
        """Attaches what the job printed to its outcome and makes the outcome available."""
        outcome = self.outcomes[job.label]
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

    def answer(self, job: Job, what: str) -> bool:
        """Tells the child whether to run `job` (a job serving another) or profile it, by whether the answer
        it serves failed; returns the answer."""
        run = self.needed(job, self.outcomes[job.after or job.label], what)
        with contextlib.suppress(OSError):  # the child is gone: the next read says so
            os.write(self._control, b"1" if run else b"0")
        return run
