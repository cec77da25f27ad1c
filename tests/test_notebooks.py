"""The problem notebooks: made from each problem's files, shipped in the learner copy, and graded from a real
Jupyter kernel there (nbclient and ipykernel): untouched, with a correct solution, with a named pitfall."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import sys
from pathlib import Path

import nbclient
import nbformat
import numpy as np
import pytest
from conftest import PROBLEM_IDS, PROBLEMS, ROOT

from grader.classroom.export import export_course
from grader.classroom.notebooks import NOTEBOOKS_DIR, notebook_text, setup_source
from grader.command.main import main
from grader.course.hints import load_hints
from grader.course.problems import Course
from grader.errors import UsageError
from grader.notebook import installed_from
from grader.report.html import render_problem_html
from grader.report.plot import series_png
from grader.results import CaseResult, MatchedPitfall, ProblemResult, Status

KERNEL_TIMEOUT = 600


PROBLEM = "dynamic_loss_scaling"  # multi-step, with named segments (losses, scales): the plot has two panels


@pytest.fixture(scope="module")
def learner_copy(tmp_path_factory) -> Path:
    """A learner copy made by `grade export` from a course of one real problem (exporting every problem
    takes minutes here; tests/test_export.py exports the whole course and finds a notebook per problem)."""
    base = tmp_path_factory.mktemp("notebooks")
    course = base / "course"
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "grader", course / "grader", ignore=skip)
    shutil.copytree(ROOT / "problems" / PROBLEM, course / "problems" / PROBLEM, ignore=skip)
    pitfalls = Path("solutions", "pitfalls", PROBLEM)
    shutil.copytree(ROOT / pitfalls, course / pitfalls, ignore=skip)
    shutil.copy(ROOT / "solutions" / f"{PROBLEM}.py", course / "solutions")
    export_course(Course(course), base / "copy")
    return base / "copy"


def run_notebook(copy: Path, problem_id: str, stub: Path | None = None) -> dict[str, str]:
    """Executes the copy's notebook of `problem_id` in a fresh kernel, with `stub`'s source in the stub
    cell if given, as Jupyter does (the kernel starts in the notebook's folder; the copy's own grader is
    imported, as after `pip install` of the copy). Returns the grading cell's output by MIME type."""
    folder = copy / NOTEBOOKS_DIR
    notebook = nbformat.read(folder / f"{problem_id}.ipynb", as_version=4)
    if stub is not None:
        next(cell for cell in notebook.cells if cell.id == "stub").source = stub.read_text()
    env = {
        key: value for key, value in os.environ.items() if key not in ("GRADE_SECRET", "GRADE_COURSE_ROOT")
    }
    env["PYTHONPATH"] = str(copy)
    client = nbclient.NotebookClient(
        notebook, timeout=KERNEL_TIMEOUT, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    client.execute(env=env)  # a cell that raises fails the test here
    (result,) = [out for out in notebook.cells[-1].outputs if out.output_type == "execute_result"]
    assert "import grader.notebook" in notebook.cells[2].source and not notebook.cells[2].outputs
    return result.data


@pytest.mark.parametrize("problem", PROBLEMS, ids=PROBLEM_IDS)
def test_a_notebook_is_made_from_its_problems_statement_stub_and_hints(problem):
    notebook = nbformat.reads(notebook_text(problem, ".."), as_version=4)
    nbformat.validate(notebook)
    sources = {cell.id: cell.source for cell in notebook.cells}
    assert sources["statement-0"].startswith("# ")
    statement = "\n\n".join(cell.source for cell in notebook.cells if cell.id.startswith("statement-"))
    # the statement, its links leading from the notebooks' folder; the grading notes stay apart
    here = f"](../problems/{problem.id}/GRADING.md"
    text = problem.statement_path.read_text().replace("](GRADING.md", here)
    assert " ".join(statement.split()) == " ".join(text.split())
    assert f"(../problems/{problem.id}/GRADING.md)" in statement and "## Case families" not in statement
    assert sources["stub"] == problem.stub_path.read_text().strip()
    for hint in load_hints(problem):
        assert hint in sources["hints"]
    assert '"..[notebook]"' in sources["setup"]
    assert sources["grade"].endswith(f'grade_here("{problem.id}", {problem.function})')
    assert [cell.id for cell in notebook.cells][-1] == "grade"


def test_regenerating_gives_the_same_bytes(learner_copy, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "notebooks"
    assert main(["notebooks", "--out", str(out), "--install", ".."]) == 0
    first = {path.name: path.read_bytes() for path in out.iterdir()}
    assert main(["notebooks", "--out", str(out), "--install", ".."]) == 0
    assert capsys.readouterr().out.count(": unchanged") == len(PROBLEM_IDS)
    assert {path.name: path.read_bytes() for path in out.iterdir()} == first
    assert first[f"{PROBLEM}.ipynb"] == (learner_copy / NOTEBOOKS_DIR / f"{PROBLEM}.ipynb").read_bytes()


def test_an_edited_notebook_is_kept_unless_forced(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    problem_id = PROBLEM_IDS[0]
    path = tmp_path / f"{problem_id}.ipynb"
    assert main(["notebooks", problem_id, "--out", str(tmp_path)]) == 0
    path.write_text(path.read_text().replace("NotImplementedError", "ValueError"))
    assert main(["notebooks", problem_id, "--out", str(tmp_path)]) == 0
    assert "kept" in capsys.readouterr().out and "ValueError" in path.read_text()
    assert main(["notebooks", problem_id, "--out", str(tmp_path), "--force"]) == 0
    assert "ValueError" not in path.read_text()


def test_the_untouched_notebook_reports_not_implemented_with_the_hint_line(learner_copy):
    shown = run_notebook(learner_copy, PROBLEM)
    text = shown["text/plain"]
    marker = "not implemented yet (dynamic_loss_scaling: fill in train_with_dynamic_loss_scaling)"
    assert re.search(rf"ERROR case 1 \(overflow_burst\)  \d+\.\d\d s  {re.escape(marker)}", text), text
    assert f"ERROR dynamic_loss_scaling: {marker} (every case)" in text
    assert text.rstrip().endswith("Stuck? `grade hint dynamic_loss_scaling` shows hint 1 of 3.")
    assert marker in shown["text/html"] and "<img" not in shown["text/html"]


def test_a_correct_solution_pasted_into_the_stub_cell_passes(learner_copy):
    variant = ROOT / "solutions" / "variants" / PROBLEM / "flax_dense.py"
    shown = run_notebook(learner_copy, PROBLEM, variant)
    assert "PASS  dynamic_loss_scaling: all 7 cases within the tolerance" in shown["text/plain"]
    assert "FAIL" not in shown["text/plain"] and "Stuck?" not in shown["text/plain"]
    assert "<img" not in shown["text/html"]


def test_a_pitfall_pasted_in_is_named_and_its_series_plotted(learner_copy):
    pitfall = ROOT / "solutions" / "pitfalls" / PROBLEM / "never_grows.py"
    shown = run_notebook(learner_copy, PROBLEM, pitfall)
    text = shown["text/plain"]
    assert "Your outputs are those of the named pitfall 'never_grows': Scale never grows." in text
    assert (
        "FAIL  dynamic_loss_scaling: 6 of 7 cases outside the tolerance; this matches the named pitfall"
        in text
    )
    assert "Stuck? `grade hint dynamic_loss_scaling` shows hint 1 of 3." in text
    html = shown["text/html"]
    named = "Your outputs are those of the named pitfall &#x27;never_grows&#x27;: Scale never grows."
    assert f"<strong>{named}</strong>" in html
    (image,) = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert base64.b64decode(image).startswith(b"\x89PNG")


def _failed_result(message: str = "2 of 4 entries outside the tolerance", stdout: str = "") -> ProblemResult:
    """A failed two-segment result, as grade_function returns one."""
    case = CaseResult(
        index=0,
        family="growth",
        status=Status.FAIL,
        message=message,
        expected=np.array([3.0, 2.0, 4.0, 8.0], dtype=np.float32),
        got=np.array([3.0, np.nan, 4.0, 4.0], dtype=np.float32),
        max_abs_err=4.0,
        max_rel_err=0.5,
        error_ratio=512.0,
    )
    pitfall = MatchedPitfall("never_grows", "Scale never grows", "Your scale <only> goes down.")
    return ProblemResult(
        problem="demo",
        title="Demo",
        status=Status.FAIL,
        submission="<function <lambda>>",
        message="1 of 1 cases outside the tolerance",
        cases=(case,),
        pitfall=pitfall,
        rtol=1e-3,
        atol=0.0,
        segments=("losses", "scales"),
        stdout=stdout,
    )


def test_the_html_report_escapes_everything_the_learners_code_controls():
    result = _failed_result(message="<script>alert(1)</script>", stdout="<img src=x onerror=alert(2)>\n")
    html = render_problem_html(result, "practice", footer="Stuck? <b>")
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(2)&gt;" in html
    assert "&lt;function &lt;lambda&gt;&gt;" in html and "Stuck? &lt;b&gt;" in html
    assert "Your scale &lt;only&gt; goes down." in html


def test_without_matplotlib_the_report_is_complete_without_a_plot(monkeypatch):
    result = _failed_result()
    png = series_png(result)
    assert png is not None and png.startswith(b"\x89PNG")
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib... now raises ImportError
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    assert series_png(result) is None
    with_plot = render_problem_html(result, "practice", plot_png=png)
    without = render_problem_html(result, "practice", plot_png=None)
    assert "<img" in with_plot and "<img" not in without
    assert re.sub(r"<img[^>]*>", "", with_plot) == without


def test_a_single_number_output_gets_no_plot():
    result = _failed_result()
    case = result.cases[0]
    one = CaseResult(index=0, family="f", status=Status.FAIL, expected=case.expected[:1], got=case.got[3:])
    assert series_png(ProblemResult("demo", "Demo", Status.FAIL, "<function f>", cases=(one,))) is None


def test_the_setup_cell_clones_a_git_url_then_installs_the_clone():
    source = setup_source("git+https://example.org/course/learner-copy.git@fall-2025")
    compile(source, "setup", "exec")
    clone = '["git", "clone", "-q", "--depth", "1", "--branch", "fall-2025", '
    assert clone + '"https://example.org/course/learner-copy.git", "course"]' in source
    assert '"install", "-q", "./course[notebook]"]' in source
    plain = setup_source("..")
    compile(plain, "setup", "exec")
    assert '"install", "-q", "..[notebook]"]' in plain and "git" not in plain
    with pytest.raises(UsageError, match="a folder or a git"):
        setup_source("https://example.org/course.zip")


def test_the_course_is_found_where_pip_installed_it_from(tmp_path):
    folder = tmp_path / "my course"
    recorded = json.dumps({"url": folder.as_uri(), "dir_info": {}})
    assert installed_from(recorded) == folder
    assert installed_from(json.dumps({"url": "https://example.org/x.zip", "archive_info": {}})) is None
    assert installed_from("not json") is None
