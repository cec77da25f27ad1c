"""The tables made from the problems' manifests (`grade docs`): the README's problem table and each
statement's pitfall table are current, `grade docs --check` names a stale one, and `grade docs`
rewrites it."""

from __future__ import annotations

import shutil

import pytest
from conftest import PROBLEMS

from grader.authoring.check_files import statement_findings
from grader.authoring.discrimination import table_files
from grader.authoring.docs import (
    PITFALL_TABLE,
    PROBLEM_TABLE,
    RULES,
    pitfall_table,
    problem_table,
    rules_list,
    update_docs,
)
from grader.authoring.rules import manifest_findings
from grader.command.main import main
from grader.course.problems import Course


@pytest.fixture
def course_copy(course, tmp_path, monkeypatch) -> Course:
    """A copy of the course's problems and README, as the course `grade` finds."""
    copy = tmp_path / "course"
    shutil.copytree(course.root / "problems", copy / "problems")
    shutil.copy(course.root / "README.md", copy / "README.md")
    monkeypatch.setenv("GRADE_COURSE_ROOT", str(copy))
    monkeypatch.chdir(copy)
    return Course(copy)


def test_the_readme_problem_table_is_made_from_the_manifests(course):
    readme = (course.root / "README.md").read_text(encoding="utf-8")
    assert f"{PROBLEM_TABLE.start}\n{problem_table(course)}\n{PROBLEM_TABLE.end}" in readme, (
        "run `grade docs`"
    )
    for problem in course.problems():
        assert f"| `{problem.id}` | `{problem.signature}` | {problem.teaches} |" in readme


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda problem: problem.id)
def test_each_statement_lists_its_pitfalls_and_their_families_from_the_manifest(problem):
    statement = problem.statement_path.read_text(encoding="utf-8")
    table = pitfall_table(problem)
    assert f"{PITFALL_TABLE.start}\n{table}\n{PITFALL_TABLE.end}" in statement, "run `grade docs`"
    assert [row.split("`")[1] for row in table.splitlines()[2:]] == [p.name for p in problem.pitfalls]
    for pitfall in problem.pitfalls:
        row = next(row for row in table.splitlines() if row.startswith(f"| `{pitfall.name}` |"))
        assert f"| {pitfall.title} |" in row
        assert all(f"`{form}`" in row for form in pitfall.forms)


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda problem: problem.id)
def test_each_statement_lists_its_rules_each_held_by_files_of_the_course(course, problem):
    """Every problem lists the rules its Task section states, each held by files that exist (whether they
    fail or pass everywhere is `grade check`'s, in the course tests), the statement's list is the
    manifest's, and no statement admits a verdict that depends on the secret."""
    assert problem.rules, f"{problem.id}: no [rules.<name>] in problem.toml"
    assert manifest_findings(problem, set(table_files(course, problem))) == []
    statement = problem.statement_path.read_text(encoding="utf-8")
    assert f"{RULES.start}\n{rules_list(problem)}\n{RULES.end}" in statement, "run `grade docs`"
    assert len(rules_list(problem).splitlines()) == len(problem.rules) + 2


def test_grade_docs_check_names_a_statement_whose_rules_changed(course_copy, capsys):
    problem = course_copy.problem("weight_ema")
    manifest = problem.directory / "problem.toml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(
        text.replace('rule = "the eval loss computed in fp32"', 'rule = "NEW rule"'), encoding="utf-8"
    )
    assert main(["docs", "--check"]) == 1
    assert "problems/weight_ema/README.md: its tables are out of date" in capsys.readouterr().out
    assert main(["docs"]) == 0
    assert "| 2.6 | NEW rule | fails |" in problem.statement_path.read_text(encoding="utf-8")


def test_grade_docs_rewrites_a_stale_readme_table_and_check_says_so(course_copy, capsys):
    manifest = course_copy.problems_dir / "bf16_train_step" / "problem.toml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace('teaches = "', 'teaches = "NEW: ', 1), encoding="utf-8")
    assert main(["docs", "--check"]) == 1
    out = capsys.readouterr().out
    assert "README.md: its tables are out of date" in out and "run `grade docs`" in out
    assert main(["docs"]) == 0
    assert "| NEW: one SGD step" in (course_copy.root / "README.md").read_text(encoding="utf-8")
    assert update_docs(course_copy, check=True) == []


def test_grade_docs_check_names_a_stale_statement_and_grade_docs_rewrites_only_its_table(course_copy, capsys):
    problem = course_copy.problem("loss_scaling")
    manifest = problem.directory / "problem.toml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(
        text.replace('title = "Targets rounded to fp16"', 'title = "NEW title"'), encoding="utf-8"
    )
    before = problem.statement_path.read_text(encoding="utf-8")
    assert main(["docs", "--check"]) == 1
    assert "problems/loss_scaling/README.md: its tables are out of date" in capsys.readouterr().out
    assert problem.statement_path.read_text(encoding="utf-8") == before, "--check writes nothing"
    assert main(["docs"]) == 0
    assert "rewrote the tables of problems/loss_scaling/README.md" in capsys.readouterr().out
    after = problem.statement_path.read_text(encoding="utf-8")
    assert "| `targets_in_fp16` | NEW title | `rounded_predictions` |" in after
    assert PITFALL_TABLE.cut(after) == PITFALL_TABLE.cut(before), "the hand-written text is kept"


def test_grade_docs_is_idempotent(course_copy, capsys):
    statement = course_copy.problem("grad_accumulation").statement_path
    statement.write_text(
        PITFALL_TABLE.replace(statement.read_text(encoding="utf-8"), "stale", statement), encoding="utf-8"
    )
    assert main(["docs"]) == 0
    written = {path: path.read_text(encoding="utf-8") for path in course_copy.root.rglob("README.md")}
    capsys.readouterr()
    assert main(["docs"]) == 0
    assert capsys.readouterr().out.strip() == "every table made from the manifests is current"
    assert {path: path.read_text(encoding="utf-8") for path in written} == written
    assert main(["docs", "--check"]) == 0


def test_a_statement_without_the_table_markers_is_an_error_that_says_where(course_copy, capsys):
    statement = course_copy.problem("bf16_train_step").statement_path
    statement.write_text(PITFALL_TABLE.cut(statement.read_text(encoding="utf-8")), encoding="utf-8")
    assert main(["docs", "--check"]) == 2
    assert "problems/bf16_train_step/README.md has no <!-- pitfall table" in capsys.readouterr().err


def test_the_generated_table_does_not_count_as_the_statement_naming_a_pitfall(course_copy):
    problem = course_copy.problem("bf16_train_step")
    statement = problem.statement_path.read_text(encoding="utf-8")
    unnamed = statement.replace("`final_loss_in_fp32`", "the last mistake")
    problem.statement_path.write_text(
        PITFALL_TABLE.replace(unnamed, pitfall_table(problem), problem.statement_path), encoding="utf-8"
    )
    notes = problem.grading_path.read_text(encoding="utf-8")
    unnamed_notes = notes.replace("`final_loss_in_fp32`", "the last mistake")
    problem.grading_path.write_text(unnamed_notes, encoding="utf-8")
    findings = statement_findings(problem)
    assert [f.detail for f in findings] == ["does not state `final_loss_in_fp32`"]
    problem.grading_path.write_text(notes, encoding="utf-8")  # stated in the grading notes: enough
    assert statement_findings(problem) == []


def test_the_grading_notes_margins_are_the_record_of_grade_check(course_copy, capsys):
    from grader.authoring import margins

    problem = course_copy.problem("bf16_train_step")
    assert main(["docs", "--check"]) == 0
    margins.write(problem, "Python 0.1, jax 0.1", 3, [("variant", "jitted_step", 0.75)])
    assert main(["docs", "--check"]) == 1  # the table in GRADING.md is behind the record
    assert "problems/bf16_train_step/GRADING.md: its tables are out of date" in capsys.readouterr().out
    assert main(["docs"]) == 0 and main(["docs", "--check"]) == 0
    notes = problem.grading_path.read_text(encoding="utf-8")
    assert "Python 0.1, jax 0.1 (3 secrets," in notes and "| variant `jitted_step` | <= 0.5 |" in notes
    assert "| 0.75 |" in notes.split("variant `jitted_step`")[1].splitlines()[0]


def test_the_grading_notes_tolerance_is_the_manifests_and_the_records(course_copy, capsys):
    problem = course_copy.problem("bf16_train_step")
    manifest = problem.directory / "problem.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace("rtol = 0.03125", "rtol = 0.0625"))
    assert main(["docs", "--check"]) == 1  # the tolerance GRADING.md states is no longer the manifest's
    assert "problems/bf16_train_step/GRADING.md" in capsys.readouterr().out
    assert main(["docs"]) == 0 and main(["docs", "--check"]) == 0
    notes = problem.grading_path.read_text(encoding="utf-8")
    tolerance = notes.split("## Tolerance")[1].split("## Why")[0]
    assert "`rtol = 2^-4 = 0.0625` and `atol = 1e-09`" in tolerance
    from grader.authoring import margins

    record = margins.read(problem)
    spread = max(r["variant"]["jitted_step"] for r in record.values())
    assert f"{spread:.3g} (`jitted_step`)" in tolerance  # the accepted forms' spread is the check's


STATEMENT_LINES = 140  # read in one sitting (CONTRIBUTING: about 120), its generated rules not counted


def test_every_statement_is_short_and_in_the_one_shape(course):
    shape = [
        "## Task",
        "## Accepted forms, and look-alikes that fail",
        "## The rules, and what breaking each does",
        "## Inputs and output",
        "## Tolerance",
        "## Pitfalls",
    ]
    for problem in course.problems():
        text = problem.statement_path.read_text(encoding="utf-8")
        lines = RULES.cut(text).count("\n")
        assert lines <= STATEMENT_LINES, f"{problem.id}: the statement has {lines} lines"
        headings = [line for line in text.splitlines() if line.startswith("## ")]
        assert headings == shape, f"{problem.id}: {headings}"
        assert f"Write `{problem.signature}`" in text and "[GRADING.md](GRADING.md)" in text
        assert problem.grading_path.is_file(), f"{problem.id} has no GRADING.md"
