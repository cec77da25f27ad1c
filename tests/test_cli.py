"""The `grade` command, in-process through `main(argv)` and once through the installed console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.command.main import main

SOLVED = """\
import numpy as np


def scaled_sum(x, scale):
    return np.array([x.sum() * scale, x.max()], dtype=np.float32)
"""


def solve_stub(root: Path) -> Path:
    stub = root / "problems" / "toy" / "stub.py"
    stub.write_text(SOLVED, encoding="utf-8")
    return stub


def test_list_shows_every_problem_with_its_status(toy_course, capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "toy_max" in out and "not started" in out and "0 of 2 passed" in out


def test_grading_the_untouched_stub_exits_1_and_says_not_implemented(toy_course, capsys):
    assert main(["toy"]) == 1
    out = capsys.readouterr().out
    assert "not implemented yet" in out and "grade hint toy" in out


def test_grading_a_solved_stub_exits_0_and_list_then_says_passed(toy_course, capsys):
    solve_stub(toy_course.root)
    assert main(["toy"]) == 0
    assert "PASS" in capsys.readouterr().out
    main(["list"])
    assert "passed" in capsys.readouterr().out.split("toy", 2)[-1]


def test_list_notices_a_file_changed_since_it_was_graded(toy_course, capsys):
    stub = solve_stub(toy_course.root)
    main(["toy"])
    stub.write_text(SOLVED + "# edited\n", encoding="utf-8")
    capsys.readouterr()
    main(["list"])
    assert "changed since last graded" in capsys.readouterr().out


def test_a_pitfall_submission_is_named_in_the_text_report(toy_course, capsys):
    pitfall = toy_course.root / "solutions" / "pitfalls" / "toy" / "forgot_scale.py"
    assert main(["toy", "--submission", str(pitfall)]) == 1
    out = capsys.readouterr().out
    assert "named pitfall 'forgot_scale'" in out and "You returned sum(x)" in out
    assert "expected" in out and "got" in out and "allowed:" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["no_such_problem"],
        ["toy", "--format", "xml"],
        ["toy", "--timeout", "-1"],
        ["toy", "--all"],
        [],
        ["toy", "--submission", "missing.py"],
        ["toy", "--root", "/nonexistent"],
        ["hint", "toy", "--level", "9"],
        ["--bogus"],
        ["toy", "--format", "text", "--format", "json"],
        ["toy", "--format", "junit=r.xml", "--format", "json=r.xml"],
        ["toy", "--format", "junit="],
        ["toy", "--gradescope-visibility", "sometimes"],
        ["batch", "no-such-roster", "--out", "g.csv"],
        ["batch", ".", "--out", "g.csv", "--jobs", "0"],
        ["export"],
    ],
    ids=[
        "unknown-id",
        "bad-format",
        "bad-timeout",
        "ids-and-all",
        "nothing",
        "missing-file",
        "bad-root",
        "bad-hint-level",
        "bad-flag",
        "two-formats-on-stdout",
        "two-formats-one-file",
        "format-file-missing",
        "bad-visibility",
        "batch-missing-roster",
        "batch-no-jobs",
        "export-no-dest",
    ],
)
def test_a_wrong_command_exits_2_with_a_message(toy_course, capsys, argv):
    assert main(argv) == 2
    assert "grade: error:" in capsys.readouterr().err


def test_unknown_id_lists_the_known_ones(toy_course, capsys):
    main(["nope"])
    assert "the problems are: toy, toy_max" in capsys.readouterr().err


def test_hints_come_one_level_at_a_time(toy_course, capsys):
    assert main(["hint", "toy"]) == 0
    first = capsys.readouterr().out
    assert "hint 1 of 2" in first and "Add the entries up" in first and "Multiply" not in first
    assert main(["hint", "toy"]) == 0
    assert "hint 2 of 2" in capsys.readouterr().out
    assert main(["hint", "toy"]) == 0
    assert "hint 2 of 2" in capsys.readouterr().out


def test_json_report_follows_the_documented_schema(toy_course, capsys):
    pitfall = toy_course.root / "solutions" / "pitfalls" / "toy" / "forgot_scale.py"
    assert main(["toy", "--submission", str(pitfall), "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["schema_version"] == 1 and document["mode"] == "practice"
    assert document["summary"] == {"total": 1, "pass": 0, "fail": 1, "error": 0}
    (problem,) = document["problems"]
    assert problem["problem"] == "toy" and problem["status"] == "fail"
    assert problem["pitfall"]["name"] == "forgot_scale"
    for case in problem["cases"]:
        assert case["status"] == "fail"
        for key in ("message", "expected", "got", "max_abs_err", "max_rel_err"):
            assert key in case
        assert len(case["expected"]) == 2 and "inputs" in case


def test_root_grades_another_learner_checkout(toy_course, tmp_path, capsys):
    learner = tmp_path / "alice"
    shutil.copytree(toy_course.root / "problems", learner / "problems")
    solve_stub(learner)
    assert main(["toy", "--root", str(learner)]) == 0
    assert str(learner) in capsys.readouterr().out


def test_console_script_runs_as_a_real_subprocess(toy_course):
    script = Path(sys.executable).with_name("grade")
    assert script.exists(), "install the project first: pip install -e .[test]"
    env = {**os.environ, "GRADE_SECRET": "subprocess-secret"}
    done = subprocess.run(
        [str(script), "toy", "--format", "json"], cwd=toy_course.root, env=env, capture_output=True, text=True
    )
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    assert document["mode"] == "hidden" and document["problems"][0]["status"] == "error"
    assert len(document["problems"][0]["cases"]) == 4


def test_one_run_writes_several_formats_with_the_same_exit_status(toy_course, capsys):
    pitfall = toy_course.root / "solutions" / "pitfalls" / "toy" / "forgot_scale.py"
    out = toy_course.root / "reports"
    argv = ["toy", "--submission", str(pitfall), "--format", "json"]
    argv += ["--format", f"junit={out / 'grade.xml'}", "--format", f"gradescope={out / 'results.json'}"]
    assert main(argv) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["problems"][0]["pitfall"]["name"] == "forgot_scale"
    assert "<testsuite" in (out / "grade.xml").read_text()
    results = json.loads((out / "results.json").read_text())
    assert results["tests"][0]["status"] == "failed" and results["score"] == 0


def test_low_memory_grades_the_same_one_process_at_a_time(toy_course, capsys):
    pitfall = toy_course.root / "solutions" / "pitfalls" / "toy" / "forgot_scale.py"
    assert main(["toy", "--submission", str(pitfall), "--format", "json"]) == 1
    side_by_side = json.loads(capsys.readouterr().out)["problems"][0]
    assert main(["toy", "--submission", str(pitfall), "--format", "json", "--low-memory"]) == 1
    one_at_a_time = json.loads(capsys.readouterr().out)["problems"][0]
    for key in ("status", "message", "pitfall", "cases"):
        if key == "cases":
            strip = [{k: v for k, v in case.items() if k != "seconds"} for case in side_by_side[key]]
            assert strip == [{k: v for k, v in case.items() if k != "seconds"} for case in one_at_a_time[key]]
        else:
            assert side_by_side[key] == one_at_a_time[key]


def test_every_subcommand_is_dispatched_and_grading_imports_none_of_their_modules():
    """`grade ID` does not import the subcommands' modules (a learner's warm loop waits for every import);
    the list main dispatches by is the registry's own."""
    from grader.command.course import COMMANDS
    from grader.command.main import SUBCOMMANDS

    assert tuple(COMMANDS) == SUBCOMMANDS
    code = "import sys; import grader.command.main; print('grader.command.course' in sys.modules)"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "False"
