"""The course on disk: problem folders, their metadata, and where references and pitfalls live."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from grader.errors import UsageError
from grader.settings import COURSE_ROOT_ENV


@dataclass(frozen=True)
class Tolerance:
    """Finite entries pass when |got - expected| <= atol + rtol * |expected|."""

    rtol: float
    atol: float

    def allowed(self, expected: float) -> float:
        """Returns the largest absolute error allowed at one expected value."""
        return self.atol + self.rtol * abs(expected)


@dataclass(frozen=True)
class Pitfall:
    """A named mistake of one problem, with the case families built to expose it.

    `forms` gives, for other ways of writing the same mistake (files `<name>--<form>.py`), the families
    that expose that form when they are not the pitfall's own.
    """

    name: str
    title: str
    explanation: str
    families: tuple[str, ...]
    forms: dict[str, tuple[str, ...]] = field(default_factory=dict)


FORM_SEPARATOR = "--"


def pitfall_name(label: str) -> str:
    """Returns the pitfall a pitfall file's label (`name` or `name--form`) belongs to."""
    return label.split(FORM_SEPARATOR, 1)[0]


@dataclass(frozen=True)
class Rule:
    """One rule that the statement's Task section states, and how a learner is held to it: by the course
    files that break it (`pitfall:<label>` or `mistake:<name>`, each of which must fail on every secret), or,
    where the cases cannot tell, by saying so (`not_graded`, the measured reason) with the files that break
    it and pass (`variant:<name>`, each of which must pass on every secret)."""

    name: str
    step: str  # where the Task section states it ("2.4")
    text: str
    broken_by: tuple[str, ...] = ()
    not_graded: str = ""
    accepted: tuple[str, ...] = ()
    accepted_within: float | None = None  # the error ratio its accepted files keep, where not the usual half


@dataclass(frozen=True)
class Problem:
    """One exercise, as described by its `problem.toml`."""

    id: str
    directory: Path
    title: str
    function: str
    parameters: tuple[str, ...]
    returns: str
    order: int
    tolerance: Tolerance
    pitfalls: tuple[Pitfall, ...]
    hidden_cases_per_family: int
    points: float = 1.0  # what a pass is worth in a gradebook
    inputs: tuple[str, ...] = ()  # what cases.py returns, when a harness makes the calls (else parameters)
    draft: bool = False  # written by `grade new` and not finished: left out of listings and grading
    segments: tuple[str, ...] = ()  # names of the equal parts the output concatenates (losses, scales)
    teaches: str = ""  # one line for the README's problem table (`grade docs`)
    rules: tuple[Rule, ...] = ()  # the Task section's rules, in its order (`grade check`, `grade docs`)

    @property
    def statement_path(self) -> Path:
        return self.directory / "README.md"

    @property
    def grading_path(self) -> Path:
        """How the problem is graded (families, tolerance, why each pitfall shows): public, apart from the
        statement, which a learner reads in one sitting."""
        return self.directory / "GRADING.md"

    @property
    def stub_path(self) -> Path:
        return self.directory / "stub.py"

    @property
    def untouched_marker(self) -> str:
        """The message of the NotImplementedError that the handed-out stub raises: `grade list` knows an
        untouched stub by it, and `grade check` makes sure the stub carries it."""
        return f"{self.id}: fill in {self.function}"

    @property
    def hints_path(self) -> Path:
        return self.directory / "hints.md"

    @property
    def cases_path(self) -> Path:
        return self.directory / "cases.py"

    @property
    def harness_path(self) -> Path | None:
        """The problem's harness (course code that makes the calls and checks what they wrote), if any."""
        path = self.directory / "harness.py"
        return path if path.is_file() else None

    @property
    def case_inputs(self) -> tuple[str, ...]:
        """The names of the inputs each case holds, in order: the parameters unless a harness says more."""
        return self.inputs or self.parameters

    @property
    def signature(self) -> str:
        return f"{self.function}({', '.join(self.parameters)})"

    def pitfall(self, label: str) -> Pitfall:
        """Returns the pitfall of a label: its name, or `name--form` for another form of it."""
        for pitfall in self.pitfalls:
            if pitfall.name == pitfall_name(label):
                return pitfall
        raise KeyError(label)

    def families_of(self, label: str) -> tuple[str, ...]:
        """Returns the case families built to expose one pitfall file (a pitfall or one of its forms)."""
        pitfall = self.pitfall(label)
        form = label[len(pitfall.name) + len(FORM_SEPARATOR) :] if FORM_SEPARATOR in label else ""
        return pitfall.forms.get(form, pitfall.families)

    def accepted_within(self, variant: str) -> float | None:
        """The error ratio a rule lets this correct variant keep (`accepted_within`), where it is not half."""
        label = f"variant:{variant}"
        wider = [r.accepted_within for r in self.rules if r.accepted_within and label in r.accepted]
        return max(wider, default=None)


def _within(value: object) -> float | None:
    """A rule's `accepted_within`: an error ratio between the usual half tolerance and a fail."""
    if value is None:
        return None
    if type(value) not in (int, float) or not 0.5 < value < 1:
        raise ValueError(f"accepted_within must be a number above 0.5 and below 1, not {value!r}")
    return float(value)


def _load_problem(directory: Path) -> Problem:
    meta_path = directory / "problem.toml"
    try:
        meta = tomllib.loads(meta_path.read_text(encoding="utf-8"))
        tolerance = Tolerance(rtol=float(meta["tolerance"]["rtol"]), atol=float(meta["tolerance"]["atol"]))
        pitfalls = tuple(
            Pitfall(
                name=name,
                title=entry["title"],
                explanation=" ".join(entry["explanation"].split()),
                families=tuple(entry.get("families", ())),
                forms={form: tuple(families) for form, families in entry.get("forms", {}).items()},
            )
            for name, entry in meta.get("pitfalls", {}).items()
        )
        return Problem(
            id=directory.name,
            directory=directory,
            title=meta["title"],
            function=meta["function"],
            parameters=tuple(meta["parameters"]),
            returns=meta["returns"],
            order=int(meta.get("order", 1000)),
            tolerance=tolerance,
            pitfalls=pitfalls,
            hidden_cases_per_family=int(meta.get("hidden_cases_per_family", 2)),
            points=float(meta.get("points", 1.0)),
            inputs=tuple(meta.get("inputs", ())),
            draft=bool(meta.get("draft", False)),
            segments=tuple(meta.get("segments", ())),
            teaches=str(meta.get("teaches", "")),
            rules=tuple(
                Rule(
                    name=name,
                    step=str(entry["step"]),
                    text=" ".join(entry["rule"].split()),
                    broken_by=tuple(entry.get("broken_by", ())),
                    not_graded=" ".join(entry.get("not_graded", "").split()),
                    accepted=tuple(entry.get("accepted", ())),
                    accepted_within=_within(entry.get("accepted_within")),
                )
                for name, entry in meta.get("rules", {}).items()
            ),
        )
    except (OSError, KeyError, TypeError, ValueError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{meta_path}: not a valid problem description ({exc})") from exc


@dataclass(frozen=True)
class Course:
    """A checkout holding `problems/` and, in an instructor's copy, `solutions/`."""

    root: Path

    @property
    def problems_dir(self) -> Path:
        return self.root / "problems"

    @property
    def solutions_dir(self) -> Path:
        return self.root / "solutions"

    def problem_ids(self) -> list[str]:
        return [problem.id for problem in self.problems()]

    def problems(self, drafts: bool = False) -> list[Problem]:
        """Returns every problem of the course in listing order; problems still marked `draft` (being
        written) only when `drafts` is true."""
        folders = sorted(p.parent for p in self.problems_dir.glob("*/problem.toml"))
        problems = [_load_problem(folder) for folder in folders]
        kept = [problem for problem in problems if drafts or not problem.draft]
        return sorted(kept, key=lambda p: (p.order, p.id))

    def problem(self, problem_id: str) -> Problem:
        directory = self.problems_dir / problem_id
        if "/" in problem_id or not (directory / "problem.toml").is_file():
            known = ", ".join(self.problem_ids()) or "none"
            raise UsageError(f"unknown problem {problem_id!r}; the problems are: {known}")
        return _load_problem(directory)

    def reference_path(self, problem: Problem) -> Path:
        return self.solutions_dir / f"{problem.id}.py"

    def pitfall_paths(self, problem: Problem) -> dict[str, Path]:
        """Returns the wrong submissions on disk by label: `name` for a pitfall, `name--form` for another
        way of writing the same mistake."""
        folder = self.solutions_dir / "pitfalls" / problem.id
        names = {pitfall.name for pitfall in problem.pitfalls}
        return {path.stem: path for path in sorted(folder.glob("*.py")) if pitfall_name(path.stem) in names}

    def stray_pitfall_files(self, problem: Problem) -> list[Path]:
        """Returns pitfall files whose name matches no pitfall of the problem (a typo, or a stale file)."""
        folder = self.solutions_dir / "pitfalls" / problem.id
        known = self.pitfall_paths(problem)
        return [path for path in sorted(folder.glob("*.py")) if path.stem not in known]

    def variant_paths(self, problem: Problem) -> dict[str, Path]:
        """Returns the correct variants kept for the project's own tests."""
        folder = self.solutions_dir / "variants" / problem.id
        return {path.stem: path for path in sorted(folder.glob("*.py"))}

    def mistake_paths(self, problem: Problem) -> dict[str, Path]:
        """Returns the natural mistakes that no pitfall describes, kept so that `grade check` can show each
        one fails on every secret and is never named by a pitfall that does not reproduce it."""
        folder = self.solutions_dir / "mistakes" / problem.id
        return {path.stem: path for path in sorted(folder.glob("*.py"))}


def _is_course_root(path: Path) -> bool:
    return (path / "problems").is_dir() and any((path / "problems").glob("*/problem.toml"))


def find_course(start: Path | None = None, course_root: Path | None = None) -> Course:
    """Returns the course: `course_root` (GRADE_COURSE_ROOT, from the Settings), else the nearest folder up
    from `start` with problems."""
    if course_root is not None:
        root = course_root.resolve()
        if not _is_course_root(root):
            raise UsageError(f"{COURSE_ROOT_ENV}={course_root} holds no problems/<id>/problem.toml")
        return Course(root)
    start = (start or Path.cwd()).resolve()
    for candidate in (start, *start.parents):
        if _is_course_root(candidate):
            return Course(candidate)
    package_root = Path(__file__).resolve().parent.parent.parent
    if _is_course_root(package_root):
        return Course(package_root)
    raise UsageError(
        f"no course found: neither {start} nor its parents hold problems/<id>/problem.toml "
        f"(run grade inside the course checkout, or set {COURSE_ROOT_ENV})"
    )
