"""A problem's harness: course code that makes the calls of one case, in a fresh folder, and checks what
they wrote. The toy problem `toy_resume` (tests/harness_problem/) sums in two calls, the second resuming
from a file the first saved."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from grader import grade_function
from grader.authoring.discrimination import checking_limits, discrimination_table
from grader.course.problems import Course
from grader.grading.grader import Grader
from grader.results import Status

HARNESS_PROBLEM = Path(__file__).resolve().parent / "harness_problem"


@pytest.fixture
def course(toy_course: Course) -> Course:
    """The toy course with the harness problem added."""
    shutil.copytree(HARNESS_PROBLEM, toy_course.root, dirs_exist_ok=True)
    return toy_course


def _grade(course: Course, path: Path, secret: str | None = None):
    return Grader(course, secret=secret).grade_file(course.problem("toy_resume"), path)


@pytest.mark.parametrize("secret", [None, "harness-secret"])
def test_the_reference_passes_through_its_harness(course, secret):
    result = _grade(course, course.reference_path(course.problem("toy_resume")), secret)
    assert result.status is Status.PASS, result.message


def test_a_rejection_fails_the_case_with_the_harness_message_and_names_its_pitfall(course):
    result = _grade(course, course.solutions_dir / "pitfalls" / "toy_resume" / "never_saved.py")
    assert result.status is Status.FAIL
    assert "wrote no state.npy" in result.cases[0].message and result.cases[0].status is Status.FAIL
    assert result.pitfall is not None and result.pitfall.name == "never_saved"


def test_a_wrong_number_through_the_harness_is_named_from_the_outputs(course):
    result = _grade(course, course.solutions_dir / "pitfalls" / "toy_resume" / "restarts.py", "s")
    assert result.status is Status.FAIL and result.pitfall is not None and result.pitfall.name == "restarts"


def test_each_case_gets_a_fresh_empty_folder_that_is_removed_after_it(course, write_submission):
    source = """\
import os
from pathlib import Path

import numpy as np

SEEN = []


def running_sum(x, start, stop, folder):
    here = Path(folder)
    if start == 0:
        assert not any(here.iterdir()), "the folder is not empty"
        assert not [p for p in SEEN if Path(p).exists()], "an earlier case's folder is still there"
        SEEN.append(folder)
    path = here / "state.npy"
    total = np.float32(np.load(path)) if start else np.float32(0)
    out = []
    for value in x[start:stop]:
        total = np.float32(total + value)
        out.append(total)
    np.save(path, np.array(total))
    return np.array(out, dtype=np.float32)
"""
    result = _grade(course, write_submission(source), "three-cases")
    assert result.status is Status.PASS, [case.message for case in result.cases]


def test_learner_tracebacks_leave_out_the_harness_frames(course):
    stub = course.problem("toy_resume").directory / "stub.py"  # beside harness.py, like a learner's file
    stub.write_text(
        "def running_sum(x, start, stop, folder):\n    raise ValueError('resume failed')\n", encoding="utf-8"
    )
    result = _grade(course, stub)
    case = result.cases[0]
    assert result.status is Status.ERROR and "ValueError: resume failed" in case.message
    assert "stub.py" in case.traceback and "harness.py" not in case.traceback


def test_the_notebook_api_runs_the_harness_too(course):
    def running_sum(x, start, stop, folder):
        return np.cumsum(x[start:stop], dtype=np.float32)  # never saves, never resumes

    result = grade_function("toy_resume", running_sum, course_root=course.root)
    assert result.status is Status.FAIL and result.pitfall.name == "never_saved"


def test_the_discrimination_table_counts_a_rejection_as_caught(course, settings):
    problem = course.problem("toy_resume")
    table = discrimination_table(course, problem, ["d-1", "d-2"], checking_limits(settings))
    rows = {row.name: row for row in table.rows}
    assert rows["never_saved"].worst(table.cases) == float("inf")
    assert set(rows["never_saved"].rejected.values()) == {"never_saved"}
    assert rows["restarts"].worst(table.cases) > 10
