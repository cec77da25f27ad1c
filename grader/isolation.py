"""Running submissions in a fresh child interpreter: scrubbed environment, private folder, time limits.

The child (grader/child.py) is spawned, never forked, so it starts with no JAX state of ours. Results come
back over a private pipe as JSON lines; the child's stdout, stderr and exit status are never read as a
verdict.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib.metadata
import json
import os
import pickle
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.cases import Case
from grader.errors import CourseError, UsageError
from grader.problems import Problem
from grader.protocol import Raised, Returned, decode_raised, decode_returned
from grader.results import output_cut_marker

CHILD_SCRIPT = Path(__file__).with_name("child.py")
BLOCKED_IMPORTS = ["grader", "solutions"]
# Variables that choose the backend or locale: passed through so learner and reference see the same device.
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "JAX_PLATFORMS", "CUDA_VISIBLE_DEVICES", "XLA_FLAGS")
CACHE_ENV = "GRADE_CACHE_DIR"
SANDBOX_ENV = "GRADE_SANDBOX"  # a command that runs learner code in an OS sandbox (README: high stakes)
LANDLOCK_ENV = "GRADE_LANDLOCK"  # "off": learner children do not restrict themselves with Landlock
REQUIRE_SANDBOX_ENV = "GRADE_REQUIRE_SANDBOX"  # "1": grade nothing where no sandbox held
OUTPUT_HEAD, OUTPUT_TAIL = 4_000, 12_000  # what a report keeps of a child's stdout or stderr
WATCH_INTERVAL = 0.1  # seconds between checks of the child's memory
MAX_LINE = 64 << 20


GIB = 1 << 30


@dataclass(frozen=True)
class Limits:
    """What one child may use.

    `timeout` is the wall-clock limit per case and `start_timeout` the allowance for starting Python and
    importing the submission. `memory_bytes` bounds the child's memory (None: no limit). `output_bytes`
    bounds what it may write to stdout, stderr and any file. `cpu_time` bounds the CPU seconds of the
    whole child; by default it is the wall-clock total times the number of cores, a backstop that the
    kernel enforces even if the grader itself is killed.
    """

    timeout: float = 60.0
    start_timeout: float = 120.0
    memory_bytes: int | None = 4 * GIB
    output_bytes: int = 64 << 20
    cpu_time: float | None = None
    # Learner children restrict themselves with Landlock (grader/landlock.py) unless GRADE_LANDLOCK=off;
    # with `require_sandbox` (--require-sandbox, GRADE_REQUIRE_SANDBOX=1) a child in which neither Landlock
    # nor GRADE_SANDBOX holds grades nothing: every problem is an error that says why.
    landlock: bool = field(default_factory=lambda: os.environ.get(LANDLOCK_ENV, "").lower() != "off")
    require_sandbox: bool = field(default_factory=lambda: os.environ.get(REQUIRE_SANDBOX_ENV, "") == "1")
    landlock_course: bool = False  # the course's own files too (grade check runs each as a learner's would)

    def cpu_seconds(self, cases: int) -> int:
        if self.cpu_time is not None:
            return max(1, int(self.cpu_time))
        return int((self.start_timeout + self.timeout * max(cases, 1)) * (os.cpu_count() or 1)) + 1


def describe_size(size: int) -> str:
    """Returns a byte count the way people write it: 4 GiB, 512 MiB."""
    for unit, scale in (("GiB", GIB), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size} bytes"


@functools.cache
def installed_packages() -> dict[str, str]:
    """Returns the installed distributions, name (lower case, `-` for `_`) to version; read once."""
    return {
        (dist.metadata["Name"] or "").lower().replace("_", "-"): dist.version
        for dist in importlib.metadata.distributions()
    }


def _gpu_plugin_installed() -> bool:
    plugins = ("jax-cuda", "jax-rocm", "jaxlib-cuda", "jax-tpu", "libtpu")
    return any(name.startswith(plugins) for name in installed_packages())


def address_space_limit(limits: Limits) -> int | None:
    """Returns the address-space limit to set in the child: the memory limit on CPU-only installs.

    GPU runtimes reserve far more address space than they use, so there the limit is kept by watching
    the child's resident memory instead (the watch runs on every backend).
    """
    if limits.memory_bytes is None:
        return None
    platforms = os.environ.get("JAX_PLATFORMS", "")
    if platforms and set(platforms.split(",")) == {"cpu"}:
        return limits.memory_bytes
    return None if _gpu_plugin_installed() else limits.memory_bytes


def _processes() -> list[tuple[int, int, int]]:
    """Returns (pid, parent pid, session) of every process this user can see."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
            fields = stat[stat.rindex(")") + 2 :].split()  # state ppid pgrp session ...
            found.append((int(entry.name), int(fields[1]), int(fields[3])))
        except (OSError, ValueError, IndexError):
            continue  # gone, or not ours to read
    return found


def _session_members(session: int) -> list[int]:
    """Returns the processes of a session: the child, and whatever it started that did not leave."""
    return [pid for pid, _, sid in _processes() if sid == session]


# Children this process started and has not reaped; guarded by _CHILDREN_LOCK, which is held from before a
# child is started until its pid is recorded, so that an orphan hunt never takes a new child for an orphan.
_OWN_CHILDREN: set[int] = set()
_CHILDREN_LOCK = threading.Lock()
_PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper() -> None:
    """Makes this process the subreaper of everything it starts (Linux 3.4 and later): a process that leaves
    its child's session with setsid() and loses its parent is then reparented here, not to init, where
    `_kill_orphans` finds it."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _kill_orphans() -> None:
    """Kills and reaps the processes reparented to this process (see `_become_subreaper`): whatever learner
    code left behind outside its child's session. Repeats until none is left, so that one that forks while
    it is being killed is found too. A process in this process's own session (what its caller started
    itself, a test runner's subprocess say) is never touched."""
    if not sys.platform.startswith("linux"):
        return
    me, my_session = os.getpid(), os.getsid(0)
    for _ in range(50):
        with _CHILDREN_LOCK:
            orphans = [
                pid
                for pid, parent, session in _processes()
                if parent == me and session != my_session and pid not in _OWN_CHILDREN
            ]
            for pid in orphans:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        if not orphans:
            return
        for pid in orphans:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)


def _resident_bytes(session: int) -> int:
    """Returns the resident memory of a session's processes together, so that forking does not evade
    the memory limit."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    for pid in _session_members(session):
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int(Path(f"/proc/{pid}/statm").read_text(encoding="ascii").split()[1]) * page
    return total


@dataclass(frozen=True)
class LoadFailure:
    """Why a submission could not be imported or its function not called: one line, plus detail."""

    kind: str  # syntax | import | missing_function | signature | crash
    message: str
    detail: str = ""


@dataclass(frozen=True)
class CaseOutcome:
    index: int
    seconds: float
    returned: Returned | None = None
    raised: Raised | None = None


@dataclass
class RunOutcome:
    """Everything one submission's run produced: load result, per-case outcomes, and how the run ended."""

    label: str
    load_failure: LoadFailure | None = None
    cases: dict[int, CaseOutcome] = field(default_factory=dict)
    stopped: str = ""  # why the run ended before its last case ("timed out after 60 s in case 3", ...)
    stopped_in_case: int | None = None
    stdout: str = ""
    stderr: str = ""
    sandbox: dict | None = None  # what protected the child that ran it (IsolatedRun._sandbox_state)


def cache_root() -> Path | None:
    """Returns the folder of the grader's caches: $GRADE_CACHE_DIR ("off": None), by default
    ~/.cache/mp-grader."""
    setting = os.environ.get(CACHE_ENV, "")
    if setting.lower() == "off":
        return None
    if setting:
        return Path(setting)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mp-grader"


def compilation_cache(trusted: bool) -> Path | None:
    """Returns the folder where children keep JAX's compiled kernels between runs, or None when off.

    The course's own code and submissions use separate folders, so a submission's compilations never feed
    the reference. JAX keys each entry by the computation, the JAX version and the backend, so an entry
    never changes a result, only the time to get it.
    """
    root = cache_root()
    return None if root is None else root / ("jax-course" if trusted else "jax-submissions")


def _sandbox_words() -> list[str]:
    """Returns $GRADE_SANDBOX split like a shell line (empty when unset), or raises CourseError."""
    try:
        return shlex.split(os.environ.get(SANDBOX_ENV, ""))
    except ValueError as exc:
        raise CourseError(f"{SANDBOX_ENV} is not a valid command line: {exc}") from None


def sandbox_prefix(problem: Problem) -> list[str]:
    """Returns the command put before a learner's child interpreter: $GRADE_SANDBOX with `{solutions}`
    and `{course}` replaced by the course's folders; empty when unset."""
    course = problem.directory.parent.parent
    places = {"{course}": str(course), "{solutions}": str(course / "solutions")}
    words = []
    for word in _sandbox_words():
        for placeholder, path in places.items():
            word = word.replace(placeholder, path)
        words.append(word)
    return words


def check_sandbox_required(limits: Limits) -> None:
    """Raises UsageError when a sandbox is required but switched off with no GRADE_SANDBOX to stand in; a
    kernel without Landlock is found by the child itself, which then grades nothing (grader/child.py)."""
    if limits.require_sandbox and not limits.landlock and not _sandbox_words():
        raise UsageError(
            f"a sandbox is required (--require-sandbox or {REQUIRE_SANDBOX_ENV}=1), but Landlock is switched "
            f"off ({LANDLOCK_ENV}=off) and {SANDBOX_ENV} is not set"
        )


def check_sandbox() -> None:
    """Raises CourseError when $GRADE_SANDBOX is set but names a command that is not installed."""
    words = _sandbox_words()
    if words and shutil.which(words[0]) is None:
        raise CourseError(f"{SANDBOX_ENV} names {words[0]!r}, which is not installed")


def _child_env(workdir: Path, trusted: bool, sandboxed: bool) -> dict[str, str]:
    env = {name: os.environ[name] for name in PASSED_ENV if name in os.environ}
    env.update(HOME=str(workdir), TMPDIR=str(workdir), PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
    # A sandbox may run the child as another user, who could not write to the grader's cache folder.
    cache = None if sandboxed else compilation_cache(trusted)
    if cache is not None:
        env.update(
            JAX_COMPILATION_CACHE_DIR=str(cache),
            # Keep every kernel: op-by-op (eager) code compiles many small ones, each in milliseconds.
            JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
            JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0",
        )
    return env


def _read_capped(path: Path) -> str:
    """Returns a child's output, its middle cut (and the cut counted) when it is long."""
    if not path.is_file():
        return ""
    size = path.stat().st_size
    with path.open("rb") as handle:
        if size <= OUTPUT_HEAD + OUTPUT_TAIL:
            return handle.read().decode("utf-8", "replace")
        head = handle.read(OUTPUT_HEAD).decode("utf-8", "replace")
        handle.seek(size - OUTPUT_TAIL)
        tail = handle.read().decode("utf-8", "replace")
    cut = size - OUTPUT_HEAD - OUTPUT_TAIL
    return f"{head}\n{output_cut_marker(cut)}\n{tail}"


def _describe_exit(returncode: int, cpu_seconds: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        if name == "SIGXCPU":
            return f"the process used up its CPU-time limit of {cpu_seconds} s"
        return f"the process crashed ({name})"
    return f"the process exited with status {returncode}"


class _Reader:
    """Reads JSON lines from the result pipe with a deadline per read."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""
        self.closed = False

    def next_event(self, deadline: float, over_memory) -> dict | str | None:
        """Returns the next event, None at end of stream, "timeout", or "memory" when `over_memory()`."""
        while b"\n" not in self.buffer:
            if self.closed:
                return None
            if over_memory():
                return "memory"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout"
            ready, _, _ = select.select([self.fd], [], [], min(remaining, WATCH_INTERVAL))
            if not ready:
                continue
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                self.closed = True
                continue
            self.buffer += chunk
            if len(self.buffer) > MAX_LINE and b"\n" not in self.buffer:
                return None
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            event = json.loads(line)
        except ValueError:
            return {"event": "garbage"}
        return event if isinstance(event, dict) else {"event": "garbage"}


@dataclass(frozen=True)
class Job:
    """One submission to call on one problem's cases."""

    label: str  # unique within a run
    path: Path
    problem: Problem
    cases: list[Case]
    after: str = ""  # a job this one only serves: not run in a fresh child if that one stopped its child


class IsolatedRun:
    """Child interpreters running a list of jobs in order: one child for them all, as long as none of them
    stops it. A job that times out, crashes or runs out of memory ends its child; the jobs after it go on
    in a fresh child, so one broken problem costs the others nothing.

    `start()` returns at once; `wait()` returns every outcome, `wait_for(label)` one outcome as soon as its
    job is over. Runs (a learner's and the reference's) can be in flight together.
    """

    def __init__(self, jobs: list[Job], limits: Limits, trusted: bool = False) -> None:
        if len({job.label for job in jobs}) != len(jobs):
            raise ValueError("every job of a run needs its own label")
        self.jobs = jobs
        self.limits = limits
        self.trusted = trusted
        self._thread: threading.Thread | None = None
        self._outcomes = {job.label: RunOutcome(label=job.label) for job in jobs}
        self._over = {job.label: threading.Event() for job in jobs}
        self._process: subprocess.Popen | None = None
        self._cancelled = threading.Event()
        self.sandbox: dict = {}

    def start(self) -> IsolatedRun:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Stops the child if it is still running: its outcomes are no longer needed."""
        self._cancelled.set()
        if self._process is not None:
            _kill_group(self._process)

    def wait(self) -> dict[str, RunOutcome]:
        assert self._thread is not None, "start() first"
        self._thread.join()
        return self._outcomes

    def wait_for(self, label: str) -> RunOutcome:
        """Returns the outcome of one job as soon as it is over (its child may go on with the next)."""
        assert self._thread is not None, "start() first"
        self._over[label].wait()
        return self._outcomes[label]

    def _skipped(self, job: Job) -> bool:
        """Skips (and marks over) a job whose `after` job stopped its child or failed to load: the same code
        would only hang or crash again."""
        before = self._outcomes.get(job.after)
        if before is None or not (before.stopped or before.load_failure):
            return False
        self._outcomes[job.label].stopped = f"not run: {job.after} did not finish"
        self._over[job.label].set()
        return True

    def _request(self, jobs: list[Job]) -> bytes:
        return pickle.dumps(
            {
                "jobs": [
                    {
                        "label": job.label,
                        "problem": job.problem.id,
                        "path": str(job.path),
                        "function": job.problem.function,
                        "parameters": list(job.problem.parameters),
                        "harness": str(job.problem.harness_path or ""),
                        "cases": [(case.index, case.inputs) for case in job.cases],
                    }
                    for job in jobs
                ],
                "block_imports": [] if self.trusted else BLOCKED_IMPORTS,
                "sandbox": self._landlock_request(jobs),
                "limits": {
                    "address_space": address_space_limit(self.limits),
                    "file_size": self.limits.output_bytes,
                    "cpu_seconds": self._cpu_seconds(jobs),
                },
            }
        )

    def _landlock_request(self, jobs: list[Job]) -> dict | None:
        """What the child needs to restrict itself with Landlock: the folders it must never read (the course
        checkouts, which hold the solutions); None for the course's own code or when switched off."""
        if not self.limits.landlock or (self.trusted and not self.limits.landlock_course):
            return None
        courses = sorted({str(job.problem.directory.parent.parent) for job in jobs})
        return {"forbidden": courses, "required": self.limits.require_sandbox and not self._sandbox()}

    def _sandbox_state(self) -> dict:
        """What protects this run's children before they report: nothing, and why."""
        command = " ".join(self._sandbox())
        if not self.limits.landlock:
            reason = f"switched off: {LANDLOCK_ENV}=off"
        else:
            reason = "the child stopped before it reported its sandbox"
        return {
            "abi": 0,
            "filesystem": False,
            "network": False,
            "signals": False,
            "reason": reason,
            "command": command,
        }

    def _cpu_seconds(self, jobs: list[Job]) -> int:
        """The CPU-time limit of a child that runs `jobs`."""
        return self.limits.cpu_seconds(sum(len(job.cases) for job in jobs))

    def _sandbox(self) -> list[str]:
        """The sandbox command for this run's children: none for the course's own code."""
        return [] if self.trusted else sandbox_prefix(self.jobs[0].problem)

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
        # Before its first job the child writes here (JAX's own warnings); each job then writes to files of
        # its own (grader/child.py), so that prints show up in the report of the problem that made them.
        stdout_path, stderr_path = workdir / ".stdout", workdir / ".stderr"
        _become_subreaper()
        with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr, _CHILDREN_LOCK:
            process = subprocess.Popen(
                [
                    *prefix,
                    sys.executable,
                    "-I",
                    "-u",
                    str(CHILD_SCRIPT),
                    str(request_read),
                    str(result_write),
                ],
                pass_fds=(request_read, result_write),
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                cwd=workdir,
                env=_child_env(workdir, self.trusted, sandboxed=bool(prefix)),
                start_new_session=True,
            )
            _OWN_CHILDREN.add(process.pid)
        self._process = process
        self.sandbox, self._sandbox_reported = self._sandbox_state(), False
        if self._cancelled.is_set():
            _kill_group(process)
        os.close(request_read)
        os.close(result_write)
        writer = threading.Thread(target=self._write_request, args=(request_write, jobs), daemon=True)
        writer.start()
        over = 0
        try:
            over = self._collect(process, _Reader(result_read), jobs, workdir)
        finally:
            _kill_group(process)
            os.close(result_read)
            writer.join(timeout=5)
            for number, job in enumerate(jobs[: max(over, 1)]):
                if not self._over[job.label].is_set():  # the job the child stopped in
                    self._finish(job, workdir, number)
        return max(over, 1)

    def _finish(self, job: Job, workdir: Path, number: int) -> None:
        """Attaches what the job printed to its outcome and makes the outcome available."""
        outcome = self._outcomes[job.label]
        outcome.sandbox = dict(self.sandbox)
        before = (
            [_read_capped(workdir / name) for name in (".stdout", ".stderr")] if number == 0 else ["", ""]
        )
        outcome.stdout = before[0] + _read_capped(workdir / f".stdout-{number}")
        outcome.stderr = before[1] + _read_capped(workdir / f".stderr-{number}")
        self._over[job.label].set()

    def _write_request(self, fd: int, jobs: list[Job]) -> None:
        try:
            with os.fdopen(fd, "wb") as sink:
                sink.write(self._request(jobs))
        except OSError:
            pass  # the child died before reading: its outcome says why

    def _collect(self, process: subprocess.Popen, reader: _Reader, jobs: list[Job], workdir: Path) -> int:
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
                    # Sent before learner code runs: learner code could forge a later one, never an earlier.
                    if not self._sandbox_reported:
                        self.sandbox = {**self.sandbox, **_sandbox_event(event)}
                        self._sandbox_reported = True
                    continue
                if event.get("label") != job.label:
                    continue  # garbage or events out of order: only the grader's protocol counts
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
            self._finish(job, workdir, number)
        return len(jobs)

    def _over_memory(self, process: subprocess.Popen) -> bool:
        limit = self.limits.memory_bytes
        return limit is not None and _resident_bytes(process.pid) > limit

    def _stop(
        self,
        process: subprocess.Popen,
        outcome: RunOutcome,
        position: int,
        expected: list[int],
        why: str | None,
        jobs: list[Job],
    ) -> None:
        if why == "timeout":
            _kill_group(process)
            limit = self.limits.start_timeout if position == -1 else self.limits.timeout
            reason = f"timed out after {limit:g} s"
        elif why == "memory":
            _kill_group(process)
            reason = (
                f"out of memory: used more than {describe_size(self.limits.memory_bytes)} (--memory-limit)"
            )
        else:
            returncode = _exit_status_unreaped(process, timeout=10)
            _kill_group(process)  # also what it left behind
            status = process.returncode if returncode is None else returncode
            reason = _describe_exit(status, self._cpu_seconds(jobs))
        if position == -1:
            outcome.load_failure = LoadFailure(kind="crash", message=f"{reason} while loading the submission")
        else:
            outcome.stopped = reason
            outcome.stopped_in_case = expected[position]


def _sandbox_event(event: dict) -> dict:
    """The protections a child reports (learner code has not run yet when it does), checked field by field."""
    held = {key: event.get(key) is True for key in ("filesystem", "network", "signals")}
    abi = event.get("abi")
    return {**held, "abi": abi if isinstance(abi, int) else 0, "reason": str(event.get("reason", ""))[:300]}


def _exit_status_unreaped(process: subprocess.Popen, timeout: float) -> int | None:
    """Waits up to `timeout` for the child to exit and returns its status as Popen would, without reaping
    it: while it is a zombie its pid (which names its process group and session) cannot be reused."""
    deadline = time.monotonic() + timeout
    while process.returncode is None:
        try:
            info = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return None
        if info is not None:
            killed = info.si_code in (os.CLD_KILLED, os.CLD_DUMPED)
            return -info.si_status if killed else info.si_status
        if time.monotonic() > deadline:
            return None
        time.sleep(0.01)
    return process.returncode


def _kill_group(process: subprocess.Popen) -> None:
    """Kills the child and every process left in its session, also one that left the child's process
    group, and also after the child has exited (it is reaped only afterwards, so its ids stay ours)."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        if sys.platform.startswith("linux"):
            for pid in _session_members(process.pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
    process.wait()
    with _CHILDREN_LOCK:
        _OWN_CHILDREN.discard(process.pid)
    _kill_orphans()
