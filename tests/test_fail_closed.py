"""Fail closed: a hostile submission of every class the security review found cannot pass, cannot touch a
classmate's result and cannot take a batch down.

The submissions are in tests/submissions/ (each file's first line says the verdict `tests/test_hostile.py`
checks for it through the engine and the real `grade` command in hidden mode); the symbolic links, which a
learner makes in their checkout, are made here. Here they are graded as a class is: together in one
`grade batch` of hidden cases with honest classmates graded in the same batch and in a later one, and
through Gradescope's `run_autograder`. None passes, each gets a reason, the classmates pass, no process and
no private folder is left, the gradebook is complete. Then each is graded again with the protection it tests
switched off (GRADE_TEST_UNPROTECTED, the option the tests use), which shows the old behaviour: so every
assertion is seen to depend on what it tests.
"""

from __future__ import annotations

import csv
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from grader.course.cases import make_cases
from grader.course.problems import Course
from grader.settings import PROTECTIONS

HERE = Path(__file__).parent
SUBMISSIONS = HERE / "submissions"
GRADE = str(Path(sys.executable).with_name("grade"))
SECRET = "fail-closed-tests-secret"
TOKEN = "ghp_FAKE_TOKEN_ON_THE_GRADING_MACHINE_1234"
CHAIN_MARKER = b"grade-chain-marker"
ALL_OFF = ",".join(PROTECTIONS)

JAX_TOY = """\
import jax.numpy as jnp


def scaled_sum(x, scale):
    return jnp.stack([jnp.sum(x) * scale, jnp.max(x)])
"""
JAX_TOY_MAX = """\
import jax.numpy as jnp


def largest(x):
    return jnp.max(x, keepdims=True)
"""

# Learner folder -> (what its toy stub is, the reason its toy row must give). Every hostile learner's
# toy_max stub is correct, so that a learner's other problem is seen to be graded as usual.
HOSTILE = {
    "aaron-poisons-the-cache": ("poisons_the_compilation_cache.py", "outside the tolerance"),
    "deep-json": ("deep_json_on_the_channel.py", "protocol error"),
    "huge-seconds": ("huge_seconds_on_the_channel.py", "protocol error"),
    "forged-harness": ("forges_a_harness_failure.py", "protocol error"),
    "datagrams": ("sends_udp_and_unix_datagrams.py", "PermissionError"),
    "litter": ("fills_its_folder_with_files.py", "disk limit"),
    "hoarder": ("hoards_memory_outside_its_session.py", "out of memory"),
    "chain": ("chain_of_processes_after_setsid.py", "outside the tolerance"),
    "link-to-the-solution": ("-> ../../../../solutions/toy.py", "symbolic link"),
    "link-to-a-classmate": ("-> ../../../zoe/problems/toy/stub.py", "symbolic link"),
    "linked-folder": ("problems/toy -> ../../zoe/problems/toy", "symbolic link"),
    "long-link": ("-> " + "x" * 300, "symbolic link"),
    # the second review's: kernel objects that name no path, root's powers, a learner's own folders
    "zed-copies-answers-from-ipc": ("kernel/copies_answers_from_ipc.py", "LookupError"),
    "root-powers": ("kernel/uses_roots_powers.py", "outside the tolerance"),
    "yara-fills-its-kernel-cache": ("kernel/fills_its_kernel_cache.py", "disk limit"),
}
# An honest answer that leaves itself in SysV IPC and the keyring for zed, graded near the end of the batch.
ACCOMPLICE = ("abel-leaves-answers-in-ipc", "kernel/leaves_answers_in_ipc.py")
TARGET_PLACEHOLDER = "/nonexistent/grade-target-file"  # in uses_roots_powers.py: a file outside the folders
# Graded last in the batch, long after the poisoner: zara's answer uses jnp.max, the kernel it poisons; zoe's
# (numpy) is what the links point at.
HONEST = ("zara", "zoe")


def _chain() -> list[int]:
    """The live processes of chain_of_processes_after_setsid.py."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            state = entry.joinpath("stat").read_text().rpartition(")")[2].split()[0]
            if CHAIN_MARKER in entry.joinpath("cmdline").read_bytes() and state != "Z":
                found.append(int(entry.name))
        except (OSError, IndexError):
            continue
    return found


def _kill_the_chain() -> None:
    for pid in _chain():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue


def _learner(roster: Path, name: str, toy: str, toy_max: str) -> None:
    """A learner's checkout; a `toy` of "-> TARGET" makes the stub a link, "problems/toy -> TARGET" the
    problem's folder."""
    folder = roster / name / "problems"
    (folder / "toy_max").mkdir(parents=True)
    (folder / "toy_max" / "stub.py").write_text(toy_max)
    if toy.startswith("problems/toy -> "):
        (folder / "toy").symlink_to(toy.removeprefix("problems/toy -> "))
        return
    (folder / "toy").mkdir()
    if toy.startswith("-> "):
        (folder / "toy" / "stub.py").symlink_to(toy.removeprefix("-> "))
    else:
        (folder / "toy" / "stub.py").write_text(toy)


def _datagram_listeners(tmp: Path) -> tuple[socket.socket, socket.socket]:
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    unix.bind(str(tmp / "listener.sock"))
    for listener in (udp, unix):
        listener.setblocking(False)
    return udp, unix


def _received(listener: socket.socket) -> list[bytes]:
    found = []
    while True:
        try:
            found.append(listener.recv(1000))
        except BlockingIOError:
            return found


def _datagrams_source(udp: socket.socket, tmp: Path) -> str:
    source = (SUBMISSIONS / "sends_udp_and_unix_datagrams.py").read_text()
    source = source.replace("PORT = 9  #", f"PORT = {udp.getsockname()[1]}  #")
    return source.replace('"/nonexistent/grade-test.sock"', repr(str(tmp / "listener.sock")))


class Classroom:
    """A course with a roster of hostile learners and a roster of honest classmates, graded in hidden mode
    with one compilation cache and one temporary folder for every grader process and child."""

    def __init__(self, course: Path, tmp: Path, unprotected: str) -> None:
        self.course = course
        self.tmp = tmp
        self.temporary = tmp / "temporary"
        self.temporary.mkdir()
        (self.course / "ci-token").write_text(TOKEN)  # a file the grader's user can read
        self.env = {
            **{key: value for key, value in os.environ.items() if not key.startswith("GRADE")},
            "GRADE_SECRET": SECRET,
            "GRADE_CACHE_DIR": str(tmp / "cache"),
            "GRADE_TEST_UNPROTECTED": unprotected,
            "TMPDIR": str(self.temporary),
        }
        self.udp, self.unix = _datagram_listeners(tmp)
        solutions = self.course / "solutions"
        self.hostile = self.course / "roster"  # inside the course, as the documented CI layout has it
        self.target = tmp / "grader-owned-file"  # outside every child's folders
        self.target.write_text("the grader's")
        self.target.chmod(0o644)
        for name, (toy, _) in [*HOSTILE.items(), (ACCOMPLICE[0], (ACCOMPLICE[1], ""))]:
            if toy == "sends_udp_and_unix_datagrams.py":
                toy = _datagrams_source(self.udp, tmp)
            elif toy.endswith(".py") and not toy.startswith("->"):
                toy = (SUBMISSIONS / toy).read_text().replace(TARGET_PLACEHOLDER, str(self.target))
            _learner(self.hostile, name, toy, (solutions / "toy_max.py").read_text())
        (self.hostile / "token" / "problems" / "toy").mkdir(parents=True)
        (self.hostile / "token" / "problems" / "toy" / "stub.py").write_text(JAX_TOY)
        (self.hostile / "token" / "problems" / "toy_max").mkdir()
        (self.hostile / "token" / "problems" / "toy_max" / "stub.py").symlink_to("../../../../ci-token")
        self.honest = tmp / "later-batch"
        for roster in (self.hostile, self.honest):
            _learner(roster, "zara", JAX_TOY, JAX_TOY_MAX)
            _learner(
                roster, "zoe", (solutions / "toy.py").read_text(), (solutions / "toy_max.py").read_text()
            )

    def batch(self, roster: Path, out: str) -> tuple[subprocess.CompletedProcess, list[dict[str, str]]]:
        gradebook = self.tmp / out
        argv = [GRADE, "batch", str(roster), "--out", str(gradebook), "--jobs", "2", "--timeout", "10"]
        argv += ["--memory-limit", "1500M"]  # what hoards_memory_outside_its_session.py exceeds
        done = subprocess.run(
            argv, cwd=self.course, env=self.env, capture_output=True, text=True, timeout=900
        )
        with gradebook.open(newline="") as handle:
            return done, list(csv.DictReader(handle))

    def datagrams(self) -> list[bytes]:
        return _received(self.udp) + _received(self.unix)

    def close(self) -> None:
        _kill_the_chain()
        _remove_answers_left()
        self.udp.close()
        self.unix.close()


def _answer_keys() -> set[int]:
    """The SysV keys leaves_answers_in_ipc.py uses: a hash of each toy case's inputs, hidden and practice."""
    problem = Course(HERE / "toy_course").problem("toy")
    cases = make_cases(problem, SECRET) + make_cases(problem)
    return {
        zlib.crc32(np.asarray(c.inputs["x"], np.float32).tobytes() + np.float32(c.inputs["scale"]).tobytes())
        & 0x7FFFFFFF
        for c in cases
    }


def _answers_left() -> list[str]:
    """What leaves_answers_in_ipc.py left behind: SysV segments and queues, keys in the user's keyring."""
    left, keys = [], _answer_keys()
    for table in ("shm", "msg"):
        try:
            lines = Path(f"/proc/sysvipc/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        found = [int(line.split()[0]) for line in lines if line.split()]
        left += [f"{table} {key}" for key in found if key in keys]
    try:
        keys = Path("/proc/keys").read_text().splitlines()
    except OSError:
        keys = []
    return left + [line for line in keys if "grade-answer-" in line]


def _remove_answers_left() -> None:
    """Removes what the unprotected batch left (as the grader's user): segments, queues, keyring keys."""
    libc = ctypes.CDLL(None, use_errno=True)
    for entry in _answers_left():
        kind, _, rest = entry.partition(" ")
        if kind == "shm":
            libc.shmctl(libc.shmget(int(rest), 0, 0), 0, None)  # IPC_RMID
        elif kind == "msg":
            libc.msgctl(libc.msgget(int(rest), 0), 0, None)
        else:
            keyctl = {"x86_64": 250, "aarch64": 219}[os.uname().machine]
            libc.syscall(ctypes.c_long(keyctl), 21, int(entry.split()[0], 16), 0, 0)  # KEYCTL_INVALIDATE


def _rows(rows: list[dict[str, str]]) -> dict[tuple[str, str], dict[str, str]]:
    return {(row["learner"], row["problem"]): row for row in rows}


def _graded_class(tmp: Path, unprotected: str):
    """The hostile batch, the processes it left, and the later honest batch, in a fresh copy of the course."""
    course = tmp / "course"
    shutil.copytree(HERE / "toy_course", course)
    room = Classroom(course, tmp, unprotected)
    try:
        hostile = room.batch(room.hostile, "hostile.csv")
        chain_left = _chain()
        later = room.batch(room.honest, "later.csv")
        yield room, hostile, later, chain_left
    finally:
        room.close()


@pytest.fixture(scope="module")
def protected(tmp_path_factory):
    """The two batches graded as by default."""
    yield from _graded_class(tmp_path_factory.mktemp("protected"), unprotected="")


@pytest.fixture(scope="module")
def unprotected(tmp_path_factory):
    """The same two batches with every protection switched off: the old behaviour."""
    yield from _graded_class(tmp_path_factory.mktemp("unprotected"), unprotected=ALL_OFF)


def test_no_hostile_learner_passes_and_each_row_says_why(protected):
    _, (done, rows), _, _ = protected
    assert done.returncode == 0, done.stderr
    graded = _rows(rows)
    learners = [*HOSTILE, "token", ACCOMPLICE[0], *HONEST]
    assert len(rows) == 2 * len(learners) and {learner for learner, _ in graded} == set(learners)
    for name, (_, reason) in HOSTILE.items():
        row = graded[(name, "toy")]
        assert row["status"] in ("fail", "error"), (name, row)
        assert reason in row["message"], (name, row["message"])
    for name in HOSTILE:  # the learner's other problem is graded as usual
        if name not in ("long-link",):
            assert graded[(name, "toy_max")]["status"] == "pass", (name, graded[(name, "toy_max")])
    token = graded[("token", "toy_max")]
    assert token["status"] == "error" and "symbolic link" in token["message"]
    assert TOKEN not in json.dumps(rows), "the file the link points to was never read"


def test_classmates_graded_beside_and_after_the_hostile_learners_are_unharmed(protected):
    _, (_, rows), (later_done, later), _ = protected
    graded = _rows(rows)
    for name in (*HONEST, ACCOMPLICE[0]):
        assert graded[(name, "toy")]["status"] == "pass", graded[(name, "toy")]
        assert graded[(name, "toy_max")]["status"] == "pass"
    assert later_done.returncode == 0, later_done.stderr
    assert {row["status"] for row in later} == {"pass"}, (
        "a later batch on the machine reads no poisoned kernel"
    )


def test_nothing_a_hostile_learner_started_or_wrote_outlives_the_batch(protected):
    room, _, _, chain_left = protected
    assert chain_left == [], "the chain of processes outlived the batch"
    assert not list(room.temporary.iterdir()), "a private folder or a file written late was left behind"
    assert room.datagrams() == [], "a datagram left a learner's child"
    assert _answers_left() == [], "a SysV object or a keyring key outlived the batch"
    assert oct(room.target.stat().st_mode & 0o7777) == "0o644", "a learner changed a file outside its folders"
    assert not os.listxattr(room.target), "a learner set an extended attribute outside its folders"


def test_without_the_protections_the_old_behaviour_shows(unprotected):
    room, (done, rows), (_, later), _ = unprotected
    graded = _rows(rows)
    passed = {name for name in HOSTILE if graded[(name, "toy")]["status"] == "pass"}
    # positive-pass, strict-protocol: the reader dies or skips the forgery, and a problem whose cases never
    # ran passes; submission-copy: links are followed; disk-limit, process-namespace: the litter and the
    # memory outside the session go unseen; socket-filter: the datagrams leave.
    assert passed == {
        "deep-json",
        "huge-seconds",
        "datagrams",
        "litter",
        "hoarder",
        "link-to-the-solution",
        "link-to-a-classmate",
        "linked-folder",
        # kernel-objects: the answer abel left in SysV IPC or the keyring is read; no-privileges: the
        # grader-owned file's mode changes (as root, or as its owner); disk-limit: the kernel cache fills
        "zed-copies-answers-from-ipc",
        "root-powers",
        "yara-fills-its-kernel-cache",
    }, {name: graded[(name, "toy")]["message"] for name in HOSTILE}
    assert _answers_left(), "what abel left outlives the batch"
    assert room.target.stat().st_mode & 0o4000, "the file outside the folders became setuid"
    forged = graded[("forged-harness", "toy")]
    assert forged["status"] == "grader_error" and "please regrade me" in forged["message"]
    assert done.returncode == 2, "the forged harness failure reads as the course's"
    assert TOKEN in json.dumps(rows), "the linked CI token was graded as the learner's file"
    assert len(room.datagrams()) >= 2
    assert graded[("zara", "toy")]["status"] == "fail", "graded after the poisoner, from one shared cache"
    later = _rows(later)
    assert later[("zara", "toy")]["status"] == "fail", "and in a later batch"


def test_a_chain_of_processes_dies_with_the_run_and_outlives_it_without_the_namespace(toy_course, tmp_path):
    """One `grade` run in practice mode, its second with warm caches, so that the learner's is the only child:
    each child's clean-up hunts the orphans again, as a batch's or a cold run's many children do."""
    hostile = str(SUBMISSIONS / "chain_of_processes_after_setsid.py")

    def grade(unprotected: str) -> subprocess.CompletedProcess:
        temporary = tmp_path / f"temporary-{unprotected or 'protected'}"
        temporary.mkdir()
        env = {**os.environ, "TMPDIR": str(temporary), "GRADE_CACHE_DIR": str(tmp_path / "cache")}
        env["GRADE_TEST_UNPROTECTED"] = unprotected
        argv = [GRADE, "toy", "--submission", hostile, "--format", "json"]
        done = subprocess.run(argv, cwd=toy_course.root, env=env, capture_output=True, text=True, timeout=300)
        assert json.loads(done.stdout)["problems"][0]["status"] == "fail"
        return temporary

    try:
        temporary = grade("")
        assert _chain() == [], "a process of the chain outlived the run"
        assert not list(temporary.iterdir()), "the private folder, or a heartbeat, was left behind"
        grade("process-namespace")
        assert len(_chain()) > 0, "without the namespace, a hunt of 50 rounds leaves the chain's tail"
    finally:
        _kill_the_chain()


AUTOGRADER_CASES = {
    # upload: file name -> a file of tests/submissions, or "-> TARGET" for a link; toy's status and reason
    "link": ({"toy.py": "-> {source}/solutions/toy.py"}, "symbolic link"),
    "deep json": ({"toy.py": "deep_json_on_the_channel.py"}, "protocol error"),
    "forged harness": ({"toy.py": "forges_a_harness_failure.py"}, "protocol error"),
}


@pytest.mark.parametrize("case", AUTOGRADER_CASES, ids=lambda case: case.replace(" ", "-"))
def test_gradescope_grades_a_hostile_upload_as_the_learners_error(toy_course, tmp_path, case):
    upload, reason = AUTOGRADER_CASES[case]
    tree = tmp_path / "autograder"
    shutil.copytree(toy_course.root, tree / "source")
    (tree / "source" / "grade_secret").write_text(SECRET)
    (tree / "submission").mkdir()
    for name, content in upload.items():
        target = tree / "submission" / name
        if content.startswith("-> "):
            target.symlink_to(content.removeprefix("-> ").format(source=tree / "source"))
        else:
            shutil.copy(SUBMISSIONS / content, target)
    shutil.copy(tree / "source" / "solutions" / "toy_max.py", tree / "submission" / "toy_max.py")

    def run(unprotected: str) -> dict:
        env = {key: value for key, value in os.environ.items() if not key.startswith("GRADE")}
        env |= {"AUTOGRADER_ROOT": str(tree), "GRADE_PYTHON": sys.executable, "GRADE_TIMEOUT": "10"}
        env |= {"GRADE_TEST_UNPROTECTED": unprotected, "GRADE_CACHE_DIR": str(tmp_path / "cache")}
        done = subprocess.run(
            ["bash", str(HERE.parent / "ci" / "gradescope" / "run_autograder")],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        results = json.loads((tree / "results" / "results.json").read_text())
        return {test["name"].split(":")[0]: test for test in results["tests"]} | {"": results}

    tests = run("")
    assert tests["toy"]["status"] == "failed" and tests["toy"]["score"] == 0
    assert reason in tests["toy"]["output"], tests["toy"]["output"]
    assert tests["toy_max"]["status"] == "passed", "the learner's other problem is graded as usual"
    old = run(ALL_OFF)
    if case == "forged harness":  # the learner's error read as the course's: the autograder gives up
        assert "could not grade" in old[""]["output"]
    else:
        assert old["toy"]["status"] == "passed", f"without the protections the {case} upload passes"


def test_the_protections_switched_off_are_in_every_report(toy_course, tmp_path):
    env = {**os.environ, "GRADE_TEST_UNPROTECTED": "socket-filter", "GRADE_SECRET": SECRET}
    argv = [GRADE, "toy", "--submission", str(toy_course.root / "solutions" / "toy.py"), "--format", "json"]
    done = subprocess.run(argv, cwd=toy_course.root, env=env, capture_output=True, text=True, timeout=300)
    report = json.loads(done.stdout)
    assert report["sandbox"]["unprotected"] == ["socket-filter"]
    assert "TESTING ONLY, switched off: socket-filter" in report["sandbox"]["summary"]
    wrong = {**env, "GRADE_TEST_UNPROTECTED": "everything"}
    done = subprocess.run(argv, cwd=toy_course.root, env=wrong, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "the protections are" in done.stderr


def test_a_pass_needs_every_case_to_come_back(toy_course):
    """The one place that decides a pass (grader/grading/verdicts.py), for each way of not finishing."""
    from grader.course.cases import make_cases
    from grader.grading.verdicts import case_result, summarise
    from grader.protocol.payloads import Returned
    from grader.results import Status
    from grader.running.limits import Limits
    from grader.running.outcomes import CaseOutcome, LoadFailure, RunOutcome
    from grader.settings import Settings

    problem = toy_course.problem("toy")
    cases = make_cases(problem)
    expected = {
        case.index: (case.inputs["x"].sum() * case.inputs["scale"], case.inputs["x"].max()) for case in cases
    }
    limits, old = Limits(), Limits(settings=Settings(unprotected=frozenset({"positive-pass"})))

    def verdict(outcome: RunOutcome, limits: Limits = limits) -> tuple[Status, str, str]:
        import numpy as np

        arrays = {index: np.array(value, np.float64) for index, value in expected.items()}
        results = [case_result(c, outcome, arrays.get(c.index), problem, False, limits) for c in cases]
        return summarise(cases, results, outcome, limits)

    def answered(*indices: int) -> dict[int, CaseOutcome]:
        import numpy as np

        return {
            index: CaseOutcome(index, 0.1, Returned.from_array(np.array(expected[index], np.float64)))
            for index in indices
        }

    every = [case.index for case in cases]
    assert verdict(RunOutcome("toy", cases=answered(*every)))[0] is Status.PASS, "the test can pass"
    ways = {
        "nothing came back": RunOutcome("toy"),
        "the last case is missing": RunOutcome("toy", cases=answered(*every[:-1])),
        "the reader failed": RunOutcome("toy", cases=answered(*every), grader_failure="RecursionError: deep"),
        "a protocol error": RunOutcome("toy", cases=answered(*every), protocol_error="protocol error: x"),
        "a harness failure": RunOutcome("toy", load_failure=LoadFailure("harness", "harness: broken")),
        "the sandbox did not hold": RunOutcome("toy", load_failure=LoadFailure("sandbox", "required")),
        "a crash while loading": RunOutcome("toy", load_failure=LoadFailure("crash", "crashed")),
        "stopped in a case": RunOutcome(
            "toy", cases=answered(every[0]), stopped="timed out", stopped_in_case=every[1]
        ),
    }
    faults = {}
    for way, outcome in ways.items():
        status, message, fault = verdict(outcome)
        assert status is Status.ERROR and message, way
        faults[way] = fault
    assert faults == {
        "nothing came back": "grader",
        "the last case is missing": "grader",
        "the reader failed": "grader",
        "a protocol error": "learner",
        "a harness failure": "grader",
        "the sandbox did not hold": "grader",
        "a crash while loading": "learner",
        "stopped in a case": "learner",
    }
    # The old rule counted a case that never ran as nothing wrong.
    assert verdict(ways["nothing came back"], old)[0] is Status.PASS
    assert verdict(ways["the last case is missing"], old)[0] is Status.PASS


@pytest.mark.parametrize("broken", ["mkdtemp", "start_child"])
def test_a_run_the_grader_cannot_make_is_the_graders_error_never_a_pass(toy_course, monkeypatch, broken):
    """A full disk (no private folder) or a child that cannot be started: the collecting thread fails before
    any case, which once left a problem with no case results, and so a pass."""
    import errno

    from grader.grading.grader import Grader
    from grader.results import Status
    from grader.running import isolation
    from grader.running.limits import Limits
    from grader.settings import Settings

    def fails(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    target = isolation.tempfile if broken == "mkdtemp" else isolation
    monkeypatch.setattr(target, broken, fails)
    problem = toy_course.problem("toy")
    wrong = toy_course.root / "solutions" / "pitfalls" / "toy" / "forgot_scale.py"
    result = Grader(toy_course, secret=SECRET, limits=Limits(timeout=10)).grade_file(problem, wrong)
    assert result.status is Status.ERROR and result.fault == "grader"
    assert "the grader failed, not your code" in result.message and "No space left" in result.message
    old = Limits(timeout=10, settings=Settings(unprotected=frozenset({"positive-pass"})))
    assert Grader(toy_course, secret=SECRET, limits=old).grade_file(problem, wrong).status is Status.PASS


def test_a_learner_who_fills_their_own_cache_is_not_blamed_and_their_next_file_passes(toy_course, tmp_path):
    """The second review's third attack, graded twice in hidden mode from one checkout: 20,100 files in the
    learner's own kernel cache stop that run at the disk limit (the learner's error); the correct file the
    learner hands in next passes, since the cache is pruned by entries and a run counts only what it makes.
    With GRADE_TEST_UNPROTECTED=own-folders, the old behaviour: the next file stops before it is ready, and
    the grader is blamed (exit 2) for as long as the files stay."""
    litter = (SUBMISSIONS / "kernel" / "fills_its_kernel_cache.py").read_text()
    correct = (toy_course.root / "solutions" / "toy.py").read_text()

    def grade(checkout: Path, source: str, unprotected: str) -> tuple[int, dict]:
        (checkout / "problems" / "toy").mkdir(parents=True, exist_ok=True)
        (checkout / "problems" / "toy" / "stub.py").write_text(source)
        env = {key: value for key, value in os.environ.items() if not key.startswith("GRADE")}
        env |= {"GRADE_SECRET": SECRET, "GRADE_CACHE_DIR": str(tmp_path / "cache")}
        env["GRADE_TEST_UNPROTECTED"] = unprotected
        argv = [GRADE, "toy", "--root", str(checkout), "--format", "json", "--timeout", "20"]
        done = subprocess.run(argv, cwd=toy_course.root, env=env, capture_output=True, text=True, timeout=300)
        return done.returncode, json.loads(done.stdout)["problems"][0]

    for unprotected in ("", "own-folders"):
        checkout = tmp_path / f"learner-{unprotected or 'protected'}"
        status, first = grade(checkout, litter, unprotected)
        assert status == 1 and first["status"] == "error" and "disk limit" in first["message"], first
        status, second = grade(checkout, correct, unprotected)
        if unprotected:
            assert status == 2 and "the grader failed" in second["message"], second
        else:
            assert status == 0 and second["status"] == "pass", second
