"""Case seeds: practice cases are fixed, hidden cases follow the secret and never equal practice ones."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import PROBLEMS

from grader.course.cases import hidden_seed, load_families, make_cases, practice_seed


def _same_inputs(a, b) -> bool:
    return all(np.array_equal(np.asarray(a.inputs[k]), np.asarray(b.inputs[k])) for k in a.inputs)


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.id)
def test_practice_cases_are_the_same_every_time_one_per_family(problem):
    first, second = make_cases(problem), make_cases(problem)
    assert [c.family for c in first] == list(load_families(problem))
    assert all(_same_inputs(a, b) for a, b in zip(first, second, strict=True))


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.id)
def test_hidden_cases_depend_on_the_secret(problem):
    one, again, other = (
        make_cases(problem, "alpha"),
        make_cases(problem, "alpha"),
        make_cases(problem, "beta"),
    )
    assert len(one) == len(load_families(problem)) * problem.hidden_cases_per_family
    assert all(_same_inputs(a, b) for a, b in zip(one, again, strict=True))
    assert not all(_same_inputs(a, b) for a, b in zip(one, other, strict=True))
    practice = {c.seed for c in make_cases(problem)}
    assert not practice & {c.seed for c in one}


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.id)
def test_case_inputs_follow_the_declared_order_and_dtypes(problem):
    """The parameters, in order, or the `inputs` that a problem's harness declares it makes calls from."""
    assert problem.inputs or problem.harness_path is None, "a harness must declare its cases' inputs"
    for case in make_cases(problem, "gamma"):
        assert tuple(case.inputs) == problem.case_inputs
        for value in case.inputs.values():
            assert isinstance(value, np.ndarray | float | int), type(value)


def test_seed_derivations_are_stable():
    assert practice_seed("p", 0) == practice_seed("p", 0) != practice_seed("p", 1)
    assert hidden_seed("s", "p", 0) != hidden_seed("t", "p", 0)
    assert hidden_seed("s", "p", 0) != hidden_seed("s", "q", 0)
