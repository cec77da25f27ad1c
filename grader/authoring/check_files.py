"""The checks of a problem's files that need no run: every file present and without TODOs, a file per
pitfall, enough variants, natural mistakes and hints, the function's signature everywhere, and a statement
that names the signature, every pitfall and every case family. Part of `grade check`
(grader/authoring/check.py)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from grader.authoring.discrimination import table_files
from grader.authoring.docs import PITFALL_TABLE
from grader.course.cases import load_families
from grader.course.hints import load_hints
from grader.course.problems import Course, Problem
from grader.expected.trusted import REFERENCE

TODO_MARKER = "TODO(grade new)"  # what `grade new` leaves where the author has work to do
MIN_VARIANTS = 3
MIN_MISTAKES = 8  # natural mistakes no pitfall describes, to measure that naming is never wrong
MIN_HINTS = 2


class Verdict(StrEnum):
    OK = "ok"
    FAIL = "FAIL"
    INCOMPLETE = "incomplete"


@dataclass(frozen=True)
class Finding:
    """One line of the check: what was checked, the verdict, and what was measured or why it fell short."""

    kind: str  # files | stub | reference | pitfall | variant | mistake
    name: str
    verdict: Verdict
    detail: str
    ratio: float | None = None  # a pitfall's smallest error ratio on its families, a variant's largest


def _shown(course: Course, path: Path) -> str:
    """A path as an author reads it: relative to the course."""
    return str(path.relative_to(course.root)) if course.root in path.parents else str(path)


def _signature(path: Path, function: str) -> list[str] | None:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            return [arg.arg for arg in node.args.args]
    return None


def _todo(path: Path) -> bool:
    return path.is_file() and TODO_MARKER in path.read_text(encoding="utf-8", errors="replace")


def file_findings(course: Course, problem: Problem) -> list[Finding]:
    """What can be checked without running anything: files present, finished, and consistent."""
    found: list[Finding] = []

    def add(name: str, verdict: Verdict, detail: str) -> None:
        found.append(Finding("files", name, verdict, detail))

    if problem.draft:
        add("problem.toml", Verdict.INCOMPLETE, "draft = true: remove it when the problem is done")
    reference = course.reference_path(problem)
    owned = {
        "problem.toml": problem.directory / "problem.toml",
        "README.md": problem.statement_path,
        "GRADING.md": problem.grading_path,
        "stub.py": problem.stub_path,
        "hints.md": problem.hints_path,
        "cases.py": problem.cases_path,
        "reference": reference,
        **{f"pitfall {label}": path for label, path in course.pitfall_paths(problem).items()},
        **{f"variant {name}": path for name, path in course.variant_paths(problem).items()},
        **{f"mistake {name}": path for name, path in course.mistake_paths(problem).items()},
    }
    if problem.harness_path:
        owned["harness.py"] = problem.harness_path
    for name, path in owned.items():
        if not path.is_file():
            add(name, Verdict.INCOMPLETE, f"missing: {_shown(course, path)}")
        elif _todo(path):
            add(name, Verdict.INCOMPLETE, f"{TODO_MARKER} left in {_shown(course, path)}")
    missing = [p.name for p in problem.pitfalls if p.name not in course.pitfall_paths(problem)]
    if missing:
        add("pitfall files", Verdict.INCOMPLETE, f"no file for {', '.join(missing)}")
    for stray in course.stray_pitfall_files(problem):
        add("pitfall files", Verdict.FAIL, f"{stray.name} names no pitfall of problem.toml")
    if len(course.variant_paths(problem)) < MIN_VARIANTS:
        add("variants", Verdict.INCOMPLETE, f"{len(course.variant_paths(problem))} of {MIN_VARIANTS} needed")
    if len(course.mistake_paths(problem)) < MIN_MISTAKES:
        detail = (
            f"{len(course.mistake_paths(problem))} of {MIN_MISTAKES} natural mistakes in solutions/mistakes/"
        )
        add("mistakes", Verdict.INCOMPLETE, detail)
    for name, path in owned.items():
        defines = name not in ("cases.py", "harness.py") and path.suffix == ".py" and path.is_file()
        if defines and _signature(path, problem.function) != list(problem.parameters):
            add(name, Verdict.FAIL, f"{path.name} does not define {problem.signature}")
    stub = problem.stub_path
    if (
        stub.is_file()
        and not _todo(stub)
        and problem.untouched_marker not in stub.read_text(encoding="utf-8")
    ):
        add(
            "stub.py",
            Verdict.FAIL,
            f'must raise NotImplementedError("{problem.untouched_marker}") until filled in',
        )
    if not problem.teaches:
        add("problem.toml", Verdict.INCOMPLETE, "no `teaches` line for the README's problem table")
    found += statement_findings(problem)
    return found


def statement_findings(problem: Problem) -> list[Finding]:
    found = []
    try:
        # What the author wrote, in the statement and the grading notes: the pitfall table that `grade docs`
        # makes names every pitfall anyway.
        statement = PITFALL_TABLE.cut(problem.statement_path.read_text(encoding="utf-8"))
        if problem.grading_path.is_file():
            statement += "\n" + problem.grading_path.read_text(encoding="utf-8")
        families = list(load_families(problem))
        hints = len(load_hints(problem))
    except Exception as exc:  # cases.py is code being written: anything may go wrong in it
        return [Finding("files", "cases.py", Verdict.FAIL, f"cannot be read: {exc}")]
    unnamed = [f"`{p.name}`" for p in problem.pitfalls if f"`{p.name}`" not in statement]
    unnamed += [f"`{family}`" for family in families if f"`{family}`" not in statement]
    if problem.signature not in statement:
        unnamed.insert(0, problem.signature)
    if unnamed:
        found.append(Finding("files", "README.md", Verdict.FAIL, f"does not state {', '.join(unnamed)}"))
    for pitfall in problem.pitfalls:
        unknown = set(pitfall.families) - set(families)
        if unknown:
            found.append(
                Finding("files", "problem.toml", Verdict.FAIL, f"{pitfall.name}: no family {unknown}")
            )
        if not pitfall.families:
            section = statement.split(f"`{pitfall.name}`", 1)[-1][:1500].lower()
            if "cannot" not in section and "not visible" not in section:
                detail = (
                    f"{pitfall.name} has no families: its statement section must say the cases cannot show it"
                )
                found.append(Finding("files", "README.md", Verdict.FAIL, detail))
    if hints < MIN_HINTS:
        found.append(Finding("files", "hints.md", Verdict.INCOMPLETE, f"{hints} of {MIN_HINTS} hints"))
    return found


def ready_files(course: Course, problem: Problem, findings: list[Finding]) -> dict[str, Path]:
    """The files that can run: present, finished, and with the right signature."""
    blocked = {f.name for f in findings if f.verdict is not Verdict.OK}
    files = {}
    for label, path in table_files(course, problem).items():
        name = "reference" if label == REFERENCE else label.replace(":", " ", 1)
        if name not in blocked and path.is_file():
            files[label] = path
    return files
