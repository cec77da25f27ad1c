"""Landlock keeps learner code away from the course checkout, other learners' folders and the network, and
the grader kills what learner code leaves behind even outside its session. Each hostile submission
(tests/submissions/sandbox/) goes through the real `grade` command in hidden mode with no GRADE_SANDBOX,
once as it is graded by default and once with Landlock switched off (GRADE_LANDLOCK=off), the option the
tests use, so that every verdict is seen to depend on the sandbox."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from leftover_processes import live_processes_named, within

from grader import grade_function
from grader.child import landlock
from grader.errors import UsageError
from grader.grading.grader import Grader
from grader.results import Status
from grader.running import processes as processes_module
from grader.running.limits import Limits
from grader.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
FOLDER = Path(__file__).parent / "submissions"
HOSTILE = FOLDER / "sandbox"
SECRET = "sandbox-tests-secret"
GRADE = str(Path(sys.executable).with_name("grade"))
SHOWN = Settings(hidden_output=True)  # hidden mode, as a course that shows learners' messages
ABI = landlock.abi_version()[0]

needs_landlock = pytest.mark.skipif(ABI < 1, reason="this kernel has no Landlock")
needs_network_rules = pytest.mark.skipif(ABI < 4, reason="this kernel's Landlock has no network rules")


def _grade(
    argv: list[str], cwd: Path, sandboxed: bool, *formats: str, unprotected: str = ""
) -> tuple[int, dict, str]:
    """Runs `grade ARGV --format json` in hidden mode (`unprotected`: GRADE_TEST_UNPROTECTED), as a course
    that shows what learner code said (GRADE_HIDDEN_SHOWS_OUTPUT=1: the refusals are read from the
    messages); returns (exit status, the JSON report, stderr)."""
    env = {**os.environ, "GRADE_SECRET": SECRET, "GRADE_TEST_UNPROTECTED": unprotected}
    env["GRADE_HIDDEN_SHOWS_OUTPUT"] = "1"
    env.pop("GRADE_SANDBOX", None)
    env.pop("GRADE_LANDLOCK", None)
    if not sandboxed:
        env["GRADE_LANDLOCK"] = "off"
    command = [GRADE, *argv, "--format", "json", *[word for fmt in formats for word in ("--format", fmt)]]
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    return done.returncode, json.loads(done.stdout), done.stderr


@needs_landlock
def test_the_checkout_found_through_the_install_metadata_is_out_of_reach():
    hostile = str(HOSTILE / "runs_the_reference_via_install_metadata.py")
    argv = ["bf16_train_step", "--submission", hostile]

    status, report, _ = _grade(argv, ROOT, sandboxed=True)
    (problem,) = report["problems"]
    assert status == 1 and problem["status"] == "error"
    assert "PermissionError" in problem["message"] and "solutions/bf16_train_step.py" in problem["message"]
    assert report["sandbox"]["filesystem"] is True and report["sandbox"]["landlock_abi"] == ABI

    status, report, _ = _grade(argv, ROOT, sandboxed=False)
    assert status == 0, "without Landlock the reference is within reach and the cheat passes"
    assert report["sandbox"]["filesystem"] is False and "GRADE_LANDLOCK=off" in report["sandbox"]["reason"]


@needs_landlock
def test_another_learners_folder_is_out_of_reach_and_every_report_says_what_held(toy_course, tmp_path):
    roster = tmp_path / "roster"
    for learner, source in (
        ("alice", toy_course.root / "solutions" / "toy.py"),
        ("bob", HOSTILE / "reads_another_learners_folder.py"),
    ):
        stub = roster / learner / "problems" / "toy" / "stub.py"
        stub.parent.mkdir(parents=True)
        stub.write_text(source.read_text().replace("ROSTER_FOLDER", str(roster)))
    bob = roster / "bob" / "problems" / "toy" / "stub.py"
    files = {fmt: tmp_path / f"report.{fmt}" for fmt in ("junit", "gradescope", "github")}

    formats = [f"{fmt}={path}" for fmt, path in files.items()]
    status, report, _ = _grade(["toy", "--submission", str(bob)], toy_course.root, True, *formats)
    (problem,) = report["problems"]
    assert status == 1 and problem["status"] == "error"
    assert "PermissionError" in problem["message"] and str(roster) in problem["message"]
    held = problem["sandbox"]
    assert held["filesystem"] and held["network"] == (ABI >= 4) and held["signals"] == (ABI >= 6)
    for fmt, path in files.items():
        assert f"Landlock ABI {ABI} restricted filesystem" in path.read_text(), fmt
    text = subprocess.run(
        [GRADE, "toy", "--submission", str(bob)],
        cwd=toy_course.root,
        env={**os.environ, "GRADE_SECRET": SECRET, "GRADE_HIDDEN_SHOWS_OUTPUT": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    assert f"sandbox: Landlock ABI {ABI} restricted filesystem" in text

    status, report, _ = _grade(["toy", "--submission", str(bob)], toy_course.root, sandboxed=False)
    assert status == 0, "without Landlock a classmate's answer is within reach"


@needs_landlock
def test_the_reference_beside_the_submission_is_out_of_reach(toy_course):
    problem = toy_course.problem("toy")
    cheat = shutil.copy(FOLDER / "calls_the_reference.py", problem.stub_path)  # inside the course checkout
    result = Grader(toy_course, secret=SECRET, limits=Limits(timeout=30, settings=SHOWN)).grade_file(
        problem, cheat
    )
    # Its copy in the child's folder tells it nothing, and Landlock hides the grader's /proc entry (where it
    # works) and refuses the read where the course is found.
    assert result.status is Status.ERROR and "no reference solution within reach" in result.message
    # Without capabilities the grader's /proc entry is out of reach too (its capabilities are not the
    # child's): the old behaviour needs both protections off.
    unprotected = Settings(landlock=False, unprotected=frozenset({"no-privileges"}), hidden_output=True)
    switched_off = Grader(toy_course, secret=SECRET, limits=Limits(30, settings=unprotected))
    assert switched_off.grade_file(problem, cheat).status is Status.PASS, "the old behaviour, Landlock off"
    landlock_off = Grader(toy_course, secret=SECRET, limits=Limits(30, settings=Settings(landlock=False)))
    assert landlock_off.grade_file(problem, cheat).status is Status.ERROR, "no capability: no /proc"


def test_a_forged_sandbox_report_is_never_believed(toy_course):
    argv = ["toy", "--submission", str(HOSTILE / "forges_the_sandbox_report.py")]
    status, report, _ = _grade(argv, toy_course.root, sandboxed=False)
    (problem,) = report["problems"]
    assert status == 1 and problem["status"] == "error" and problem["fault"] == "learner"
    assert "protocol error" in problem["message"], (
        "the answer is right, but the forgery is the learner's error"
    )
    assert report["sandbox"]["filesystem"] is False and report["sandbox"]["landlock_abi"] == 0
    assert "GRADE_LANDLOCK=off" in report["sandbox"]["reason"]
    if ABI >= 1:  # asked to restrict itself, the child's own report comes first and is the one kept
        status, report, _ = _grade(argv, toy_course.root, sandboxed=True)
        assert status == 1 and report["sandbox"]["landlock_abi"] == ABI


class _Listener:
    """A TCP listener on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.socket.settimeout(0.2)
        self.port = self.socket.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(OSError):
                connection, _ = self.socket.accept()
                self.accepted += 1
                connection.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.socket.close()


@needs_network_rules
def test_no_tcp_connection_leaves_the_child(toy_course, tmp_path):
    listener = _Listener()
    try:
        hostile = tmp_path / "opens_a_tcp_connection.py"
        source = (HOSTILE / "opens_a_tcp_connection.py").read_text()
        hostile.write_text(source.replace("PORT = 9  #", f"PORT = {listener.port}  #"))
        argv = ["toy", "--submission", str(hostile)]

        for unprotected in (
            "",
            "socket-filter",
        ):  # Landlock's TCP rule holds alone, without the seccomp filter
            status, report, _ = _grade(argv, toy_course.root, True, unprotected=unprotected)
            (problem,) = report["problems"]
            assert status == 1 and problem["status"] == "error"
            assert "PermissionError" in problem["message"]
            assert listener.accepted == 0, "the listener saw a connection"

        status, report, _ = _grade(argv, toy_course.root, sandboxed=False, unprotected="socket-filter")
        assert status == 0 and listener.accepted >= 1, "without Landlock the connection is made"
    finally:
        listener.close()


def _escaped() -> list[int]:
    """The live processes left by escapes_with_setsid.py."""
    return live_processes_named(b"escaped-setsid")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="subreapers are a Linux feature")
def test_a_process_that_leaves_the_session_with_setsid_is_killed_with_the_run(toy_course, monkeypatch):
    grader = Grader(toy_course, secret=SECRET, limits=Limits(timeout=30))
    problem = toy_course.problem("toy")
    result = grader.grade_file(problem, FOLDER / "escapes_with_setsid.py")
    assert result.status is Status.PASS, result.message
    assert within(3, lambda: not _escaped()), "the process that left the session is still running"

    # The old behaviour: without the PID namespace and the subreaper, it escapes the session-wide kill.
    monkeypatch.setattr(processes_module, "become_subreaper", lambda: None)
    ctypes.CDLL(None).prctl(processes_module._PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
    unprotected = Settings(unprotected=frozenset({"process-namespace"}))
    grader = Grader(toy_course, secret=SECRET, limits=Limits(timeout=30, settings=unprotected))
    try:
        assert grader.grade_file(problem, FOLDER / "escapes_with_setsid.py").status is Status.PASS
        left = within(3, _escaped)
        assert left, "without a subreaper the process should have escaped: the test would prove nothing"
    finally:
        for pid in _escaped():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        ctypes.CDLL(None).prctl(processes_module._PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


_NICED_CHILD = """
import os
import sys
from pathlib import Path
from grader.running.processes import kill_group, start_child
child = start_child([sys.executable, "-c", "import time; time.sleep(30)"])
try:
    group = Path(f"/proc/{child.pid}/autogroup")
    seen = group.read_text().split()[-1] if group.is_file() else "none"
    print(os.getpriority(os.PRIO_PROCESS, 0), seen)
finally:
    kill_group(child)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="autogroup is a Linux feature")
def test_a_child_runs_at_the_nice_value_of_a_grader_run_with_nice():
    """A child leads a session of its own, and Linux's autogroup ranks sessions, not nice values: the child
    of `nice -n 7 grade ...` must run at the grader's nice value there too, or a niced check takes a full
    share of the CPU; a grader at nice 0 (or below) leaves its children's sessions at 0."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    runs = {}
    for increment in (7, 0):  # nice(1) rather than a preexec_fn: no fork of this process, where JAX runs
        argv = ["nice", "-n", str(increment), sys.executable, "-c", _NICED_CHILD]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        nice, group = done.stdout.split()
        runs[increment] = (int(nice), group)
    if runs[7][1] == "none":
        pytest.skip("this kernel has no autogroup: nice values rank every process alike already")
    (niced, niced_group), (plain, plain_group) = runs[7], runs[0]
    assert niced >= 7 and niced_group == str(niced), runs  # the grader's own nice value, whatever it is
    assert plain_group == str(max(plain, 0)), runs  # never a higher priority than the grader's


def test_a_function_passed_to_grade_function_never_observes_the_secret(toy_course, monkeypatch):
    seen: list[str | None] = []

    def scaled_sum(x, scale):
        seen.append(os.environ.get("GRADE_SECRET"))
        return (x.sum() * scale, x.max())

    monkeypatch.setenv("GRADE_SECRET", SECRET)
    with pytest.raises(UsageError, match="practice cases only"):
        grade_function("toy", scaled_sum)
    assert seen == [] and "GRADE_SECRET" not in os.environ, "refused before the function ran, secret gone"
    with pytest.raises(UsageError, match="practice cases only"):
        grade_function("toy", scaled_sum, secret=SECRET)
    assert seen == []

    result = grade_function("toy", scaled_sum)  # practice cases, with no secret anywhere
    assert seen and set(seen) == {None}
    assert result.sandbox is not None and "in this process" in result.sandbox.reason


def test_a_required_sandbox_that_is_switched_off_is_the_instructors_error(toy_course):
    env = {**os.environ, "GRADE_LANDLOCK": "off", "GRADE_SECRET": SECRET}
    env.pop("GRADE_SANDBOX", None)
    argv = [GRADE, "toy", "--submission", str(toy_course.root / "solutions" / "toy.py"), "--require-sandbox"]
    done = subprocess.run(argv, cwd=toy_course.root, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "GRADE_LANDLOCK=off" in done.stderr, done.stderr


def test_a_kernel_without_landlock_is_reported_not_fatal(monkeypatch):
    monkeypatch.setattr(landlock, "abi_version", lambda: (0, "this kernel has no Landlock"))
    held = landlock.restrict(read=["/usr"], read_write=["/tmp"], files=[])
    assert held == {
        "abi": 0,
        "filesystem": False,
        "network": False,
        "signals": False,
        "reason": "this kernel has no Landlock",
    }
