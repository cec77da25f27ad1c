"""What a hidden report shows (docs/security.md, "What a hidden report shows"): nothing learner code said. A
submission can read the hidden inputs (its process holds them) and put them in an exception's message, a
print, the name of an exception class or a function it makes, or what it writes for a harness to quote; a
report in hidden mode, in every format, shows none of it, the same file in practice mode shows it all, and a
course that asks for it (GRADE_HIDDEN_SHOWS_OUTPUT=1) gets the old report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.course.cases import make_cases

GRADE = str(Path(sys.executable).with_name("grade"))
SECRET = "hidden-text-tests-secret"

# Each says the first input of the case it is called on (as LEAK and six digits), in one way a learner
# controls.
SAYS_THE_INPUTS = {
    "message": """
def scaled_sum(x, scale):
    raise RuntimeError(f"LEAK{int(abs(float(x[0])) * 1e6)}")
""",
    "print": """
import numpy as np


def scaled_sum(x, scale):
    print(f"LEAK{int(abs(float(x[0])) * 1e6)}")
    return np.zeros(2, dtype=np.float32)
""",
    "exception_type": """
def scaled_sum(x, scale):
    raise type(f"LEAK{int(abs(float(x[0])) * 1e6)}", (Exception,), {})()
""",
    "function_names": """
import gc


def _inputs():  # the first case of the first job, from the request the child holds
    for thing in gc.get_objects():
        if isinstance(thing, dict) and "jobs" in thing and "block_imports" in thing:
            return thing["jobs"][0]["cases"][0][1]


globals()[f"scaled_sumLEAK{int(abs(float(_inputs()['x'][0])) * 1e6)}"] = print
""",
}


def _said(case_inputs: list[dict]) -> list[str]:
    """What the submissions say of each case."""
    return [f"LEAK{int(abs(float(inputs['x'][0])) * 1e6)}" for inputs in case_inputs]


def _report(toy_course, submission: Path, secret: str | None, shows: bool, formats=()) -> str:
    """The JSON report on stdout, and each of `formats` from its file, as one text."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GRADE")}
    env |= {"GRADE_SECRET": secret} if secret else {}
    env |= {"GRADE_HIDDEN_SHOWS_OUTPUT": "1"} if shows else {}
    files = [submission.with_name(f"{submission.stem}-report.{fmt}") for fmt in formats]
    argv = [GRADE, "toy", "--submission", str(submission), "--format", "json"]
    argv += [word for fmt, file in zip(formats, files, strict=True) for word in ("--format", f"{fmt}={file}")]
    done = subprocess.run(argv, cwd=toy_course.root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    return "\n".join([done.stdout, done.stderr, *(file.read_text() for file in files)])


@pytest.mark.parametrize("way", SAYS_THE_INPUTS)
def test_a_hidden_report_shows_nothing_the_submission_said_and_practice_mode_does(toy_course, tmp_path, way):
    submission = tmp_path / f"{way}.py"
    submission.write_text(SAYS_THE_INPUTS[way])
    problem = toy_course.problem("toy")
    hidden = _said([case.inputs for case in make_cases(problem, SECRET)])
    report = _report(toy_course, submission, SECRET, shows=False, formats=("text", "github", "gradescope"))
    assert not [text for text in hidden if text in report], report
    practice = _said([case.inputs for case in make_cases(problem)])
    assert any(text in _report(toy_course, submission, None, shows=False) for text in practice)
    shown = _report(toy_course, submission, SECRET, shows=True)
    assert any(text in shown for text in hidden), "GRADE_HIDDEN_SHOWS_OUTPUT=1: the old report"


def test_a_hidden_report_keeps_the_type_file_and_line(toy_course, tmp_path):
    submission = tmp_path / "raises.py"
    submission.write_text(SAYS_THE_INPUTS["message"])
    env = {key: value for key, value in os.environ.items() if not key.startswith("GRADE")}
    argv = [GRADE, "toy", "--submission", str(submission), "--format", "json"]
    env["GRADE_SECRET"] = SECRET
    done = subprocess.run(argv, cwd=toy_course.root, env=env, capture_output=True, text=True, timeout=300)
    (problem,) = json.loads(done.stdout)["problems"]
    case = problem["cases"][0]
    assert case["message"] == "raised RuntimeError: its message is not shown in hidden mode"
    assert f'File "{submission}", line 3, in scaled_sum' in case["traceback"], case
