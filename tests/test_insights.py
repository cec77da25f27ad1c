"""`grade insights`: failing submissions grouped by what they compute (grader/classroom/insights.py), the
record a batch keeps for it (grader/behaviours.py, grader/classroom/behaviour_record.py) and its page
(grader/report/insights_page.py). Grading-free: the behaviours are made here."""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser

import numpy as np
import pytest

from grader.behaviours import Behaviour, BehaviourRecord, PracticeFacts
from grader.classroom import insights
from grader.classroom.insights import class_insights, problem_insights
from grader.report import insights_page
from grader.report.insights_page import render_insights_page
from grader.results import ClosestPitfall

FACTS = PracticeFacts(
    problem="p",
    title="A problem",
    rtol=0.01,
    atol=0.0,
    returns="float32 array of shape (3,)",
    families={0: "plain", 1: "large"},
    reference={0: np.array([1.0, 2.0, 3.0]), 1: np.array([100.0, 200.0, 300.0])},
)
HOSTILE = '<img src=x onerror="alert(1)">&amp;'


def member(learner: str, scale: float = 2.0, **fields) -> Behaviour:
    """A failing submission whose outputs are the reference's times `scale` (unless `outputs` is given)."""
    outputs = fields.pop("outputs", {i: values * scale for i, values in FACTS.reference.items()})
    return Behaviour(learner, "p", f"/class/{learner}/problems/p/stub.py", outputs, **fields)


def groups_of(*members: Behaviour) -> list[list[str]]:
    found = problem_insights(FACTS, {"fail": len(members)}, sorted(members, key=lambda m: m.learner))
    return [[m.learner for m in group.members] for group in found.groups]


# The specification, as checks that the tests run and the mutants below must break.


def check_same_answer_within_the_tolerance_is_one_group() -> None:
    near = member("b", 2.0 * 1.005)  # half a tolerance from a's outputs
    far = member("c", 2.0 * 1.05)  # five tolerances
    assert groups_of(member("a"), near, far) == [["a", "b"], ["c"]]


def check_shape_nonfinite_pattern_and_non_arrays_part_groups() -> None:
    nan = {0: np.array([np.nan, 4.0, 6.0]), 1: FACTS.reference[1] * 2}
    short = {0: np.array([2.0, 4.0]), 1: FACTS.reference[1] * 2}
    listed = {0: "a list", 1: FACTS.reference[1] * 2}
    none = {1: FACTS.reference[1] * 2}
    found = groups_of(
        member("a"), member("b", outputs=nan), member("c", outputs=short), member("d", outputs=listed),
        member("e", outputs=none), member("f", outputs=dict(listed)),
    )  # fmt: skip
    assert sorted(found) == [["a"], ["b"], ["c"], ["d", "f"], ["e"]]


def check_groups_largest_first_numbered_singletons_apart() -> None:
    scales = {"a": 3.0, "b": 2.0, "c": 2.0, "d": 2.0, "e": 3.0, "f": 9.0}
    found = problem_insights(FACTS, {"fail": 6}, [member(name, scale) for name, scale in scales.items()])
    assert [(g.number, g.size) for g in found.groups] == [(1, 3), (2, 2), (3, 1)]
    assert [g.representative.learner for g in found.groups] == ["b", "a", "f"]
    assert [g.size for g in found.shared] == [3, 2] and [g.size for g in found.singletons] == [1]


def check_dtype_departures_split_and_the_unprofiled_join_the_largest() -> None:
    bf16 = ("matmul: bfloat16 x bfloat16 -> bfloat16",)
    fp16 = ("matmul: float16 x float16 -> float16",)
    found = groups_of(
        member("a", departures=bf16, profiled=True), member("b", departures=bf16, profiled=True),
        member("c", departures=fp16, profiled=True), member("d"),
    )  # fmt: skip
    assert found == [["a", "b", "d"], ["c"]]


def check_failing_cases_in_tolerances() -> None:
    outputs = {0: FACTS.reference[0] * 1.1, 1: FACTS.reference[1] * 1.001}
    (group,) = problem_insights(FACTS, {"fail": 1}, [member("a", outputs=outputs)]).groups
    (failing,) = group.failing
    assert (failing.case, failing.family) == (0, "plain") and failing.ratio == pytest.approx(10.0)
    assert group.plotted_case == 0


def check_page_escapes_learner_text() -> None:
    page = _page([member(HOSTILE), member(HOSTILE + "2", pitfall=HOSTILE)])
    assert "<img" not in page and 'onerror="alert' not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;amp;" in page


CHECKS = [
    check_same_answer_within_the_tolerance_is_one_group,
    check_shape_nonfinite_pattern_and_non_arrays_part_groups,
    check_groups_largest_first_numbered_singletons_apart,
    check_dtype_departures_split_and_the_unprofiled_join_the_largest,
    check_failing_cases_in_tolerances,
    check_page_escapes_learner_text,
]


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__.removeprefix("check_") for c in CHECKS])
def test_grouping(check):
    check()


def _exact(one, other, tolerance):
    if isinstance(one, np.ndarray) and isinstance(other, np.ndarray):
        return one.shape == other.shape and bool(np.array_equal(one, other))
    return one == other


MUTANTS = {
    "same answer is exact equality": ("same_answer", _exact),
    "every answer the same": ("same_answer", lambda one, other, tolerance: True),
    "dtypes never split": ("split_by_dtypes", lambda group: [group]),
    "no failing case found": ("failing_cases", lambda behaviour, facts: []),
}


@pytest.mark.parametrize("mutant", [*MUTANTS, "page unescaped"])
def test_a_broken_grouping_or_page_is_caught(monkeypatch, mutant):
    """Each mutant of the grouping (or of the page's escaping) breaks at least one check above."""
    if mutant == "page unescaped":
        monkeypatch.setattr(insights_page, "escape", lambda text: text)
    else:
        name, replacement = MUTANTS[mutant]
        monkeypatch.setattr(insights, name, replacement)
    broken = []
    for check in CHECKS:
        try:
            check()
        except (AssertionError, ValueError):
            broken.append(check.__name__)
    assert broken, f"no check catches the mutant: {mutant}"


def test_grouping_compares_each_submission_with_the_groups_representatives_only(monkeypatch):
    """Linear in the class: 300 submissions of 3 behaviours cost at most 3 comparisons each, where all pairs
    would cost 150 each (the bucketing by shape and non-finite pattern costs no comparison at all)."""
    calls = []
    real = insights.same_behaviour
    monkeypatch.setattr(insights, "same_behaviour", lambda *args: calls.append(1) or real(*args))
    members = [member(f"l{k:03d}", (2.0, 3.0, 5.0)[k % 3]) for k in range(300)]
    found = problem_insights(FACTS, {"fail": 300}, members)
    assert [g.size for g in found.groups] == [100, 100, 100]
    assert len(calls) <= 3 * 300


def test_the_record_keeps_outputs_non_finite_values_and_names_through_json():
    closest = ClosestPitfall("forgot_scale", "Scale forgotten", (1,), (2,))
    odd = member(
        "caf\udce9 " + HOSTILE,  # a folder name that is not UTF-8, as batch shows it
        outputs={0: np.array([np.nan, np.inf, -np.inf]), 1: "a list"},
        closest=closest,
        departures=("cast: float32 -> bfloat16",),
        profile_lines=("your cast at stub.py:3 converts float32 to bfloat16",),
        profiled=True,
    )
    record = BehaviourRecord("hidden", {"p": FACTS}, {"p": {"fail": 2, "pass": 1}}, (member("a"), odd))
    again = BehaviourRecord.from_dict(json.loads(json.dumps(record.to_dict())))
    assert again.mode == "hidden" and again.statuses == record.statuses
    assert again.facts["p"].families == FACTS.families
    assert all(np.array_equal(again.facts["p"].reference[i], FACTS.reference[i]) for i in FACTS.reference)
    back = again.behaviours[1]
    assert back.learner == odd.learner and back.closest == closest and back.departures == odd.departures
    assert np.array_equal(back.outputs[0], odd.outputs[0], equal_nan=True) and back.outputs[1] == "a list"
    assert [g.size for g in class_insights(again)[0].groups] == [1, 1]


def _page(members: list[Behaviour], named: str = "") -> str:
    record = BehaviourRecord(
        "practice", {"p": FACTS}, {"p": {"fail": len(members), "pass": 2}}, tuple(members)
    )
    return render_insights_page(class_insights(record), "practice", "gradebook.csv")


class _Tags(HTMLParser):
    """Every start tag of a document, with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_the_page_is_self_contained_and_shows_the_groups_and_their_plots():
    closest = ClosestPitfall("forgot_scale", "Scale forgotten", (1,), (2,))
    members = [member("a", closest=closest), member("b", closest=closest), member("c", 5.0)]
    page = _page(members)
    parser = _Tags()
    parser.feed(page)
    tags = parser.tags
    assert not [t for t, a in tags if t in ("script", "link", "iframe", "object", "embed", "img")]
    urls = [v for _, a in tags for k, v in a.items() if k in ("src", "href") and v]
    assert urls == [], "the page loads nothing"
    policy = next(a["content"] for t, a in tags if t == "meta" and a.get("http-equiv"))
    assert "default-src 'none'" in policy
    classes = [a.get("class", "") for _, a in tags]
    assert "chart pass-rates" in classes and "chart mistakes" in classes
    assert classes.count("group") == 2 and classes.count("chart series") == 2
    assert "nearest <code>forgot_scale</code>" in page
    assert "grade new p --pitfall NAME --from-group 1 --gradebook gradebook.csv" in page
    assert re.search(r"case 1 \(<code>plain</code>\): 100\.0x the tolerance", page)


def test_an_infinite_ratio_is_said_in_words():
    assert "NaN/inf" in insights_page._ratio(math.inf)


def test_a_path_that_is_not_utf8_is_shown_escaped_and_the_page_encodes():
    odd = Behaviour("caf\\xe9", "p", "/class/caf\udce9/problems/p/stub.py", {0: FACTS.reference[0] * 2})
    page = _page([odd, member("b")])
    page.encode("utf-8")  # what write_file does: a lone surrogate would raise here
    assert "/class/caf\\udce9/problems/p/stub.py" in page


def test_a_case_the_harness_rejected_is_kept_as_what_it_named_never_its_message():
    """A submission the problem's check rejects has no output there, but behaves as its rejection does."""
    from types import SimpleNamespace

    from grader.grading.naming import _rejected_cases

    def ran(pitfall: str, rejected: bool = True):
        raised = SimpleNamespace(rejected=rejected, pitfall=pitfall, message="quotes " + HOSTILE)
        return SimpleNamespace(raised=raised, returned=None)

    run = SimpleNamespace(cases={0: ran("save_not_finished"), 1: ran(""), 2: ran("x", rejected=False)})
    kept = _rejected_cases(run)
    assert kept == {
        0: "rejected by the problem's check (save_not_finished)",
        1: "rejected by the problem's check (no pitfall named)",
    }
    assert groups_of(member("a", outputs=dict(kept)), member("b", outputs=dict(kept))) == [["a", "b"]]
