"""Naming the mistake: a pitfall is named only when its file explains the learner's outputs (the same verdict
on every practice case, the same numbers where the learner failed); ties go to the file whose dtypes the
learner's code ran, or stay equals; a failed answer no pitfall explains is told so, with the nearest miss."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import numpy as np

from grader.grading.diagnose import Diagnosis, diagnose
from grader.grading.grader import Grader
from grader.grading.naming import Naming, _break_tie, _same_dtypes, naming_note
from grader.profile.compare import runs_the_mistakes_dtypes
from grader.protocol.payloads import Returned
from grader.report.json_document import render_json
from grader.report.plain_text import render_text
from grader.results import ClosestPitfall, GradeReport, MatchedPitfall, Status


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
    assert result.message.endswith("; no known mistake matches") and result.closest is None


def _names(problem, got, reference, outputs, cases=None) -> list[str]:
    return [p.name for p in diagnose(problem, got, reference, outputs, cases).named]


def test_every_explaining_pitfall_is_returned_closest_first(toy_course):
    problem = toy_course.problem("toy")
    reference = {0: np.array([10.0, 1.0])}
    got = {0: Returned.from_array(np.array([5.0, 1.0]))}
    far, near = np.array([5.0 + 4e-5, 1.0]), np.array([5.0, 1.0])
    outputs = {"forgot_scale": {0: far}, "unseen_mistake": {0: near}}
    assert _names(problem, got, reference, outputs) == ["unseen_mistake", "forgot_scale"]


def test_another_form_of_a_pitfall_is_named_as_that_pitfall(toy_course):
    problem = toy_course.problem("toy")
    reference = {0: np.array([10.0, 1.0])}
    got = {0: Returned.from_array(np.array([7.0, 1.0]))}
    outputs = {"forgot_scale": {0: np.array([5.0, 1.0])}, "forgot_scale--halved": {0: np.array([7.0, 1.0])}}
    diagnosis = diagnose(problem, got, reference, outputs)
    assert [p.name for p in diagnosis.named] == ["forgot_scale"]
    assert diagnosis.labels == {"forgot_scale": ["forgot_scale--halved"]}


def test_nothing_is_named_for_an_answer_that_passed(toy_course):
    problem = toy_course.problem("toy")
    reference = {0: np.array([10.0, 1.0])}
    got = {0: Returned.from_array(np.array([10.0, 1.0]))}
    assert _names(problem, got, reference, {"forgot_scale": {0: np.array([10.0, 1.0])}}) == []


REFERENCE = {0: np.array([10.0, 1.0]), 1: np.array([20.0, 1.0])}


def test_a_pitfall_whose_numbers_differ_on_a_failed_case_is_not_named(toy_course):
    """The old rule judged a pitfall on its own families only; a learner failing elsewhere with other
    numbers was sent to code they did not write."""
    problem = toy_course.problem("toy")
    got = {0: Returned.from_array(np.array([5.0, 1.0])), 1: Returned.from_array(np.array([13.0, 1.0]))}
    outputs = {"forgot_scale": {0: np.array([5.0, 1.0]), 1: np.array([12.0, 1.0])}}
    diagnosis = diagnose(problem, got, REFERENCE, outputs)
    assert diagnosis.named == []
    assert diagnosis.nearest is None  # one case of two: not worth telling


def test_a_near_miss_is_told_only_where_it_agrees_on_most_failed_cases(toy_course):
    problem = toy_course.problem("toy")
    reference = {**REFERENCE, 2: np.array([30.0, 1.0])}
    got = {i: Returned.from_array(np.array([v, 1.0])) for i, v in ((0, 5.0), (1, 7.0), (2, 13.0))}
    outputs = {"forgot_scale": {0: np.array([5.0, 1.0]), 1: np.array([7.0, 1.0]), 2: np.array([12.0, 1.0])}}
    diagnosis = diagnose(problem, got, reference, outputs)
    assert diagnosis.named == [] and diagnosis.nearest is not None
    nearest = diagnosis.nearest
    assert (nearest.pitfall.name, nearest.agrees, nearest.differs) == ("forgot_scale", (0, 1), (2,))


def test_a_pitfall_that_fails_where_the_learner_passed_is_not_named(toy_course):
    problem = toy_course.problem("toy")
    got = {0: Returned.from_array(np.array([5.0, 1.0])), 1: Returned.from_array(np.array([20.0, 1.0]))}
    outputs = {"forgot_scale": {0: np.array([5.0, 1.0]), 1: np.array([7.0, 1.0])}}
    assert _names(problem, got, REFERENCE, outputs) == []
    # the same file explains a learner who failed both cases with its numbers
    both = {0: Returned.from_array(np.array([5.0, 1.0])), 1: Returned.from_array(np.array([7.0, 1.0]))}
    assert _names(problem, both, REFERENCE, outputs) == ["forgot_scale"]


def test_a_learner_without_a_value_on_some_case_is_not_named_from_the_numbers(toy_course):
    problem = toy_course.problem("toy")
    got = {0: Returned.from_array(np.array([5.0, 1.0]))}  # case 1 raised
    outputs = {"forgot_scale": {0: np.array([5.0, 1.0]), 1: np.array([7.0, 1.0])}}
    assert _names(problem, got, REFERENCE, outputs, [0, 1]) == []
    assert _names(problem, got, {0: REFERENCE[0]}, outputs, [0]) == ["forgot_scale"]


def _profile(*pairs: tuple[str, str]) -> dict:
    summary: dict = {}
    for role, signature in pairs:
        summary.setdefault(role, {})[signature] = 1
    return {"entries": [], "summary": summary}


FP16_DIVISION = ("scaling", "float16 x float16 -> float16")
FP32_DIVISION = ("scaling", "float32 x float32 -> float32")


def _tied(toy_course) -> Diagnosis:
    base = toy_course.problem("toy").pitfall("forgot_scale")
    problem = replace(toy_course.problem("toy"), pitfalls=(base, replace(base, name="other")))
    got = {0: Returned.from_array(np.array([5.0, 1.0]))}
    outputs = {"forgot_scale": {0: np.array([5.0, 1.0])}, "other": {0: np.array([5.0, 1.0])}}
    return diagnose(problem, got, {0: REFERENCE[0]}, outputs)


def test_a_tie_on_the_numbers_goes_to_the_file_that_ran_the_learners_dtypes(toy_course):
    diagnosis = _tied(toy_course)
    assert [p.name for p in diagnosis.named] == ["forgot_scale", "other"]  # the table's order
    profiles = {"forgot_scale": _profile(FP32_DIVISION), "other": _profile(FP16_DIVISION)}
    named, tied = _break_tie(diagnosis, _profile(FP16_DIVISION), profiles)
    assert ([p.name for p in named], tied) == (["other", "forgot_scale"], False)


def test_a_tie_the_dtypes_cannot_break_is_given_as_equals(toy_course):
    diagnosis = _tied(toy_course)
    same = {"forgot_scale": _profile(FP16_DIVISION), "other": _profile(FP16_DIVISION)}
    assert _break_tie(diagnosis, _profile(FP16_DIVISION), same)[1] is True
    assert _break_tie(diagnosis, None, same)[1] is True  # no profile of the learner's code
    assert _break_tie(diagnosis, {"error": "not traced"}, same)[1] is True
    assert _break_tie(diagnosis, _profile(FP16_DIVISION), None)[1] is True  # a learner copy: no pitfall files


def test_a_pitfall_whose_file_runs_other_dtypes_than_the_learners_code_is_not_named(toy_course):
    """A forward copy made once and a gradient divided by S in fp16 both freeze the weights: the same numbers,
    but only the second runs the fp16 division its pitfall file runs."""
    diagnosis = _tied(toy_course)
    reference = _profile(FP32_DIVISION)
    profiles = {
        "reference": reference,
        "forgot_scale": _profile(FP16_DIVISION),  # divides in fp16 where the reference divides in fp32
        "other": _profile(FP32_DIVISION, ("cast", "float32 -> float16")),  # adds a cast the reference lacks
    }
    frozen_copy = _profile(FP32_DIVISION)  # the learner's: the reference's dtypes
    kept = _same_dtypes(diagnosis, frozen_copy, profiles)
    assert kept.named == []
    fp16_division = _profile(FP16_DIVISION)
    assert [p.name for p in _same_dtypes(diagnosis, fp16_division, profiles).named] == ["forgot_scale"]
    # without a profile of the learner's code, only the numbers can say
    assert len(_same_dtypes(diagnosis, None, profiles).named) == 2
    assert runs_the_mistakes_dtypes(fp16_division, {"error": "not traced"}, reference)


def test_a_failed_answer_no_pitfall_explains_is_told_so(toy_course, write_submission):
    source = """\
import numpy as np


def scaled_sum(x, scale):
    factor = scale if x.size < 10 else 1.0  # forgets the scale on large inputs only
    return np.array([x.sum() * factor, x.max()], np.float32)
"""
    result = Grader(toy_course).grade_file(toy_course.problem("toy"), write_submission(source))
    assert result.status is Status.FAIL and result.pitfall is None
    assert result.message.endswith("; no known mistake matches")
    assert result.closest is None  # forgot_scale gives its numbers on one failed case of two
    assert "looks like" not in render_text(GradeReport("practice", (result,)))


def test_every_report_tells_the_nearest_miss_in_the_same_words(toy_course, write_submission):
    failed = Grader(toy_course).grade_file(
        toy_course.problem("toy"), write_submission("def scaled_sum(x, scale):\n    return x[:2] * 0\n")
    )
    result = replace(failed, closest=ClosestPitfall("forgot_scale", "Scale forgotten", (1, 2), (3,)))
    text = render_text(GradeReport("practice", (result,)))
    assert "No known mistake gives these outputs. The closest, the named pitfall 'forgot_scale'" in text
    assert "gives your numbers on practice cases 1 and 2 but not on case 3." in text
    document = json.loads(render_json(GradeReport("practice", (result,))))
    closest = document["problems"][0]["closest_pitfall"]
    assert closest == {"name": "forgot_scale", "title": "Scale forgotten", "agrees": [1, 2], "differs": [3]}
    schema = json.loads((Path(__file__).parent.parent / "schemas" / "grade_report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(document)


def test_every_report_names_tied_pitfalls_as_equals(toy_course, write_submission):
    failed = Grader(toy_course).grade_file(
        toy_course.problem("toy"), write_submission("def scaled_sum(x, scale):\n    return x[:2] * 0\n")
    )
    lead = MatchedPitfall("forgot_scale", "Scale forgotten", "You returned sum(x).")
    other = MatchedPitfall("other", "Another", "Also sum(x).")
    result = replace(failed, pitfall=lead, also_matches=(other,), pitfall_tied=True)
    text = render_text(GradeReport("practice", (result,)))
    assert "Your outputs are those of each of these named pitfalls, equally" in text
    assert "'forgot_scale': Scale forgotten." in text and "'other': Another." in text
    assert "The same numbers come from" not in text
    document = json.loads(render_json(GradeReport("practice", (result,))))
    assert document["problems"][0]["pitfall_tied"] is True
    assert naming_note(Naming([lead, other], tied=True)) == (
        "; this matches the named pitfalls 'forgot_scale' and 'other', equally"
    )
