"""The discrimination table (DESIGN section 4): how far each pitfall lands from the reference, and how close
each correct variant stays, in units of the tolerance.

`python -m grader.authoring.discrimination [ID...] [--secrets N]` prints it for the hidden case families.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from grader.course.cases import Case, make_cases
from grader.course.problems import Course, Problem, find_course
from grader.errors import CourseError
from grader.expected.output_cache import OutputStore
from grader.expected.trusted import (
    REFERENCE,
    Outputs,
    Rejection,
    TrustedOutputs,
    TrustedRequest,
    arrays,
    reference_outputs_or_raise,
)
from grader.grading.compare import compare_outputs
from grader.protocol.payloads import Returned
from grader.running.limits import Limits, children_that_fit
from grader.settings import Settings

MIN_CHILDREN = 2  # trusted children computing the tables side by side, on any machine
MAX_CHILDREN = 8  # the most that one check starts unless told (`grade check --jobs N`)
PITFALL_AIM = 10.0  # smallest error ratio of a pitfall on its families
VARIANT_AIM = 0.5  # largest error ratio of a correct variant
AIMS = {"pitfall": f">= {PITFALL_AIM:g}", "variant": f"<= {VARIANT_AIM:g}", "mistake": "> 1"}  # as printed


def variant_aim(problem: Problem, name: str) -> float:
    """The largest error ratio a correct variant may reach: half the tolerance, or what its rule states."""
    return problem.accepted_within(name) or VARIANT_AIM


def aim_of(problem: Problem, kind: str, name: str) -> str:
    """The aim one file must meet, as printed: its kind's, or a wider one its rule states for a variant."""
    return f"<= {variant_aim(problem, name):g}" if kind == "variant" else AIMS.get(kind, "")


@dataclass(frozen=True)
class Row:
    """One pitfall or variant: its error ratio on every case, and the families it is meant to be judged on."""

    kind: str  # "pitfall", "variant" or "mistake" (a natural mistake no pitfall describes)
    name: str
    ratios: dict[int, float]  # case index -> error / allowed error (inf where the harness rejected it)
    families: tuple[str, ...]
    failure: str = ""  # why the file produced no outputs
    rejected: dict[int, str] = field(default_factory=dict)  # case index -> pitfall the harness named
    outputs: dict[int, np.ndarray] = field(default_factory=dict, repr=False)  # the values it returned

    def worst(self, cases: list[Case]) -> float:
        """Returns the largest ratio over the targeted cases of a variant, the smallest of anything else."""
        targeted = [
            self.ratios[c.index] for c in cases if c.family in self.families and c.index in self.ratios
        ]
        if not targeted:
            return math.nan
        return max(targeted) if self.kind == "variant" else min(targeted)


@dataclass(frozen=True)
class Table:
    """A problem's discrimination table over hidden cases, with the reference outputs it was measured
    against; `reference_failure` says why there are no rows when the reference itself failed."""

    problem: Problem
    cases: list[Case]
    rows: list[Row]
    expected: dict[int, np.ndarray] = field(default_factory=dict, repr=False)
    reference_failure: str = ""

    def render(self) -> str:
        if self.reference_failure:
            return f"{self.problem.id}: no table: {self.reference_failure}"
        families = list(dict.fromkeys(case.family for case in self.cases))
        width = max(len(row.name) for row in self.rows) if self.rows else 10
        head = f"{self.problem.id}: error / tolerance over {len(self.cases)} cases"
        lines = [head, f"  {'':8} {'':{width}}  {'aim':>7}  {'worst':>9}  " + "  ".join(families)]
        for row in self.rows:
            per_family = []
            for family in families:
                values = [
                    row.ratios[c.index] for c in self.cases if c.family == family and c.index in row.ratios
                ]
                per_family.append(f"{min(values):.3g}..{max(values):.3g}" if values else "-")
            aim = aim_of(self.problem, row.kind, row.name)
            if row.kind == "pitfall" and not row.families:
                aim = "unseen"
            lines.append(
                f"  {row.kind:8} {row.name:{width}}  {aim:>7}  {row.worst(self.cases):9.3g}  "
                + "  ".join(per_family)
            )
            if row.failure:
                lines.append(f"  {'':8} {'':{width}}  no outputs: {row.failure.splitlines()[0]}")
        return "\n".join(lines)


def hidden_cases(problem: Problem, secrets: Sequence[str | None]) -> list[Case]:
    """Returns the hidden cases of each secret (the practice cases for None), renumbered into one list."""
    return [case for block in case_blocks(problem, secrets).values() for case in block]


def case_blocks(problem: Problem, secrets: Sequence[str | None]) -> dict[str, list[Case]]:
    """Returns the cases of each secret, keyed "practice" or by the secret's repr, numbered one after
    another across the blocks."""
    blocks: dict[str, list[Case]] = {}
    count = 0
    for secret in secrets:
        block = []
        for case in make_cases(problem, secret=secret):
            block.append(Case(index=count, family=case.family, seed=case.seed, inputs=case.inputs))
            count += 1
        blocks["practice" if secret is None else repr(secret)] = block
    return blocks


def table_files(course: Course, problem: Problem) -> dict[str, Path]:
    """Returns the files a table is made of, by label: the reference, `pitfall:<label>`, `variant:<name>`,
    `mistake:<name>`."""
    paths = {REFERENCE: course.reference_path(problem)}
    paths |= {f"pitfall:{name}": path for name, path in course.pitfall_paths(problem).items()}
    paths |= {f"variant:{name}": path for name, path in course.variant_paths(problem).items()}
    paths |= {f"mistake:{name}": path for name, path in course.mistake_paths(problem).items()}
    return paths


def checking_limits(settings: Settings) -> Limits:
    """The limits under which the course's own files are measured: each in the sandbox a learner's file
    gets, with time to spare."""
    return Limits(timeout=600, settings=settings, landlock_course=True)


def discrimination_tables(
    problems: Sequence[Problem],
    files: dict[str, dict[str, Path]],
    secrets: Sequence[str | None],
    limits: Limits,
) -> dict[str, Table]:
    """Runs each problem's files (`files[problem.id]`, labelled as `table_files` does) on the hidden cases
    of the given secrets (None: the practice cases), every problem in the same children under `limits`,
    and returns each problem's table."""
    return PendingTables(problems, files, secrets, limits).start().tables()


class PendingTables:
    """The discrimination tables of several problems, computed in the background once `start()` is called
    (in `children` trusted children that share the work, by default one per core: see `_shares`);
    `tables()` waits for them."""

    def __init__(
        self,
        problems: Sequence[Problem],
        files: dict[str, dict[str, Path]],
        secrets: Sequence[str | None],
        limits: Limits,
        store: OutputStore | None = None,
        children: int | None = None,
    ) -> None:
        """With a `store`, outputs found there are not computed again, and those computed are kept there:
        the check's secrets are public names, so its hidden cases are as public as the practice ones."""
        self.problems, self.files = list(problems), files
        self.cases = {problem.id: hidden_cases(problem, secrets) for problem in problems}
        children = children or children_that_fit(limits, MIN_CHILDREN, MAX_CHILDREN)
        shares = _shares(self.problems, files, self.cases, children)
        self.runs = [TrustedOutputs(requests, limits, store) for requests in shares if requests]

    def start(self) -> PendingTables:
        for run in self.runs:
            run.start()
        return self

    def tables(self) -> dict[str, Table]:
        tables = {}
        for problem in self.problems:
            merged = _merged([run.result(problem.id) for run in self.runs if problem.id in run.requests])
            tables[problem.id] = _table(problem, self.cases[problem.id], self.files[problem.id], merged)
        return tables


def _shares(
    problems: Sequence[Problem],
    files: dict[str, dict[str, Path]],
    cases: dict[str, list[Case]],
    children: int,
) -> list[list[TrustedRequest]]:
    """What each of the `children` computes: every file of every problem, on its share of each problem's
    cases (every n-th case), so that a file that costs minutes (a natural mistake that broadcasts to N x N)
    costs each child its share of them and every core stays busy to the end. Even children go through the
    problems and their files in order, odd ones from the last: a program that several compile (a file jitted
    once per family of shapes) is compiled by the first to reach it, and read from the course's compilation
    cache by the others."""
    shares: list[list[TrustedRequest]] = []
    for child in range(children):
        forward = child % 2 == 0
        requests = []
        for problem in problems if forward else reversed(problems):
            mine = cases[problem.id][child::children]
            paths = files[problem.id] if forward else dict(reversed(files[problem.id].items()))
            if mine and paths:
                requests.append(TrustedRequest(problem, paths, mine))
        shares.append(requests)
    return shares


def _merged(results: list[dict[str, Outputs | str]]) -> dict[str, Outputs | str]:
    """One file's outputs from every child's share of the cases; the first reason a share failed, if any."""
    merged: dict[str, Outputs | str] = {}
    for result in results:
        for label, outputs in result.items():
            before = merged.get(label, {})
            if isinstance(before, str):
                continue
            merged[label] = outputs if isinstance(outputs, str) else before | outputs
    return merged


def discrimination_table(course: Course, problem: Problem, secrets: Sequence[str], limits: Limits) -> Table:
    """Runs the reference, every pitfall and every variant on the hidden cases of the given secrets."""
    files = {problem.id: table_files(course, problem)}
    return discrimination_tables([problem], files, secrets, limits)[problem.id]


def _table(
    problem: Problem, cases: list[Case], paths: dict[str, Path], results: dict[str, Outputs | str]
) -> Table:
    try:
        expected = reference_outputs_or_raise(results, REFERENCE, paths[REFERENCE])
    except CourseError as exc:
        return Table(problem, cases, [], reference_failure=str(exc))
    all_families = tuple(dict.fromkeys(case.family for case in cases))
    rows = []
    for label in paths:
        outputs = results[label]
        if label == REFERENCE:
            continue
        kind, name = label.split(":", 1)
        families = problem.families_of(name) if kind == "pitfall" else all_families
        if isinstance(outputs, str):
            ratios = {case.index: math.inf for case in cases} if kind != "variant" else {}
            rows.append(Row(kind, name, ratios, families, failure=outputs))
            continue
        rejected = {i: out.pitfall for i, out in outputs.items() if isinstance(out, Rejection)}
        ratios = {
            index: math.inf
            if index in rejected
            else compare_outputs(
                Returned.from_array(outputs[index]), expected[index], problem.tolerance, problem.returns
            ).error_ratio
            for index in expected
        }
        rows.append(Row(kind, name, ratios, families, rejected=rejected, outputs=arrays(outputs)))
    return Table(problem, cases, rows, expected=expected)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.authoring.discrimination", description=__doc__)
    parser.add_argument("ids", nargs="*", help="problem ids (default: all)")
    parser.add_argument("--secrets", type=int, default=3, help="how many secrets' hidden cases (default 3)")
    args = parser.parse_args(argv)
    settings = Settings.from_environment()
    limits = checking_limits(settings)
    course = find_course(course_root=settings.course_root)
    problems = [course.problem(i) for i in args.ids] if args.ids else course.problems()
    for problem in problems:
        secrets = [f"discrimination-{number}" for number in range(args.secrets)]
        print(discrimination_table(course, problem, secrets, limits).render(), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
