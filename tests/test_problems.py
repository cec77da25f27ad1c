"""Every problem is sound: complete files, the reference passes, the stub fails, every pitfall fails and is
named, every correct variant passes. Parametrised over problems, so a new problem is covered when added."""

from __future__ import annotations

import ast

import pytest
from conftest import COURSE, PROBLEMS, problem_params

from grader.cases import load_families
from grader.hints import load_hints
from grader.results import Status


def _signature(path, function: str) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            return [arg.arg for arg in node.args.args]
    raise AssertionError(f"{path} defines no {function}")


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.id)
def test_problem_has_every_file(problem):
    for path in (problem.statement_path, problem.stub_path, problem.hints_path, problem.cases_path):
        assert path.is_file(), path
    assert COURSE.reference_path(problem).is_file()
    assert {p.name for p in problem.pitfalls} <= set(COURSE.pitfall_paths(problem)), "a file per pitfall"
    assert not COURSE.stray_pitfall_files(problem), (
        "pitfall files must be named <pitfall> or <pitfall>--<form>"
    )
    assert len(COURSE.variant_paths(problem)) >= 3, "at least three correct variants"
    assert len(load_hints(problem)) >= 2, "progressive hints"


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.id)
def test_stub_reference_and_statement_agree_on_the_signature(problem):
    expected = list(problem.parameters)
    assert _signature(problem.stub_path, problem.function) == expected
    assert _signature(COURSE.reference_path(problem), problem.function) == expected
    for path in [*COURSE.pitfall_paths(problem).values(), *COURSE.variant_paths(problem).values()]:
        assert _signature(path, problem.function) == expected, path
    assert problem.signature in problem.statement_path.read_text(encoding="utf-8"), "state the signature"


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.id)
def test_statement_names_every_pitfall_and_family(problem):
    statement = problem.statement_path.read_text(encoding="utf-8")
    families = load_families(problem)
    for pitfall in problem.pitfalls:
        assert f"`{pitfall.name}`" in statement, f"the statement must name pitfall {pitfall.name}"
        assert set(pitfall.families) <= set(families), f"{pitfall.name} lists unknown families"
    for family in families:
        assert f"`{family}`" in statement, f"the statement must describe family {family}"


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.id)
def test_reference_passes_practice_cases(problem, practice_grader):
    result = practice_grader.grade_file(problem, COURSE.reference_path(problem))
    assert result.status is Status.PASS, result.message
    assert len(result.cases) == len(load_families(problem))


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.id)
def test_reference_passes_hidden_cases(problem, hidden_grader):
    result = hidden_grader.grade_file(problem, COURSE.reference_path(problem))
    assert result.status is Status.PASS, result.message
    assert len(result.cases) == len(load_families(problem)) * problem.hidden_cases_per_family


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.id)
def test_untouched_stub_fails_as_not_implemented(problem, practice_grader):
    result = practice_grader.grade_file(problem, problem.stub_path)
    assert result.status is Status.ERROR
    assert "not implemented" in result.message
    assert all(case.status is Status.ERROR for case in result.cases)


def _visible_pitfall_files(problem) -> list[str]:
    return [label for label in COURSE.pitfall_paths(problem) if problem.families_of(label)]


@pytest.mark.parametrize(("problem", "label"), problem_params(_visible_pitfall_files))
def test_pitfall_fails_hidden_cases_and_is_named(problem, label, hidden_grader):
    result = hidden_grader.grade_file(problem, COURSE.pitfall_paths(problem)[label])
    assert result.status is not Status.PASS, f"pitfall file {label} passed"
    named = [m.name for m in ([result.pitfall] if result.pitfall else []) + list(result.also_matches)]
    assert problem.pitfall(label).name in named, result.message


@pytest.mark.parametrize(("problem", "variant"), problem_params(lambda p: list(COURSE.variant_paths(p))))
def test_correct_variant_passes_hidden_cases(problem, variant, hidden_grader):
    result = hidden_grader.grade_file(problem, COURSE.variant_paths(problem)[variant])
    assert result.status is Status.PASS, result.message
