"""The notebook API grades a function object and returns the same result object as the CLI's grader."""

from __future__ import annotations

import numpy as np

from grader import Status, grade_file, grade_function


def test_grade_function_passes_a_correct_function(toy_course):
    def scaled_sum(x, scale):
        return np.array([x.sum() * scale, x.max()], dtype=np.float32)

    result = grade_function("toy", scaled_sum)
    assert (
        result.status is Status.PASS
        and result.submission
        == "<function test_grade_function_passes_a_correct_function.<locals>.scaled_sum>"
    )


def test_grade_function_names_the_pitfall_like_grade_file(toy_course):
    def scaled_sum(x, scale):
        return np.array([x.sum(), x.max()], dtype=np.float32)

    in_process = grade_function("toy", scaled_sum)
    from_file = grade_file("toy", toy_course.root / "solutions" / "pitfalls" / "toy" / "forgot_scale.py")
    assert in_process.status is from_file.status is Status.FAIL
    assert in_process.pitfall == from_file.pitfall and in_process.pitfall.name == "forgot_scale"
    assert [c.status for c in in_process.cases] == [c.status for c in from_file.cases]


def test_grade_function_reports_exceptions_as_errors(toy_course):
    def scaled_sum(x, scale):
        raise ValueError("boom")

    result = grade_function("toy", scaled_sum)
    assert result.status is Status.ERROR and "ValueError: boom" in result.message
