"""The parts of the documents made from the problems' manifests (`problem.toml`), each kept between two marker
lines and rewritten by `grade docs`: the course README's problem table, and in each problem's statement the
table of its named pitfalls and the case families built to show them, and the list of the rules its Task
section states with what breaking each does; in each problem's GRADING.md the
tolerance with the measured spread of the accepted forms, and the measured margins. The tests check that
they match."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grader.authoring.margins import margins_table, tolerance_summary
from grader.course.cases import load_families
from grader.course.problems import Course, Problem, pitfall_name
from grader.errors import CourseError


@dataclass(frozen=True)
class Markers:
    """The two lines that enclose a generated part of a document."""

    start: str
    end: str

    def replace(self, text: str, content: str, where: Path) -> str:
        """`text` with what lies between the markers replaced by `content`."""
        if self.start not in text or self.end not in text:
            raise CourseError(f"{where} has no {self.start} ... {self.end} lines to write the table between")
        head, rest = text.split(self.start, 1)
        _, tail = rest.split(self.end, 1)
        return f"{head}{self.start}\n{content}\n{self.end}{tail}"

    def cut(self, text: str) -> str:
        """`text` without the generated part: what its author wrote by hand."""
        if self.start not in text or self.end not in text:
            return text
        head, rest = text.split(self.start, 1)
        return head + rest.split(self.end, 1)[1]


PROBLEM_TABLE = Markers(
    "<!-- problem table: made by `grade docs` from each problems/<id>/problem.toml; do not edit by hand -->",
    "<!-- end of problem table -->",
)
PITFALL_TABLE = Markers(
    "<!-- pitfall table: made by `grade docs` from problem.toml; do not edit by hand -->",
    "<!-- end of pitfall table -->",
)

RULES = Markers(
    "<!-- rules: made by `grade docs` from problem.toml's [rules]; do not edit by hand -->",
    "<!-- end of rules -->",
)

MARGINS = Markers(
    "<!-- margins: made by `grade docs` from margins.toml (grade check --record); do not edit by hand -->",
    "<!-- end of margins -->",
)

TOLERANCE = Markers(
    "<!-- tolerance: made by `grade docs` from problem.toml and margins.toml; do not edit by hand -->",
    "<!-- end of tolerance -->",
)


def problem_table(course: Course) -> str:
    """The README's problem table: id, the function to write, and the manifest's `teaches` line."""
    rows = ["| id | what you write | what it teaches |", "|---|---|---|"]
    rows += [f"| `{p.id}` | `{p.signature}` | {p.teaches} |" for p in course.problems()]
    return "\n".join(rows)


def _families(names: tuple[str, ...], every: list[str]) -> str:
    """Case families as a statement lists them: `every family` when they are all of the problem's."""
    if len(names) > 1 and set(names) == set(every):
        return "every family"
    return ", ".join(f"`{name}`" for name in names)


def pitfall_table(problem: Problem) -> str:
    """A statement's pitfall table: each named pitfall in the manifest's order, its title, the case families
    built to show it, and its other named forms with the families that show each of them."""
    every = list(load_families(problem))
    rows = ["| pitfall | the mistake | case families built to show it |", "|---|---|---|"]
    for pitfall in problem.pitfalls:
        shown = _families(pitfall.families, every) or "none: the cases cannot show it"
        for form, families in pitfall.forms.items():
            shown += f"; its form `{form}`: {_families(families, every)}"
        rows.append(f"| `{pitfall.name}` | {pitfall.title} | {shown} |")
    return "\n".join(rows)


def rules_list(problem: Problem) -> str:
    """The statement's list of its rules, from the manifest: what breaking each one does."""
    rows = ["| step | the rule | a file that breaks it |", "|---|---|---|"]
    for rule in problem.rules:
        if rule.not_graded:
            outcome = f"passes: not graded. {rule.not_graded}"
        else:
            pitfalls = [label.split(":", 1)[1] for label in rule.broken_by if label.startswith("pitfall:")]
            named = sorted({pitfall_name(label) for label in pitfalls})
            outcome = "fails" + (f" (pitfall {', '.join(f'`{name}`' for name in named)})" if named else "")
        rows.append(f"| {rule.step} | {rule.text} | {outcome} |")
    return "\n".join(rows)


def generated(course: Course) -> dict[Path, str]:
    """Every document with generated parts, by path, as `grade docs` would write it (a course without a
    README has no problem table to keep)."""
    readme = course.root / "README.md"
    documents = {}
    if readme.is_file():
        text = readme.read_text(encoding="utf-8")
        documents[readme] = PROBLEM_TABLE.replace(text, problem_table(course), readme)
    for problem in course.problems():
        path = problem.statement_path
        text = path.read_text(encoding="utf-8")
        text = PITFALL_TABLE.replace(text, pitfall_table(problem), path)
        documents[path] = RULES.replace(text, rules_list(problem), path) if problem.rules else text
        notes = problem.grading_path
        if notes.is_file():
            text = MARGINS.replace(notes.read_text(encoding="utf-8"), margins_table(problem), notes)
            documents[notes] = TOLERANCE.replace(text, tolerance_summary(problem), notes)
    return documents


def update_docs(course: Course, check: bool = False) -> list[Path]:
    """Returns the documents whose generated parts were out of date; unless `check`, rewrites them."""
    documents = generated(course)
    stale = [path for path, text in documents.items() if path.read_text(encoding="utf-8") != text]
    if not check:
        for path in stale:
            path.write_text(documents[path], encoding="utf-8")
    return stale
