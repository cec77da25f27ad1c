"""`grade insights` on a class made from the real course's files (benchmarks/class_of_course.py): every
natural mistake and pitfall file of five problems handed in by three learners who wrote it differently, and
the correct variants. Each group holds one behaviour (purity) and each behaviour lands in one group
(completeness), 90% or more each, and no correct variant is grouped. A behaviour is a file's, except where
files' outputs are identical on every practice case (benchmarks/insights_purity.py says why)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import insights_purity
from class_of_course import build_class

from grader.classroom import insights
from grader.classroom.behaviour_record import read_record
from grader.classroom.insights import class_insights
from grader.course.problems import Course

pytestmark = pytest.mark.class_insights  # about 14 minutes: by hand, not in .ci/run (see pyproject)
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """The class built and graded once (`grade batch --insights`, practice mode): (truth, gradebook)."""
    folder = tmp_path_factory.mktemp("course-class")
    course = Course(ROOT)
    problems = [course.problem(i) for i in insights_purity.DEFAULT_PROBLEMS]
    truth = build_class(course, problems, folder / "roster")
    gradebook = folder / "out" / "gradebook.csv"
    insights_purity.grade_class(folder / "roster", gradebook, jobs=2)
    return truth, gradebook


def _measured(truth, gradebook):
    found = class_insights(read_record(gradebook))
    return [
        insights_purity.measure_problem(f, truth)
        for f in found
        if f.facts.problem in insights_purity.DEFAULT_PROBLEMS
    ]


def test_each_group_holds_one_behaviour_and_each_behaviour_one_group(graded_class):
    measured = _measured(*graded_class)
    print("\n" + insights_purity.render(measured))
    assert len(measured) == 5
    for m in measured:
        assert m.grouped >= 0.9 * m.submissions, f"{m.problem}: only {m.grouped} of {m.submissions} grouped"
        assert m.purity >= 0.9 and m.completeness >= 0.9, m
        assert m.variants_grouped == 0, f"{m.problem}: a correct variant grouped with the mistakes"


@pytest.mark.parametrize(
    "mutant, measure",
    [
        (lambda one, other, tolerance: False, "completeness"),  # every submission alone
        (lambda one, other, tolerance: True, "purity"),  # every answer in its bucket the same
    ],
    ids=["nothing-same", "everything-same"],
)
def test_a_grouping_that_ignores_the_tolerance_or_the_numbers_fails_the_measure(
    graded_class, monkeypatch, mutant, measure
):
    """Mutants, measured on the same graded class: the test above would catch each. (Exact equality in
    place of the tolerance is not among them: the three writings run the same programs, so their outputs
    are bitwise equal; tests/test_insights.py holds the tolerance.)"""
    monkeypatch.setattr(insights, "same_answer", mutant)
    measured = _measured(*graded_class)
    print("\n" + insights_purity.render(measured))
    assert min(getattr(m, measure) for m in measured) < 0.9
