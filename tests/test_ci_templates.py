"""The course-infrastructure files in ci/: Gradescope's run_autograder against a fake /autograder tree,
the zip builder, and the GitHub Actions workflows' grade commands."""

from __future__ import annotations

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
