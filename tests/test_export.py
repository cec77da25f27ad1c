"""`grade export`: a learner copy without solutions that grades practice cases from stored outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PROBLEM_IDS, ROOT
from markdown_links import broken_links

from grader.classroom.export import export_course
from grader.command.main import main
from grader.course.problems import Course
from grader.errors import CourseError, UsageError
from grader.grading.grader import Grader
from grader.results import Status


@pytest.fixture
def learner_copy(toy_course, tmp_path) -> Course:
    export_course(toy_course, tmp_path / "learner")
    return Course(tmp_path / "learner")


def _code_lines(path: Path) -> set[str]:
    """The lines of a file that carry its logic (return statements)."""
    return {line.strip() for line in path.read_text().splitlines() if line.strip().startswith("return")}


def test_the_copy_has_no_solutions_and_no_pitfall_code(toy_course, learner_copy):
    assert not (learner_copy.root / "solutions").exists()
    secret_lines = set()
    for path in (toy_course.root / "solutions").rglob("*.py"):
        secret_lines |= _code_lines(path)
    assert secret_lines, "the search has something to look for"
    for path in learner_copy.root.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert not [line for line in secret_lines if line in text], f"solution code in {path}"


def test_the_copy_grades_like_the_instructors_copy_on_practice_cases(toy_course, learner_copy):
    pitfalls = toy_course.root / "solutions" / "pitfalls" / "toy"
    for submission in (toy_course.root / "solutions" / "toy.py", *sorted(pitfalls.glob("*.py"))):
        instructor = Grader(toy_course).grade_file(toy_course.problem("toy"), submission)
        learner = Grader(learner_copy).grade_file(learner_copy.problem("toy"), submission)
        assert learner.status is instructor.status, submission.name
        assert learner.pitfall == instructor.pitfall, submission.name
        for mine, theirs in zip(learner.cases, instructor.cases, strict=True):
            assert (mine.expected is None) == (theirs.expected is None)
            if mine.expected is not None:
                assert mine.expected.tobytes() == theirs.expected.tobytes()
    named = Grader(learner_copy).grade_file(learner_copy.problem("toy"), pitfalls / "forgot_scale.py")
    assert named.status is Status.FAIL and named.pitfall.name == "forgot_scale"


def test_hidden_mode_in_the_copy_says_it_needs_the_instructors_copy(learner_copy, monkeypatch, capsys):
    monkeypatch.chdir(learner_copy.root)
    monkeypatch.setenv("GRADE_SECRET", "some-secret")
    assert main(["toy"]) == 2
    assert "hidden cases need the instructor's copy" in capsys.readouterr().err


def test_changed_cases_are_caught_not_graded_against_stale_outputs(learner_copy):
    cases = learner_copy.root / "problems" / "toy" / "cases.py"
    cases.write_text(cases.read_text().replace("rng.normal(size=4)", "(rng.normal(size=4) + 1)"))
    solution = ROOT / "tests" / "toy_course" / "solutions" / "toy.py"
    with pytest.raises(CourseError, match="made for other inputs"):
        Grader(learner_copy).grade_file(learner_copy.problem("toy"), solution)


def test_export_refuses_a_folder_that_is_not_empty(toy_course, tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="not an empty folder"):
        export_course(toy_course, tmp_path / "taken")
    assert (tmp_path / "taken" / "notes.txt").read_text() == "mine"


@pytest.mark.course
def test_the_real_course_exports_and_its_copy_grades_with_its_own_grader(tmp_path, checks):
    """The whole course: a `course` test, after the session's check (`checks`), whose practice outputs of
    every pitfall file the export reads from the session's store instead of computing them again."""
    dest = tmp_path / "course-copy"
    env = {
        key: value for key, value in os.environ.items() if key not in ("GRADE_SECRET", "GRADE_COURSE_ROOT")
    }
    exported = subprocess.run(
        [sys.executable, "-m", "grader", "export", str(dest)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert exported.returncode == 0, exported.stderr
    assert {p.name for p in dest.iterdir()} == {
        "problems",
        "grader",
        "notebooks",
        "pyproject.toml",
        "README.md",
        "docs",
        "CONTRIBUTING.md",
    }
    assert broken_links(dest) == []  # the front page, docs/ and the statements link only what the copy holds
    assert sorted(path.stem for path in (dest / "notebooks").glob("*.ipynb")) == sorted(PROBLEM_IDS)
    # As after `pip install -e DEST`: the copy's own grader package, run from the copy.
    env["PYTHONPATH"] = str(dest)
    problem = "bf16_train_step"
    variant = next((ROOT / "solutions" / "variants" / problem).glob("*.py"))
    pitfall = ROOT / "solutions" / "pitfalls" / problem / "final_loss_in_fp32.py"
    code = "import grader, sys; from grader.command.main import main; "
    code += "assert grader.__file__.startswith(sys.argv[1]); "
    code += "sys.exit(main(sys.argv[2:]))"

    def grade(*argv: str) -> subprocess.CompletedProcess:
        argv = [sys.executable, "-c", code, str(dest), *argv]
        return subprocess.run(argv, cwd=dest, env=env, capture_output=True, text=True, timeout=600)

    passed = grade(problem, "--submission", str(variant))
    assert passed.returncode == 0, passed.stdout + passed.stderr
    failed = grade(problem, "--submission", str(pitfall))
    assert failed.returncode == 1 and "named pitfall 'final_loss_in_fp32'" in failed.stdout
    # Pitfalls that give the same numbers are told apart by the dtypes their files ran, which the export
    # stored (summaries only): bf16_master_copy and params_left_fp32 agree on every practice case.
    tied = grade(problem, "--submission", str(pitfall.with_name("bf16_master_copy.py")))
    assert "named pitfall 'bf16_master_copy'" in tied.stdout and "equally" not in tied.stdout, tied.stdout
    document = json.loads((dest / "problems" / problem / "expected.json").read_text())
    assert {"bf16_master_copy", "params_left_fp32"} <= set(document["pitfall_profiles"]["summaries"])
    # The reference's precision profile travels as a summary, without a line of the solution, and the
    # copy compares a failed answer's dtypes with it.
    stored = json.loads((dest / "problems" / problem / "expected.json").read_text())["reference_profile"]
    assert stored["summary"]["matmul"] and '"line"' not in json.dumps(stored)
    assert "Where your dtypes differ from the reference's" in failed.stdout
    assert f"at {pitfall.name}:" in failed.stdout
