"""The child side of grading: loads submissions and calls their function on every case.

Run as a script in a fresh interpreter (`python -I -u main.py REQUEST_FD RESULT_FD CONTROL_FD [isolate]`).
With `isolate` (a learner's child) it first enters a PID namespace of its own
(grader/child/process_namespace.py). It reads one pickled request from the grader (grader/running/jobs.py:
jobs, each a copy of a submission in this process's folder, the learner's own path for it, its function and
its cases), loads the problems' harnesses, closes what learner code must not reach (Landlock,
grader/child/landlock.py; the seccomp filter on sockets, grader/child/seccomp.py) when asked, says so in its
ready event, and only then imports submissions; it writes one JSON object per line to the private result pipe
(the events are listed in grader/protocol/events.py, which checks them). Standalone on purpose: it imports
only the standard library, numpy and jax, and loads its siblings by path (grader/child/calls.py first: how
a submission is imported and a case called), so that the grader package need not be importable here. The one
other caller of `call_case` is `grade_function` (notebooks: practice cases, in the caller's process).

A job marked `ask` (the practice run that names a failed answer's mistake, after the hidden run it serves)
runs only if the grader answers b"1" on the control pipe, reusing the function the job before loaded. A job
with a `profile` case is traced on it after its cases (grader/profile/profiler.py), if the grader says so when
asked.

A problem with a harness (`problems/<id>/harness.py`, course code) is not called directly: the child calls
`harness.run_case(function, inputs, folder)` with a fresh empty folder per case, and the harness makes the
calls, checks what they wrote, and returns the output. It raises `harness.Rejected(message, pitfall=...)`
when what the learner wrote fails the problem's check; the report shows the message, and names the pitfall.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pickle
import shutil
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any


def _load_calls() -> ModuleType:
    """calls.py, loaded by path: it loads the other siblings (the child cannot import the grader package)."""
    spec = importlib.util.spec_from_file_location("_grader_child_calls", Path(__file__).with_name("calls.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_calls = _load_calls()
_sibling, load_function, load_harness, call_case = (
    _calls.sibling,
    _calls.load_function,
    _calls.load_harness,
    _calls.call_case,
)
_describe, _limits = _sibling("describe"), _sibling("limits")


def _load_harnesses(jobs: list[dict[str, Any]]) -> dict[str, ModuleType | BaseException]:
    """Loads the harness of every job once, by path; a harness that fails to load maps to its exception."""
    harnesses: dict[str, ModuleType | BaseException] = {}
    for path in {job.get("harness") or "" for job in jobs} - {""}:
        try:
            harnesses[path] = load_harness(path)
        except BaseException as exc:
            harnesses[path] = exc
    return harnesses


def _forget_compiled() -> None:
    """Drops the compiled kernels of the jobs before: a later problem compiles its own, and one child
    running every problem would otherwise hold them all (about 150 MB for this course)."""
    import gc

    import jax

    jax.clear_caches()
    gc.collect()


def _redirect_output(workdir: str, number: int) -> None:
    """Sends fd 1 and 2 to the files of job `number`, so that each job's prints are reported with it."""
    sys.stdout.flush()
    sys.stderr.flush()
    for fd, name in ((1, "stdout"), (2, "stderr")):
        target = os.open(
            os.path.join(workdir, f".{name}-{number}"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644
        )
        os.dup2(target, fd)
        os.close(target)


class _Channel:
    def __init__(self, fd: int) -> None:
        self._file = os.fdopen(fd, "w", encoding="utf-8")

    def send(self, **event: Any) -> None:
        self._file.write(json.dumps(event, allow_nan=False) + "\n")
        self._file.flush()


def _load(channel: _Channel, job: dict, number: int) -> Any:
    """Loads the job's function and reports it; None when it cannot be loaded (the report says why)."""
    start = time.perf_counter()
    fn, failure = load_function(
        Path(job["path"]), job["function"], job["parameters"], f"submission_{number}", job["shown"]
    )
    if failure:
        channel.send(event="load", label=job["label"], **failure)
        return None
    channel.send(event="load", label=job["label"], ok=True, seconds=time.perf_counter() - start)
    return fn


def _harness_failures(jobs: list[dict], harnesses: dict) -> dict[str, dict[str, str]]:
    """The problems whose harness (course code) failed to load, with why: said in the ready event, before
    any learner code runs, since a learner's process could forge anything it says later."""
    failures = {}
    for job in jobs:
        harness = harnesses.get(job.get("harness") or "")
        if isinstance(harness, BaseException):
            detail = "".join(traceback.format_exception(harness))
            failures[job["problem"]] = {
                "message": _describe.cap(f"harness: {harness}"),
                "detail": _describe.cap(detail),
            }
    return failures


def _run_cases(channel: _Channel, job: dict, fn, number: int, workdir: str, harnesses: dict) -> None:
    """Calls `fn` on every case of the job and reports each outcome."""
    path, harness = Path(job["shown"]), harnesses.get(job.get("harness") or "")
    for index, inputs in job["cases"]:
        folder = Path(workdir, f"case-{number}-{index}") if harness else None
        outcome = call_case(fn, inputs, path, harness, folder)
        channel.send(event="case", label=job["label"], index=index, **outcome)


def _ask(channel: _Channel, control: int | None, label: str, what: str) -> bool:
    """Asks the grader whether to go on with `what` ("run" the job, "profile" it): b"1" says yes."""
    channel.send(event="ask", label=label, what=what)
    return control is not None and os.read(control, 1) == b"1"


_profiler: ModuleType | None = (
    None  # grader/profile/profiler.py, loaded before the sandbox closes the grader's folder
)


def _profile(channel: _Channel, job: dict, fn, number: int, workdir: str, harnesses: dict, control) -> None:
    """Traces `fn` on the job's profile case and reports its precision profile, compacted: after the cases,
    under the same limits, asking the grader first when the job says so."""
    wanted = job.get("profile")
    if (
        not wanted
        or _profiler is None
        or (wanted["ask"] and not _ask(channel, control, job["label"], "profile"))
    ):
        return
    harness = harnesses.get(job.get("harness") or "")
    folder = Path(workdir, f"profile-{number}")  # the harness's calls write here; so may a second try
    folder.mkdir(parents=True)
    try:
        found = _profiler.profile(fn, wanted["inputs"], Path(job["shown"]), harness, folder)
        if "entries" in found:
            found["entries"] = _profiler.compact(found["entries"])
    except BaseException as exc:  # advice only: a profile that fails is "no profile", never the job's end
        found = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    channel.send(event="profile", label=job["label"], profile=found)


def _restrict(sandbox: dict, processes: dict, privileges: dict) -> dict[str, Any]:
    """Closes what learner code must not reach, before any submission is imported, and returns what held:
    Landlock's filesystem, network and signal rules (grader/child/landlock.py), the seccomp filter
    (grader/child/seccomp.py: sockets; SysV IPC, message queues and keyrings; what root may still do without
    capabilities), the PID and IPC namespaces the child entered at its start
    (grader/child/process_namespace.py), and the capabilities it gave up then (grader/child/privileges.py)."""
    import jax

    jax.devices()  # the backend starts before the sandbox closes: a GPU runtime reads /proc and /sys
    landlock, seccomp = _sibling("landlock"), _sibling("seccomp")  # read before Landlock closes their folder
    held = landlock.restrict_child(sandbox["forbidden"]) if sandbox["forbidden"] is not None else None
    report = held or landlock.unavailable("not asked")
    groups = tuple(group for group in seccomp.GROUPS if sandbox.get(group))
    closed = seccomp.close(groups) if groups else {"sockets": False, "reason": "not asked", "groups": []}
    why_open = closed["reason"] if sandbox.get("sockets") else "not asked"
    report |= {"sockets": closed["sockets"], "sockets_reason": why_open}
    report |= {"processes": processes["processes"], "processes_reason": processes["reason"]}
    # IPC of its own: a namespace (made with the PID namespace) or, where none, the filter's refusals
    ipc = "ipc" in closed["groups"]
    ipc_reason = "" if ipc else (closed["reason"] if sandbox.get("ipc") else "not asked")
    report |= {"kernel_objects": ipc, "kernel_objects_reason": ipc_reason}
    powers = privileges["privileges"] and "powers" in closed["groups"]
    powers_reason = privileges["reason"] or ("" if powers else closed["reason"] or "not asked")
    report |= {"privileges": powers, "privileges_reason": powers_reason}
    if not report["filesystem"]:  # nothing keeps this child out of other learners' cache folders
        jax.config.update("jax_enable_compilation_cache", False)
    return report


# why a learner's child was not asked to enter a PID namespace (its last argument; grader/running/sandbox.py)
_NOT_ISOLATED = {"gpu": "JAX may use a GPU here, and CUDA cannot start in a PID namespace"}


def main(argv: list[str]) -> None:
    request_fd, result_fd = int(argv[1]), int(argv[2])
    control = int(argv[3]) if len(argv) > 3 else None
    with os.fdopen(request_fd, "rb") as source:
        request = pickle.load(source)  # written by the grader, never by learner code
    sandbox = request.get("sandbox")
    # First, while this process has one thread: PID and IPC namespaces that take every process it starts
    # and every kernel object it makes with them; then no capability, for this thread and the ones to come.
    mode = argv[4] if len(argv) > 4 else ""
    processes = (
        _sibling("process_namespace").enter(ipc=bool(sandbox and sandbox.get("ipc")))
        if mode == "isolate"
        else {"processes": False, "reason": _NOT_ISOLATED.get(mode, "not asked")}
    )
    # (a user namespace grants its first process every capability in it: given up whether asked or not)
    asked = (sandbox is not None and sandbox.get("powers")) or processes.get("user_namespace")
    privileges = _sibling("privileges").drop_all() if asked else {"privileges": False, "reason": "not asked"}
    channel = _Channel(result_fd)
    _limits.apply_limits(request.get("limits", {}))
    import jax  # noqa: F401  (imported before learner code, so its cost is not the learner's)
    import numpy  # noqa: F401

    _limits.block_imports(request["block_imports"])
    workdir = os.getcwd()  # learner code may change directory; its output files stay here
    harnesses = _load_harnesses(request["jobs"])  # course code, read before the sandbox closes the course
    if any(job.get("profile") for job in request["jobs"]):
        global _profiler
        _profiler = _sibling("profiler", "profile")  # grader code, likewise
        _profiler.preload()
    held = _restrict(sandbox, processes, privileges) if sandbox is not None else None
    failures = _harness_failures(request["jobs"], harnesses)
    channel.send(event="ready", sandbox=held, harness_failures=failures)  # the last word of trusted code
    if held is not None and sandbox["required"] and not held["filesystem"]:
        os._exit(0)  # the grader reads the report and grades nothing
    loaded: dict[tuple[str, str], Any] = {}  # (file, function name) -> what the job before loaded
    for number, job in enumerate(request["jobs"]):
        if job["problem"] in failures:
            continue  # the grader knows from the ready event
        if number and job["problem"] != request["jobs"][number - 1]["problem"]:
            _forget_compiled()  # files of one problem (a reference and its pitfalls) share their kernels
        _redirect_output(workdir, number)
        if job.get("ask") and not _ask(channel, control, job["label"], "run"):
            continue  # not needed: the grader marks it so
        key = (job["path"], job["function"])
        fn = loaded.get(key) if job.get("ask") else None
        if fn is None:
            fn = _load(channel, job, number)
            loaded = {key: fn} if fn is not None else {}
        else:
            channel.send(event="load", label=job["label"], ok=True, seconds=0.0)
        if fn is not None:
            _run_cases(channel, job, fn, number, workdir, harnesses)
            _profile(channel, job, fn, number, workdir, harnesses, control)
    sys.stdout.flush()
    sys.stderr.flush()
    channel.send(event="done")
    os._exit(0)  # skip atexit hooks and threads the learner may have left behind


if __name__ == "__main__":
    main(sys.argv)
