"""The text report's per-case table: the entries that matter, named by output segment, marked inside or
outside the tolerance; and, in practice mode, the case's seed and how to rebuild its inputs."""

from __future__ import annotations

import numpy as np

from grader import practice_case
from grader.course.cases import make_cases
from grader.report.plain_text import render_problem
from grader.results import CaseResult, ProblemResult, Status, entry_name


def _result(expected, got, segments=(), seed=None) -> ProblemResult:
    case = CaseResult(
        0,
        "family",
        Status.FAIL,
        message="some entries outside the tolerance",
        expected=np.asarray(expected, dtype=np.float64),
        got=np.asarray(got, dtype=np.float64),
        max_abs_err=1.0,
        max_rel_err=1.0,
        error_ratio=100.0,
        seed=seed,
        inputs="x: float32 (4,)" if seed is not None else "",
    )
    return ProblemResult("prob", "Title", Status.FAIL, "stub.py", cases=(case,), rtol=0.01, segments=segments)


def _table_rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.rstrip().endswith(("inside", "outside"))]


def test_a_long_output_shows_only_entries_outside_the_tolerance_the_first_and_the_worst():
    expected = np.ones(40)
    got = expected.copy()
    got[[5, 6, 7, 8]] = 1.05  # the first ones outside
    got[30] = 9.0  # the worst
    got[31] = 1.009  # inside: never shown
    rows = _table_rows(render_problem(_result(expected, got), "practice"))
    assert [row[0] for row in rows] == ["5", "6", "7", "30"]
    assert all(row[-1] == "outside" for row in rows)


def test_entries_are_named_by_segment_when_the_output_has_segments():
    expected = np.arange(1.0, 13.0)  # losses[0..5], scales[0..5]
    got = expected.copy()
    got[10] = 100.0
    text = render_problem(_result(expected, got, segments=("losses", "scales")), "practice")
    assert [row[0] for row in _table_rows(text)] == ["scales[4]"]
    assert entry_name(10, 12, ("losses", "scales")) == "scales[4]"
    assert entry_name(10, 13, ("losses", "scales")) == "10"  # not equal parts: the flat index


def test_a_short_output_shows_every_entry_marked_inside_or_outside():
    rows = _table_rows(render_problem(_result([1.0, 2.0, 3.0], [1.0, 2.5, 3.001]), "practice"))
    assert [(row[0], row[-1]) for row in rows] == [("0", "inside"), ("1", "outside"), ("2", "inside")]


def test_practice_cases_show_their_seed_and_a_line_that_rebuilds_the_inputs(toy_course):
    text = render_problem(_result([1.0], [2.0], seed=1234), "practice")
    assert "seed 1234" in text and "practice_case('prob', 1)" in text
    rebuilt = practice_case("toy", 2)
    case = make_cases(toy_course.problem("toy"))[1]
    assert list(rebuilt) == list(case.inputs)
    assert all(np.array_equal(rebuilt[name], case.inputs[name]) for name in rebuilt)


def test_hidden_cases_show_no_seed():
    text = render_problem(_result([1.0], [2.0]), "hidden")
    assert "seed" not in text and "practice_case" not in text
