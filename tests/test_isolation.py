"""Learner code runs in a child process: broken and hostile submissions get a clear verdict and reason."""

from __future__ import annotations

import pytest

from grader.cases import make_cases
from grader.grading import Grader
from grader.isolation import Limits, compilation_cache, run_isolated
from grader.results import Status


@pytest.fixture
def grade(toy_course):
    grader = Grader(toy_course, limits=Limits(timeout=20, start_timeout=60))
    problem = toy_course.problem("toy")
    return lambda path: grader.grade_file(problem, path)


def test_syntax_error_is_reported_with_file_and_line(grade, write_submission):
    result = grade(write_submission("def scaled_sum(x, scale):\n    return x +\n", "broken.py"))
    assert result.status is Status.ERROR
    assert "SyntaxError" in result.message and "broken.py, line 2" in result.message
    assert all(case.status is Status.NOT_RUN for case in result.cases)


def test_import_error_names_the_missing_module(grade, write_submission):
    result = grade(write_submission("import no_such_module_xyz\n"))
    assert result.status is Status.ERROR and "no_such_module_xyz" in result.message
    assert "line 1" in result.detail


def test_misspelt_function_names_the_expected_signature_and_suggests(grade, write_submission):
    result = grade(write_submission("def scaled_summ(x, scale):\n    return x\n"))
    assert result.status is Status.ERROR
    assert "scaled_sum(x, scale)" in result.message and "did you mean 'scaled_summ'" in result.message


def test_wrong_signature_says_what_the_statement_expects(grade, write_submission):
    result = grade(write_submission("def scaled_sum(x):\n    return x\n"))
    assert result.status is Status.ERROR and "cannot be called as scaled_sum(x, scale)" in result.message


def test_exception_traceback_is_trimmed_to_the_learners_frames(grade, write_submission):
    source = """\
import numpy as np


def helper(x):
    return np.linalg.inv(x)


def scaled_sum(x, scale):
    return helper(x)
"""
    result = grade(write_submission(source, "mine.py"))
    assert result.status is Status.ERROR
    trace = result.cases[0].traceback
    assert "mine.py" in trace and "in helper" in trace and "LinAlgError" in trace
    assert "numpy/linalg" not in trace, "library frames are cut"


@pytest.mark.parametrize(
    ("body", "phrase"),
    [
        ("return [float(x.sum() * scale), float(x.max())]", "list"),
        ("return float(x.sum())", "float"),
        ("return 'done'", "str"),
        ("return np.zeros((2, 1), np.float32)", "shape (2, 1)"),
        ("return np.zeros(3, np.float32)", "shape (3,)"),
        ("return np.array([1, 2])", "dtype int64"),
        ("return np.full(2, np.nan, np.float32)", "nan"),
        ("return np.full(2, np.inf, np.float32)", "inf"),
    ],
    ids=["list", "scalar", "string", "2-d", "wrong-length", "integers", "nan", "inf"],
)
def test_returned_values_of_the_wrong_kind_fail_with_a_reason(grade, write_submission, body, phrase):
    result = grade(write_submission(f"import numpy as np\n\ndef scaled_sum(x, scale):\n    {body}\n"))
    assert result.status is Status.FAIL
    assert phrase in result.cases[0].message


def test_sys_exit_at_import_is_an_error_not_a_pass(grade, write_submission):
    result = grade(write_submission("import sys\nsys.exit(0)\n"))
    assert result.status is Status.ERROR and "sys.exit(0)" in result.message


def test_os_exit_in_a_case_is_reported_and_later_cases_not_run(grade, write_submission):
    result = grade(write_submission("import os\n\ndef scaled_sum(x, scale):\n    os._exit(0)\n"))
    assert result.status is Status.ERROR
    assert "exited with status 0" in result.cases[0].message
    assert all(case.status is Status.NOT_RUN for case in result.cases[1:])


def test_fake_pass_printed_on_stdout_is_ignored_and_shown_as_output(grade, write_submission):
    source = "def scaled_sum(x, scale):\n    print('PASS all cases within the tolerance')\n    return None\n"
    result = grade(write_submission(source))
    assert result.status is Status.FAIL and "PASS all cases" in result.stdout


def test_endless_loop_times_out_and_the_rest_is_not_run(toy_course, write_submission):
    grader = Grader(toy_course, limits=Limits(timeout=2, start_timeout=60))
    path = write_submission("def scaled_sum(x, scale):\n    while True:\n        pass\n")
    result = grader.grade_file(toy_course.problem("toy"), path)
    assert result.status is Status.ERROR and "timed out after 2 s" in result.cases[0].message
    assert [c.status for c in result.cases[1:]] == [Status.NOT_RUN] * (len(result.cases) - 1)


def test_learner_code_cannot_import_the_solutions_or_the_grader(toy_course, write_submission):
    problem = toy_course.problem("toy")
    cases = make_cases(problem)
    for module in ("solutions.toy", "grader.trusted"):
        path = write_submission(f"import {module}\n", f"imports_{module.split('.')[0]}.py")
        (outcome,) = run_isolated([("learner", path)], problem, cases).values()
        assert outcome.load_failure and "may not import" in outcome.load_failure.message


def test_the_secret_is_not_in_the_learners_environment(toy_course, write_submission, monkeypatch):
    monkeypatch.setenv("GRADE_SECRET", "very-secret-value")
    source = (
        "import os\nimport numpy as np\n\n"
        "def scaled_sum(x, scale):\n"
        "    leaked = any('very-secret-value' in v for v in os.environ.values())\n"
        "    value = np.nan if leaked else x.sum() * scale\n"
        "    return np.array([value, x.max()], dtype=np.float32)\n"
    )
    grader = Grader(toy_course, secret="very-secret-value")
    result = grader.grade_file(toy_course.problem("toy"), write_submission(source))
    assert result.status is Status.PASS, result.message


def test_hidden_mode_never_reports_inputs(toy_course):
    grader = Grader(toy_course, secret="s3")
    pitfall = toy_course.root / "solutions" / "pitfalls" / "toy" / "forgot_scale.py"
    result = grader.grade_file(toy_course.problem("toy"), pitfall)
    assert result.status is Status.FAIL
    assert all(not case.inputs for case in result.cases)


def test_course_code_and_submissions_keep_separate_compilation_caches(
    toy_course, write_submission, cache_folder
):
    assert compilation_cache(trusted=True) == cache_folder / "jax-course"
    assert compilation_cache(trusted=False) == cache_folder / "jax-submissions"
    source = """\
import jax.numpy as jnp


def scaled_sum(x, scale):
    return jnp.stack([x.sum() * scale, x.max()])
"""
    result = Grader(toy_course).grade_file(toy_course.problem("toy"), write_submission(source))
    assert result.status is Status.PASS
    assert any((cache_folder / "jax-submissions").iterdir()), "the submission's kernels were kept"


def test_the_compilation_cache_can_be_turned_off_without_changing_a_verdict(toy_course, monkeypatch):
    pitfall = toy_course.root / "solutions" / "pitfalls" / "toy" / "forgot_scale.py"
    cached = Grader(toy_course).grade_file(toy_course.problem("toy"), pitfall)
    monkeypatch.setenv("GRADE_CACHE_DIR", "off")
    assert compilation_cache(trusted=False) is None
    uncached = Grader(toy_course).grade_file(toy_course.problem("toy"), pitfall)
    assert [c.got.tolist() for c in cached.cases] == [c.got.tolist() for c in uncached.cases]
    assert cached.pitfall == uncached.pitfall
