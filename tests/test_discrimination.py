"""DESIGN section 4: on the hidden case families, every pitfall lands at least 10 tolerances from the
reference on each family built for it, and every correct variant stays within half a tolerance."""

from __future__ import annotations

import pytest
from conftest import COURSE, PROBLEMS

from grader.discrimination import discrimination_table

SECRETS = 3  # three secrets' worth of hidden cases per problem


@pytest.fixture(scope="module", params=PROBLEMS, ids=lambda p: p.id)
def table(request):
    table = discrimination_table(COURSE, request.param, secrets=SECRETS)
    print("\n" + table.render())
    return table


def test_every_pitfall_is_far_outside_the_tolerance_on_its_families(table):
    for row in table.rows:
        if row.kind == "pitfall" and row.families:
            assert not row.failure, f"{row.name} produced no outputs: {row.failure}"
            assert row.worst(table.cases) >= 10, f"{row.name}: smallest ratio {row.worst(table.cases):.3g}"


def test_every_correct_variant_is_well_inside_the_tolerance(table):
    variants = [row for row in table.rows if row.kind == "variant"]
    assert len(variants) >= 3
    for row in variants:
        assert not row.failure, f"{row.name} produced no outputs: {row.failure}"
        assert row.worst(table.cases) <= 0.5, f"{row.name}: largest ratio {row.worst(table.cases):.3g}"


def test_every_hidden_case_set_catches_every_visible_pitfall(table):
    per_secret = len(table.cases) // SECRETS
    for row in table.rows:
        if row.kind != "pitfall" or not row.families:
            continue
        for start in range(0, len(table.cases), per_secret):
            worst_case = max(row.ratios[c.index] for c in table.cases[start : start + per_secret])
            assert worst_case > 1, f"{row.name} passes the hidden cases of secret {start // per_secret}"
