"""A learner copy exported on one platform gives, on another, the verdicts the course gives at home.

`.ci/run` (CI's platform matrix) exports a copy on its first platform (Python 3.11, jax 0.10.x) and runs
this file on its second (Python 3.12 or 3.13, the newest jax the project allows) with GRADE_COPY_FROM
naming that copy.
The copy's own grader grades, against the outputs stored at export, every correct variant of every
problem (each must pass) and every pitfall file (each must fail, named by its own pitfall), in one
`grade batch` of checkouts.

Marked `platforms`: the README's test command deselects it (pyproject's addopts), and without
GRADE_COPY_FROM it fails and says so rather than skip.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.course.problems import Course, pitfall_name

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.platforms


def _files(course: Course) -> dict[str, list[tuple[str, Path]]]:
    """Per problem: ("variant" | pitfall label, file) for every variant and pitfall file."""
    files: dict[str, list[tuple[str, Path]]] = {}
    for problem in course.problems():
        variants = sorted((ROOT / "solutions" / "variants" / problem.id).glob("*.py"))
        pitfalls = sorted((ROOT / "solutions" / "pitfalls" / problem.id).glob("*.py"))
        files[problem.id] = [("variant", path) for path in variants] + [
            (path.stem, path) for path in pitfalls
        ]
    return files


def _roster(
    copy: Path, files: dict[str, list[tuple[str, Path]]], roster: Path
) -> dict[tuple[str, str], tuple]:
    """Checkouts of the copy, the j-th holding each problem's j-th file as its answer; returns what each
    (learner, problem) row stands for."""
    expected = {}
    for number in range(max(len(entries) for entries in files.values())):
        learner = f"files{number:02d}"
        checkout = roster / learner
        shutil.copytree(
            copy / "problems", checkout / "problems", ignore=shutil.ignore_patterns("expected.json")
        )
        for problem_id, entries in files.items():
            if number < len(entries):
                label, path = entries[number]
                shutil.copyfile(path, checkout / "problems" / problem_id / "stub.py")
                expected[(learner, problem_id)] = (label, path)
    return expected


def _named(row: dict[str, str], name: str) -> bool:
    """Whether a gradebook row names `name`: alone, or as one of pitfalls that give the same numbers and ran
    the same dtypes (named "equally", as `always_clips` and `grads_not_unscaled` are at home too)."""
    return row["pitfall"] == name or ("equally" in row["message"] and f"'{name}'" in row["message"])


def test_every_variant_passes_and_every_pitfall_is_named_in_a_copy_made_elsewhere(tmp_path):
    source = os.environ.get("GRADE_COPY_FROM")
    assert source, "set GRADE_COPY_FROM to a learner copy made by `grade export` on the other platform"
    copy = Path(source)
    made_with = json.loads((copy / "problems" / "bf16_train_step" / "expected.json").read_text())["made_with"]
    print(f"copy made with {made_with}; graded with Python {sys.version.split()[0]}")
    files = _files(Course(ROOT))
    expected = _roster(copy, files, tmp_path / "roster")
    env = {key: value for key, value in os.environ.items() if not key.startswith("GRADE_")}
    env["PYTHONPATH"] = str(copy)  # the copy's own grader, as after `pip install -e COPY`
    gradebook = tmp_path / "gradebook.csv"
    argv = [sys.executable, "-m", "grader", "batch", str(tmp_path / "roster"), "--out", str(gradebook)]
    done = subprocess.run(
        [*argv, "--jobs", "2"], cwd=copy, env=env, capture_output=True, text=True, timeout=3000
    )
    assert gradebook.is_file(), done.stdout + done.stderr
    with gradebook.open(newline="", encoding="utf-8") as handle:
        rows = {(row["learner"], row["problem"]): row for row in csv.DictReader(handle)}
    wrong = []
    for key, (label, path) in expected.items():
        row = rows.get(key)
        shown = f"{path.relative_to(ROOT)}: {row and (row['status'], row['pitfall'], row['message'][:200])}"
        if row is None:
            wrong.append(f"{shown} (no row)")
        elif label == "variant" and row["status"] != "pass":
            wrong.append(f"{shown} (a correct variant must pass)")
        elif label != "variant" and (row["status"] != "fail" or not _named(row, pitfall_name(label))):
            wrong.append(f"{shown} (must fail, named {pitfall_name(label)!r})")
    assert not wrong, f"{len(wrong)} of {len(expected)} files graded wrongly in the copy:\n" + "\n".join(
        wrong
    )
    assert len(expected) > 100  # every problem's variants and pitfall files were graded
