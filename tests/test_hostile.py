"""Every broken or hostile submission in tests/submissions gets the verdict and reason its docstring
expects, through the engine and through the real `grade` command, in hidden mode."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.grading import Grader
from grader.isolation import Limits
from grader.report.plain_text import render_problem
from grader.results import Status

FOLDER = Path(__file__).parent / "submissions"
SECRET = "hostile-tests-secret"  # reads_the_secret.py returns NaN if it can see this anywhere
TIMEOUT = 2


def expectation(path: Path) -> tuple[Status, str]:
    """Returns the (status, reason phrase) that the file's docstring promises."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    status, reason = docstring.splitlines()[0].removeprefix("Expect: ").split(": ", 1)
    return Status(status), reason


SUBMISSIONS = sorted(FOLDER.glob("*.py"))


@pytest.mark.parametrize("path", [p for p in SUBMISSIONS if p.name != "verdicts.py"], ids=lambda p: p.stem)
def test_engine_verdict_and_reason(toy_course, path):
    status, reason = expectation(path)
    grader = Grader(toy_course, secret=SECRET, limits=Limits(timeout=TIMEOUT))
    start = time.monotonic()
    result = grader.grade_file(toy_course.problem("toy"), path)
    elapsed = time.monotonic() - start
    assert result.status is status, result.message
    assert reason in render_problem(result, grader.mode), result.message
    assert elapsed < 60, f"the verdict took {elapsed:.0f} s"
    if status is not Status.PASS:
        assert result.message, "a failure always says why in one line"


@pytest.mark.parametrize("path", [p for p in SUBMISSIONS if p.name != "verdicts.py"], ids=lambda p: p.stem)
def test_cli_verdict_reason_and_exit_status(toy_course, path):
    status, reason = expectation(path)
    script = Path(sys.executable).with_name("grade")
    env = {**os.environ, "GRADE_SECRET": SECRET}
    argv = [str(script), "toy", "--submission", str(path), "--format", "json", "--timeout", str(TIMEOUT)]
    done = subprocess.run(argv, cwd=toy_course.root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == (0 if status is Status.PASS else 1), done.stderr
    (problem,) = json.loads(done.stdout)["problems"]
    assert problem["status"] == status
    assert reason in done.stdout


def test_timeout_reports_the_rest_as_not_run_and_returns_promptly(toy_course):
    grader = Grader(toy_course, limits=Limits(timeout=TIMEOUT))
    start = time.monotonic()
    result = grader.grade_file(toy_course.problem("toy"), FOLDER / "endless_loop.py")
    assert time.monotonic() - start < TIMEOUT + 15
    assert result.cases[0].status is Status.ERROR
    assert all(case.status is Status.NOT_RUN for case in result.cases[1:])
    assert all("not run" in case.message for case in result.cases[1:])
