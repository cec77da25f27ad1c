"""DESIGN section 4: on the hidden case families, every pitfall lands at least 10 tolerances from the
reference on each family built for it, and every correct variant stays within half a tolerance."""

from __future__ import annotations

import pytest
from conftest import COURSE, PROBLEMS, TEST_SECRET

from grader.discrimination import discrimination_table
from grader.problems import pitfall_name

# Three secrets' worth of hidden cases per problem; the first is the one the other tests grade with.
SECRETS = (TEST_SECRET, "discrimination-1", "discrimination-2")


@pytest.fixture(scope="module", params=PROBLEMS, ids=lambda p: p.id)
def table(request):
    table = discrimination_table(COURSE, request.param, SECRETS)
    print("\n" + table.render())
    return table


def test_every_pitfall_is_far_outside_the_tolerance_on_its_families(table):
    statement = table.problem.statement_path.read_text(encoding="utf-8")
    for row in (row for row in table.rows if row.kind == "pitfall"):
        if not row.families:  # a mistake the numbers cannot show must say so, not hide
            section = statement.split(f"`{pitfall_name(row.name)}`", 1)[-1][:1500].lower()
            assert "cannot" in section or "not visible" in section, f"declare {row.name} as unseen"
            continue
        assert not row.failure, f"{row.name} produced no outputs: {row.failure}"
        assert row.worst(table.cases) >= 10, f"{row.name}: smallest ratio {row.worst(table.cases):.3g}"


def test_every_correct_variant_is_well_inside_the_tolerance(table):
    variants = [row for row in table.rows if row.kind == "variant"]
    assert len(variants) >= 3
    for row in variants:
        assert not row.failure, f"{row.name} produced no outputs: {row.failure}"
        assert row.worst(table.cases) <= 0.5, f"{row.name}: largest ratio {row.worst(table.cases):.3g}"


def test_every_hidden_case_set_catches_every_visible_pitfall(table):
    per_secret = len(table.cases) // len(SECRETS)
    for row in table.rows:
        if row.kind != "pitfall" or not row.families:
            continue
        for start in range(0, len(table.cases), per_secret):
            worst_case = max(row.ratios[c.index] for c in table.cases[start : start + per_secret])
            assert worst_case > 1, f"{row.name} passes the hidden cases of secret {start // per_secret}"
