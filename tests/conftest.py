"""Shared fixtures: the real course at the repository root, and a toy course for engine tests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from grader.authoring.check import check_problems
from grader.course.problems import Course
from grader.settings import CACHE_ENV, Settings

ROOT = Path(__file__).resolve().parent.parent
COURSE = Course(ROOT)
PROBLEMS = COURSE.problems()
PROBLEM_IDS = [problem.id for problem in PROBLEMS]
TOY_ROOT = Path(__file__).resolve().parent / "toy_course"
TEST_SECRET = "tests-secret-value-3f9c"


def problem_params(select) -> list:
    """Returns pytest params over (problem, item) pairs, so that a new problem is covered at once."""
    return [
        pytest.param(problem, item, id=f"{problem.id}-{item}")
        for problem in PROBLEMS
        for item in select(problem)
    ]


# The README's test command runs the tests on two pytest-xdist workers (`-n 2`). Each module goes to one
# worker whole, so that its module fixtures are made once (as `--dist loadfile` would). Two sets of modules
# go to one worker together:
# - these four look for the processes that tests/submissions/ files leave (by name, machine-wide in /proc:
#   "left-behind", "escaped-setsid", the chain's marker), and test_hostile.py grades every one of those
#   files, so on two workers one module would see another's processes;
# - the two that read the session's check of the real course (the `checks` fixture), which each worker
#   would make again: `-m course` runs in one process (the check keeps both cores busy), and this keeps
#   `-m course -n 2` from checking the course twice.
# (A scheduler of our own: xdist's `xdist_group` marks name no group under pytest 9.2, whose nodes keep their
# ids elsewhere.)
WORKER_UNITS = {
    "test_hostile.py": "processes-left-behind",
    "test_sandbox.py": "processes-left-behind",
    "test_fail_closed.py": "processes-left-behind",
    "test_gpu_backend.py": "processes-left-behind",
    "test_problems.py": "the-course-check",
    "test_export.py": "the-course-check",
}


def worker_unit(nodeid: str) -> str:
    """What one xdist worker runs whole: the test's module, or the set of modules it shares a worker with."""
    module = nodeid.split("::", 1)[0]
    return WORKER_UNITS.get(module.rpartition("/")[2], module)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's, called only where it is installed
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ByModule(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_unit(nodeid)

    return ByModule(config, log)


SHARED_CACHE_ENV = "GRADE_TEST_CACHE_DIR"  # set by .ci/run for the course step and the export after it


@pytest.fixture(scope="session", autouse=True)
def cache_folder(tmp_path_factory) -> Path:
    """One fresh cache folder (compiled kernels, outputs of the course's files) for the whole test session:
    hermetic, and warm after first use. With $GRADE_TEST_CACHE_DIR set, that folder instead: `.ci/run` gives
    the course's checks a new one and then exports the course with it, so that the export reads the
    check's outputs and profiles instead of computing them all again in one child."""
    shared = os.environ.get(SHARED_CACHE_ENV)
    folder = Path(shared) if shared else tmp_path_factory.mktemp("jax-cache")
    folder.mkdir(parents=True, exist_ok=True)
    previous = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(folder)
    yield folder
    if previous is None:
        del os.environ[CACHE_ENV]
    else:
        os.environ[CACHE_ENV] = previous


@pytest.fixture(scope="session")
def settings(cache_folder) -> Settings:
    """The settings graders in this process are given: an empty environment's, with the session's cache."""
    return Settings(cache_root=cache_folder)


@pytest.fixture(scope="session")
def course() -> Course:
    return COURSE


@pytest.fixture(scope="session")
def checks(request, settings) -> dict:
    """`grade check` of every problem that a selected test of tests/test_problems.py needs (all of them in a
    full `-m course` run), once per session: its outputs of the course's files on the practice cases land in
    the session's output store (and its kernels in the course's compilation cache), where the other `course`
    tests (the real course's export) find them instead of computing them again."""
    wanted = {
        item.callspec.params["problem"].id
        for item in request.session.items
        if item.module.__name__ == "test_problems"  # every test there is parametrised over problems
    }
    problems = [problem for problem in PROBLEMS if problem.id in wanted]
    checked = {check.problem.id: check for check in check_problems(COURSE, problems, settings=settings)}
    for check in checked.values():
        print("\n" + check.render(families=True))
    return checked


@pytest.fixture
def toy_course(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Course:
    """A private copy of the toy course, as the working directory; returns it."""
    root = tmp_path / "course"
    shutil.copytree(TOY_ROOT, root, ignore=shutil.ignore_patterns(".grade", "__pycache__"))
    monkeypatch.chdir(root)
    monkeypatch.delenv("GRADE_SECRET", raising=False)
    monkeypatch.delenv("GRADE_COURSE_ROOT", raising=False)
    return Course(root)


@pytest.fixture
def write_submission(tmp_path: Path):
    """Writes a submission file from source text and returns its path."""
    folder = tmp_path / "submissions"
    folder.mkdir()

    def write(source: str, name: str = "submission.py") -> Path:
        path = folder / name
        path.write_text(source, encoding="utf-8")
        return path

    return write
