"""The README's problem table is made from the problems' manifests (`grade docs`), and is current."""

from __future__ import annotations

import shutil

from grader.cli import main
from grader.docs import END, START, problem_table, update_readme
from grader.problems import Course


def test_the_readme_problem_table_is_made_from_the_manifests(course):
    readme = (course.root / "README.md").read_text(encoding="utf-8")
    assert f"{START}\n{problem_table(course)}\n{END}" in readme, "run `grade docs` to rewrite it"
    for problem in course.problems():
        assert f"| `{problem.id}` | `{problem.signature}` | {problem.teaches} |" in readme


def test_grade_docs_rewrites_a_stale_table_and_check_says_so(course, tmp_path, monkeypatch, capsys):
    copy = tmp_path / "course"
    shutil.copytree(course.root / "problems", copy / "problems")
    shutil.copy(course.root / "README.md", copy / "README.md")
    manifest = copy / "problems" / "bf16_train_step" / "problem.toml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace('teaches = "', 'teaches = "NEW: ', 1), encoding="utf-8")
    monkeypatch.setenv("GRADE_COURSE_ROOT", str(copy))
    monkeypatch.chdir(copy)
    assert main(["docs", "--check"]) == 1 and "out of date" in capsys.readouterr().out
    assert main(["docs"]) == 0
    assert "| NEW: one SGD step" in (copy / "README.md").read_text(encoding="utf-8")
    assert update_readme(Course(copy), check=True)
