"""Naming the mistake: a submission that reproduces a pitfall's outputs is reported under its name."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from grader.diagnose import diagnose
from grader.grading import Grader
from grader.protocol import Returned
from grader.results import Status


def test_a_pitfall_the_cases_cannot_show_is_never_named(toy_course):
    unseen = toy_course.root / "solutions" / "pitfalls" / "toy" / "unseen_mistake.py"
    result = Grader(toy_course).grade_file(toy_course.problem("toy"), unseen)
    assert result.status is Status.PASS and result.pitfall is None


def test_a_wrong_answer_that_matches_no_pitfall_names_none(toy_course, write_submission):
    source = """\
from dataclasses import replace

import numpy as np


def scaled_sum(x, scale):
    return np.array([x.sum() * scale + 1, x.max()], np.float32)
"""
    result = Grader(toy_course).grade_file(toy_course.problem("toy"), write_submission(source))
    assert result.status is Status.FAIL and result.pitfall is None


def test_every_matching_pitfall_is_returned_closest_first(toy_course):
    problem = toy_course.problem("toy")
    reference = {0: np.array([10.0, 1.0])}
    got = {0: Returned.from_array(np.array([5.0, 1.0]))}
    far, near = np.array([5.0 + 4e-5, 1.0]), np.array([5.0, 1.0])
    outputs = {"forgot_scale": {0: far}, "unseen_mistake": {0: near}}
    assert [p.name for p in diagnose(problem, got, reference, outputs)] == ["unseen_mistake", "forgot_scale"]


def test_another_form_of_a_pitfall_is_named_as_that_pitfall(toy_course):
    problem = toy_course.problem("toy")
    reference = {0: np.array([10.0, 1.0])}
    got = {0: Returned.from_array(np.array([7.0, 1.0]))}
    outputs = {"forgot_scale": {0: np.array([5.0, 1.0])}, "forgot_scale--halved": {0: np.array([7.0, 1.0])}}
    assert [p.name for p in diagnose(problem, got, reference, outputs)] == ["forgot_scale"]


def test_a_pitfall_equal_to_the_reference_on_these_cases_is_not_named(toy_course):
    problem = toy_course.problem("toy")
    reference = {0: np.array([10.0, 1.0])}
    got = {0: Returned.from_array(np.array([10.0, 1.0]))}
    assert diagnose(problem, got, reference, {"forgot_scale": {0: np.array([10.0, 1.0])}}) == []


def test_with_families_a_pitfall_must_match_only_on_the_families_built_for_it(toy_course):
    """Elsewhere its numbers may drift (chaotic low-precision runs) without the mistake being another."""
    problem = replace(
        toy_course.problem("toy"),
        pitfalls=(replace(toy_course.problem("toy").pitfall("forgot_scale"), families=("small",)),),
    )
    reference = {0: np.array([10.0, 1.0]), 1: np.array([20.0, 1.0])}
    got = {0: Returned.from_array(np.array([5.0, 1.0])), 1: Returned.from_array(np.array([13.0, 1.0]))}
    outputs = {"forgot_scale": {0: np.array([5.0, 1.0]), 1: np.array([12.0, 1.0])}}
    families = {0: "small", 1: "large"}
    assert diagnose(problem, got, reference, outputs) == []  # every case must match without families
    assert [p.name for p in diagnose(problem, got, reference, outputs, families)] == ["forgot_scale"]


def test_a_tie_on_the_own_families_is_broken_by_every_case(toy_course):
    base = toy_course.problem("toy").pitfall("forgot_scale")
    problem = replace(
        toy_course.problem("toy"),
        pitfalls=(replace(base, name="other", families=("small",)), replace(base, families=("small",))),
    )
    reference = {0: np.array([10.0, 1.0]), 1: np.array([20.0, 1.0])}
    got = {0: Returned.from_array(np.array([5.0, 1.0])), 1: Returned.from_array(np.array([20.0, 1.0]))}
    outputs = {
        "other": {0: np.array([5.0, 1.0]), 1: np.array([7.0, 1.0])},  # listed first, but far on case 1
        "forgot_scale": {0: np.array([5.0, 1.0]), 1: np.array([20.0, 1.0])},
    }
    ranked = diagnose(problem, got, reference, outputs, {0: "small", 1: "large"})
    assert [p.name for p in ranked] == ["forgot_scale", "other"]
