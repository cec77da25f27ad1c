"""`grade export DEST`: a learner copy of the course, without solutions, that grades practice cases.

The copy holds the problems (statements, stubs, hints, case generators), the grader, `pyproject.toml`, the
README, docs/ and CONTRIBUTING, and a notebook per problem (`notebooks/<id>.ipynb`,
grader/classroom/notebooks.py). Instead of the reference and the pitfall files it holds their outputs on the
practice cases (`problems/<id>/expected.json`), so that `grade <id>` there compares with the reference and
names pitfalls."""

from __future__ import annotations

import contextlib
import importlib.metadata
import platform
import shutil
from pathlib import Path

from grader.classroom.notebooks import NOTEBOOKS_DIR, check_install, write_notebooks
from grader.course.problems import Course
from grader.errors import CourseError, UsageError
from grader.expected.prepare import practice_outputs
from grader.expected.stored import write_stored
from grader.running.limits import Limits

COPIED = ("problems", "grader", "pyproject.toml", "README.md", "docs", "CONTRIBUTING.md", "LICENSE")
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", ".grade", "expected.json")


def _versions() -> dict[str, str]:
    made_with = {"python": platform.python_version(), "machine": platform.machine()}
    for package in ("jax", "jaxlib", "numpy"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            made_with[package] = importlib.metadata.version(package)
    return made_with


def _check_destination(course: Course, dest: Path) -> None:
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageError(f"{dest} already exists and is not an empty folder")
    inside = course.root in dest.parents and dest.parts[len(course.root.parts)] in COPIED
    if dest == course.root or inside:
        raise UsageError(f"{dest} lies inside what is being copied; choose a folder outside it")


def export_course(
    course: Course, dest: Path, limits: Limits | None = None, notebook_install: str = ".."
) -> list[str]:
    """Writes the learner copy to `dest` (absent or empty) and returns lines for the user (one per problem,
    one for the notebooks). `notebook_install` is what the notebooks' set-up cell installs
    (grader/classroom/notebooks.py): by default the copy itself, the folder above its notebooks/."""
    dest = dest.resolve()
    _check_destination(course, dest)
    check_install(notebook_install)
    dest.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        source = course.root / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=SKIPPED)
        elif source.is_file():
            shutil.copy2(source, dest / name)
    for draft in (p for p in course.problems(drafts=True) if p.draft):  # not written yet: not the learners'
        shutil.rmtree(dest / "problems" / draft.id, ignore_errors=True)
    learner_copy = Course(dest)
    write_notebooks(learner_copy.problems(), dest / NOTEBOOKS_DIR, notebook_install)
    made_with = _versions()
    lines = []
    practice = practice_outputs(course, course.problems(), limits or Limits(), trace_pitfalls=True)
    for problem_id, done in practice.items():  # one trusted child computed them all
        write_stored(learner_copy.problem(problem_id), done.cases, done.outputs, made_with, done.profiles)
        lines.append(
            f"{problem_id}: {len(done.cases)} practice cases, outputs of the reference and "
            f"{len(done.outputs) - 1} pitfall files stored"
        )
    lines.append(f"{NOTEBOOKS_DIR}/: a notebook per problem; its set-up cell installs {notebook_install}")
    leaked = [path for path in dest.rglob("*") if path.name == "solutions"]
    if leaked:
        raise CourseError(f"a solutions folder ended up in the learner copy: {leaked[0]}")
    return lines
