"""The course-infrastructure files in ci/: Gradescope's run_autograder against a fake /autograder tree,
the zip builder, and the GitHub Actions workflows' grade commands."""

from __future__ import annotations

import csv
import json
import os
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest
import yaml

from grader.command.batch import batch_parser as _batch_parser
from grader.command.grade import grade_parser as _grade_parser

ROOT = Path(__file__).resolve().parent.parent
CI = ROOT / "ci"
SCHEMA = json.loads((Path(__file__).parent / "schemas" / "gradescope_results.schema.json").read_text())
SECRET = "gradescope-test-secret"


@pytest.fixture
def autograder(toy_course, tmp_path) -> Path:
    """A stand-in for /autograder: source/ is the instructor's course with grade_secret, submission/ empty."""
    tree = tmp_path / "autograder"
    shutil.copytree(toy_course.root, tree / "source")
    (tree / "source" / "grade_secret").write_text(SECRET)
    (tree / "submission").mkdir()
    return tree


def run_autograder(tree: Path) -> tuple[subprocess.CompletedProcess, dict]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GRADE")}
    env |= {"AUTOGRADER_ROOT": str(tree), "GRADE_PYTHON": sys.executable, "GRADE_TIMEOUT": "5"}
    done = subprocess.run(
        ["bash", str(CI / "gradescope" / "run_autograder")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    results = json.loads((tree / "results" / "results.json").read_text())
    jsonschema.validate(results, SCHEMA)
    return done, results


def test_a_repository_upload_is_graded_on_hidden_cases(autograder):
    repository = autograder / "submission" / "course-main" / "problems" / "toy"
    repository.mkdir(parents=True)
    shutil.copy(autograder / "source" / "solutions" / "toy.py", repository / "stub.py")
    done, results = run_autograder(autograder)
    assert done.returncode == 0, done.stderr
    tests = {test["name"].split(":")[0]: test for test in results["tests"]}
    assert tests["toy"]["status"] == "passed" and tests["toy"]["score"] == tests["toy"]["max_score"] == 1
    assert tests["toy_max"]["status"] == "failed" and tests["toy_max"]["score"] == 0
    assert "no submission file" in tests["toy_max"]["output"]
    assert results["score"] == 1
    assert {test["visibility"] for test in results["tests"]} == {"after_due_date"}, "hidden by default"
    assert "hidden cases" in tests["toy"]["output"]
    assert SECRET not in done.stdout + json.dumps(results)


def test_loose_files_are_graded_and_pitfalls_named(autograder):
    solutions = autograder / "source" / "solutions"
    shutil.copy(solutions / "pitfalls" / "toy" / "forgot_scale.py", autograder / "submission" / "toy.py")
    shutil.copy(solutions / "toy_max.py", autograder / "submission" / "toy_max.py")
    done, results = run_autograder(autograder)
    assert done.returncode == 0, done.stderr
    tests = {test["name"].split(":")[0]: test for test in results["tests"]}
    assert tests["toy"]["status"] == "failed" and "forgot_scale" in tests["toy"]["output"]
    assert tests["toy_max"]["status"] == "passed"
    assert results["score"] == 1


def test_a_course_that_cannot_grade_still_writes_results(autograder):
    (autograder / "source" / "solutions" / "toy.py").unlink()
    shutil.copy(autograder / "source" / "solutions" / "toy_max.py", autograder / "submission" / "toy.py")
    done, results = run_autograder(autograder)
    assert done.returncode == 0
    assert results["score"] == 0 and "could not grade" in results["output"]
    assert "grade exited with status 2" in done.stdout


def test_the_zip_holds_the_scripts_and_the_course_at_its_root(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text(SECRET)
    out = tmp_path / "autograder.zip"
    done = subprocess.run(
        ["bash", str(CI / "gradescope" / "make_zip.sh"), str(secret), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    names = set(zipfile.ZipFile(out).namelist())
    tops = {name.split("/")[0] for name in names}
    assert {
        "setup.sh",
        "run_autograder",
        "grade_secret",
        "pyproject.toml",
        "problems",
        "solutions",
        "grader",
    } <= tops
    assert not [name for name in names if "__pycache__" in name]
    assert zipfile.ZipFile(out).read("grade_secret").decode() == SECRET
    usage = subprocess.run(["bash", str(CI / "gradescope" / "make_zip.sh")], capture_output=True, text=True)
    assert usage.returncode == 2 and "usage" in usage.stderr


def test_setup_script_is_valid_bash():
    for script in ("setup.sh", "run_autograder", "make_zip.sh"):
        assert subprocess.run(["bash", "-n", str(CI / "gradescope" / script)]).returncode == 0


def _grade_commands(workflow: Path) -> list[list[str]]:
    """The `grade ...` command lines of a workflow's run steps."""
    document = yaml.safe_load(workflow.read_text())
    commands = []
    for job in document["jobs"].values():
        for step in job["steps"]:
            for line in step.get("run", "").splitlines():
                if line.strip().startswith("grade "):  # a matrix value stands for shard 1
                    commands.append(shlex.split(line.strip().replace("${{ matrix.shard }}", "1"))[1:])
    return commands


@pytest.mark.parametrize("name", ["learner-practice.yml", "instructor-grading.yml"])
def test_workflows_parse_and_their_grade_commands_are_valid(name):
    workflow = CI / "github" / name
    document = yaml.safe_load(workflow.read_text())
    assert document["jobs"] and ("on" in document or True in document)  # YAML 1.1 reads `on` as True
    commands = _grade_commands(workflow)
    assert commands, "the workflow runs grade"
    for argv in commands:
        if argv[0] == "batch":
            _batch_parser().parse_args(argv[1:])
        elif argv[0] == "merge":
            assert "--out" in argv and len(argv) >= 4, argv
        else:
            _grade_parser().parse_args(argv)
    if name == "instructor-grading.yml":
        document = yaml.safe_load(workflow.read_text())
        shards = document["jobs"]["gradebook"]["strategy"]["matrix"]["shard"]
        merged = next(argv for argv in commands if argv[0] == "merge")
        assert [f"shard-{k}/gradebook.csv" for k in shards] == merged[1 : 1 + len(shards)], (
            "merge every shard"
        )
        assert all(f"/{len(shards)}" in " ".join(argv) for argv in commands if argv[0] == "batch")


def _grade(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """`grade ARGV` as a workflow step runs it, in `cwd`: the grader found on PYTHONPATH (a copy's own)."""
    return subprocess.run(
        [sys.executable, "-m", "grader", *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


def test_the_learner_workflow_grades_a_fresh_learner_copy(toy_course, tmp_path):
    """learner-practice.yml's grade step, run as written in a learner copy made by `grade export`, with the
    copy's own grader: annotations, the summary and the two report files, and a failing status for the
    untouched stubs."""
    from grader.classroom.export import export_course

    copy = tmp_path / "learner-repository"
    export_course(toy_course, copy)
    summary = tmp_path / "summary.md"
    env = {key: value for key, value in os.environ.items() if not key.startswith("GRADE")}
    env |= {"PYTHONPATH": str(copy), "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    (argv,) = _grade_commands(CI / "github" / "learner-practice.yml")
    done = _grade(argv, copy, env)
    assert done.returncode == 1, done.stderr  # the stubs are untouched
    assert "::error file=problems/toy/stub.py" in done.stdout
    assert "not implemented" in summary.read_text()
    assert json.loads((copy / "reports" / "grade.json").read_text())["problems"]
    assert "<testsuite" in (copy / "reports" / "grade.xml").read_text()


def test_the_instructor_workflow_grades_and_merges_a_roster_in_shards(toy_course, tmp_path):
    """instructor-grading.yml's batch command, run as written for each of its shards on a fresh copy of the
    course with a roster, then its merge command: one gradebook with every learner, graded on hidden
    cases."""
    course = tmp_path / "instructor"
    shutil.copytree(toy_course.root, course)
    for number in range(5):
        toy = course / "solutions" / ("toy.py" if number % 2 else "pitfalls/toy/forgot_scale.py")
        folder = course / "roster" / f"learner{number}" / "problems" / "toy"
        folder.mkdir(parents=True)
        shutil.copy(toy, folder / "stub.py")
    env = {key: value for key, value in os.environ.items() if not key.startswith("GRADE")}
    env["GRADE_SECRET"] = SECRET
    commands = _grade_commands(CI / "github" / "instructor-grading.yml")
    batch, merge = commands[0], commands[-1]
    shards = len(merge) - 3  # merge SHARD... --out FILE
    for k in range(1, shards + 1):
        argv = [arg.replace("1/", f"{k}/") if arg.startswith("1/") else arg for arg in batch]
        done = _grade(argv, course, env)
        assert done.returncode in (0, 1), done.stderr  # 1: some learner failed
        (course / "shard").rename(course / f"shard-{k}")
    done = _grade(merge, course, env)
    assert done.returncode == 0, done.stderr
    with (course / "gradebook" / "gradebook.csv").open(newline="") as handle:
        rows = {(row["learner"], row["problem"]): row for row in csv.DictReader(handle)}
    assert len(rows) == 5 * 2  # every learner, every problem, once
    for number in range(5):
        toy = rows[(f"learner{number}", "toy")]
        assert (toy["status"], toy["pitfall"]) == (("pass", "") if number % 2 else ("fail", "forgot_scale"))
