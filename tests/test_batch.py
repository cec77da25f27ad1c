"""`grade batch`: a roster of learner checkouts graded into a CSV gradebook and a Markdown summary."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

from grader import batch
from grader.cli import main
from grader.grading import Grader

SUBMISSIONS = Path(__file__).parent / "submissions"
CORRECT_MAX = "import numpy as np\n\n\ndef largest(x):\n    return np.array([x.max()], np.float32)\n"


def _learner(roster: Path, name: str, toy: Path | None, toy_max: str | None) -> None:
    """A learner checkout: each stub from a file or source text, or missing (None)."""
    for problem, source in (("toy", toy), ("toy_max", toy_max)):
        folder = roster / name / "problems" / problem
        folder.mkdir(parents=True)
        if isinstance(source, Path):
            shutil.copy(source, folder / "stub.py")
        elif source is not None:
            (folder / "stub.py").write_text(source)


def _roster(course_root: Path, tmp_path: Path) -> Path:
    roster = tmp_path / "roster"
    solutions = course_root / "solutions"
    _learner(roster, "alice", solutions / "toy.py", CORRECT_MAX)
    _learner(roster, "bob", solutions / "pitfalls" / "toy" / "forgot_scale.py", None)
    _learner(roster, "carol", SUBMISSIONS / "segfaults.py", "def largest(x)\n")
    _learner(roster, "dave", SUBMISSIONS / "endless_loop.py", CORRECT_MAX)
    _learner(roster, "=HYPERLINK(1)", SUBMISSIONS / "returns_nan.py", CORRECT_MAX)
    (roster / ".git").mkdir()  # not a learner
    return roster


def test_batch_grades_every_learner_and_problem_into_csv_and_summary(toy_course, tmp_path):
    roster = _roster(toy_course.root, tmp_path)
    out = tmp_path / "out" / "gradebook.csv"
    argv = [str(Path(sys.executable).with_name("grade")), "batch", str(roster), "--out", str(out)]
    argv += ["--jobs", "2", "--timeout", "2"]
    done = subprocess.run(argv, cwd=toy_course.root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    with out.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert set(batch.COLUMNS) <= set(rows[0])
    verdicts = {(row["learner"], row["problem"]): row["status"] for row in rows}
    assert verdicts == {
        ("'=HYPERLINK(1)", "toy"): "fail",
        ("'=HYPERLINK(1)", "toy_max"): "pass",
        ("alice", "toy"): "pass",
        ("alice", "toy_max"): "pass",
        ("bob", "toy"): "fail",
        ("bob", "toy_max"): "missing",
        ("carol", "toy"): "error",
        ("carol", "toy_max"): "error",
        ("dave", "toy"): "error",
        ("dave", "toy_max"): "pass",
    }
    scores = {
        (row["learner"], row["problem"]): (float(row["score"]), float(row["max_score"])) for row in rows
    }
    assert scores[("alice", "toy")] == (1.0, 1.0) and scores[("bob", "toy")] == (0.0, 1.0)
    bob = next(row for row in rows if row["learner"] == "bob" and row["problem"] == "toy")
    assert bob["pitfall"] == "forgot_scale"
    assert "[10/10]" in done.stderr, "progress is shown"
    summary = out.with_suffix(".md").read_text()
    assert "| toy | 1 | 2 | 2 | 0 | 20% | `forgot_scale` (1) |" in summary
    assert "| toy_max | 3 | 0 | 1 | 1 | 60% | none |" in summary
    assert "| alice | 2 | 2 |" in summary


def test_a_grader_failure_on_one_row_never_stops_the_batch(toy_course, tmp_path, monkeypatch, capsys):
    roster = _roster(toy_course.root, tmp_path)
    original = Grader.grade_files

    def flaky(self, items, on_result=None):
        if any("carol" in str(path) for _, path in items):
            raise RuntimeError("disk on fire")
        return original(self, items, on_result)

    monkeypatch.setattr(Grader, "grade_files", flaky)
    out = tmp_path / "gradebook.csv"
    assert main(["batch", str(roster), "--out", str(out), "--timeout", "2"]) == 2
    rows = list(csv.DictReader(out.open(newline="")))
    assert len(rows) == 10
    carol = [row for row in rows if row["learner"] == "carol"]
    assert {row["status"] for row in carol} == {"grader_error"}
    assert "disk on fire" in carol[0]["message"]
    assert {row["status"] for row in rows if row["learner"] == "alice"} == {"pass"}
    assert "could not be graded by the course" in capsys.readouterr().err


def test_a_roster_without_learners_is_a_usage_error(toy_course, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["batch", str(tmp_path / "empty"), "--out", str(tmp_path / "g.csv")]) == 2
    assert "no learner folders" in capsys.readouterr().err
    assert not (tmp_path / "g.csv").exists()


def _gradebook(path: Path) -> list[dict[str, str]]:
    """A gradebook's rows without the timings, which differ from run to run."""
    with path.open(newline="") as handle:
        return [{k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(handle)]


def test_sharding_then_merging_gives_the_gradebook_of_one_batch(toy_course, tmp_path, capsys):
    roster = tmp_path / "roster"
    solutions = toy_course.root / "solutions"
    for number, toy in enumerate(
        [solutions / "toy.py", solutions / "pitfalls" / "toy" / "forgot_scale.py"] * 3
    ):
        _learner(roster, f"learner{number}", toy, CORRECT_MAX if number % 2 else None)
    whole = tmp_path / "whole" / "gradebook.csv"
    assert main(["batch", str(roster), "--out", str(whole), "--timeout", "10"]) == 0
    shards = [tmp_path / f"shard{k}" / "gradebook.csv" for k in (1, 2, 3)]
    for k, out in enumerate(shards, 1):
        assert main(["batch", str(roster), "--out", str(out), "--shard", f"{k}/3", "--timeout", "10"]) == 0
    sizes = [len(_gradebook(out)) for out in shards]
    assert sizes == [4, 4, 4], "six learners, two problems, three shards of two learners each"
    merged = tmp_path / "merged.csv"
    assert main(["merge", *map(str, shards), "--out", str(merged)]) == 0
    assert _gradebook(merged) == _gradebook(whole)
    assert merged.with_suffix(".md").read_text() == whole.with_suffix(".md").read_text()


def test_merge_refuses_missing_overlapping_and_mismatched_shards(toy_course, tmp_path, capsys):
    roster = tmp_path / "roster"
    for number in range(3):
        _learner(roster, f"learner{number}", toy_course.root / "solutions" / "toy.py", CORRECT_MAX)
    outs = {}
    for shard in ("1/2", "2/2", "1/3"):
        outs[shard] = tmp_path / shard.replace("/", "of") / "gradebook.csv"
        assert (
            main(["batch", str(roster), "--out", str(outs[shard]), "--shard", shard, "--timeout", "10"]) == 0
        )
    capsys.readouterr()
    merged = str(tmp_path / "merged.csv")
    assert main(["merge", str(outs["1/2"]), "--out", merged]) == 2
    assert "missing shard(s) 2/2" in capsys.readouterr().err
    assert main(["merge", str(outs["1/2"]), str(outs["1/2"]), str(outs["2/2"]), "--out", merged]) == 2
    assert "shard 1/2 given twice" in capsys.readouterr().err
    assert main(["merge", str(outs["1/2"]), str(outs["1/3"]), "--out", merged]) == 2
    assert "is a shard of" in capsys.readouterr().err
    assert main(["batch", str(roster), "--out", merged, "--shard", "3/2"]) == 2
    assert "K must be between 1 and N" in capsys.readouterr().err
    assert not Path(merged).exists(), "a refused merge writes nothing"
