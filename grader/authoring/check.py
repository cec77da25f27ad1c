"""`grade check ID... | --all`: is a problem sound? The checks the project's tests make, as a table.

For each problem: its files are complete (no `TODO(grade new)` left, a file per pitfall, three variants,
eight natural mistakes, the signature everywhere, every pitfall and family named in the statement); the
untouched stub fails as not implemented; the reference passes its practice cases and hidden cases; in
practice and on the hidden cases of several secrets (no verdict may change between them): every pitfall
file fails, lands at least 10 tolerances from the reference on every case of the families listed for it,
and is named as its own pitfall by the same diagnosis the grader uses; every correct variant stays within
half a tolerance; every natural mistake (solutions/mistakes/, described by no pitfall) fails, and any name
the grader gives it belongs to a pitfall whose files reproduce it on every case of every secret.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.authoring.check_files import Finding, Verdict, file_findings, ready_files
from grader.authoring.discrimination import (
    PITFALL_AIM,
    VARIANT_AIM,
    PendingTables,
    Row,
    Table,
    aim_of,
    case_blocks,
    checking_limits,
    table_files,
    variant_aim,
)
from grader.authoring.rules import manifest_findings, rule_findings
from grader.course.problems import Course, Problem, pitfall_name
from grader.expected.output_cache import practice_store
from grader.expected.trusted import REFERENCE
from grader.grading.diagnose import diagnose
from grader.grading.grader import Grader
from grader.protocol.payloads import Returned
from grader.results import Status
from grader.settings import Settings

DEFAULT_SECRETS = ("check-1", "check-2", "check-3")


@dataclass(frozen=True)
class ProblemCheck:
    problem: Problem
    findings: list[Finding]
    table: Table | None

    @property
    def verdict(self) -> Verdict:
        verdicts = {finding.verdict for finding in self.findings}
        if Verdict.FAIL in verdicts:
            return Verdict.FAIL
        return Verdict.INCOMPLETE if Verdict.INCOMPLETE in verdicts else Verdict.OK

    def finding(self, kind: str, name: str) -> Finding:
        return next(f for f in self.findings if f.kind == kind and f.name == name)

    def render(self, families: bool = False) -> str:
        """Returns the table a problem author reads; with `families`, the per-family ratios too."""
        width = max([len(f.name) for f in self.findings] + [10])
        summary = {
            Verdict.OK: "sound",
            Verdict.FAIL: f"NOT SOUND: {_count(self.findings, Verdict.FAIL, 'shortfall')}",
            Verdict.INCOMPLETE: "incomplete: finish the TODOs, then check again",
        }[self.verdict]
        lines = [f"{self.problem.id}: {self.problem.title}  [{summary}]"]
        lines.append(f"  {'':9} {'':{width}}  {'verdict':10}  {'aim':>6}  {'ratio':>9}  detail")
        for f in self.findings:
            aim = aim_of(self.problem, f.kind, f.name)
            ratio = f"{f.ratio:9.3g}" if f.ratio is not None else ""
            lines.append(f"  {f.kind:9} {f.name:{width}}  {f.verdict:10}  {aim:>6}  {ratio:>9}  {f.detail}")
        if families and self.table is not None:
            lines += ["", self.table.render()]
        return "\n".join(lines)


def _count(findings: list[Finding], verdict: Verdict, noun: str) -> str:
    count = sum(f.verdict is verdict for f in findings)
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _stub_finding(result) -> Finding:
    not_implemented = all(
        case.status is Status.ERROR and "not implemented" in case.message for case in result.cases
    )
    if result.status is Status.ERROR and not_implemented:
        return Finding("stub", "stub.py", Verdict.OK, "not implemented, on every practice case")
    return Finding("stub", "stub.py", Verdict.FAIL, f"should fail as not implemented: {result.message}")


def _reference_finding(practice, hidden, secret: str) -> Finding:
    if practice.status is Status.PASS and hidden.status is Status.PASS:
        detail = f"passes {len(practice.cases)} practice and {len(hidden.cases)} hidden cases ({secret!r})"
        return Finding("reference", "reference", Verdict.OK, detail)
    mode, failed = ("practice", practice) if practice.status is not Status.PASS else ("hidden", hidden)
    return Finding("reference", "reference", Verdict.FAIL, f"{mode} cases: {failed.message}")


def _named(problem: Problem, table: Table, row: Row, indices: list[int]) -> set[str]:
    """The pitfalls the grader would name for a file with `row`'s outputs on the cases `indices`."""
    returned = {i: Returned.from_array(row.outputs[i]) for i in indices if i in row.outputs}
    others = {
        r.name: {i: r.outputs[i] for i in indices if i in r.outputs}
        for r in table.rows
        if r.kind == "pitfall" and not r.failure
    }
    named = {row.rejected[i] for i in indices if i in row.rejected}
    judged = [i for i in indices if i in returned]
    expected = {i: table.expected[i] for i in judged}
    named |= {p.name for p in diagnose(problem, returned, expected, others, judged).named}
    return named


def _pitfall_finding(problem: Problem, table: Table, row: Row, blocks: dict[str, list[int]]) -> Finding:
    if not row.families:
        return Finding("pitfall", row.name, Verdict.OK, "declared unseen: no family can show it")
    if row.failure:
        return Finding("pitfall", row.name, Verdict.FAIL, f"no outputs: {row.failure.splitlines()[0]}")
    worst = row.worst(table.cases)
    own = pitfall_name(row.name)
    missed = [
        block
        for block, indices in blocks.items()
        if max(row.ratios[i] for i in indices) <= 1 or own not in _named(problem, table, row, indices)
    ]
    shortfalls = []
    if worst < PITFALL_AIM:
        shortfalls.append(f"only {worst:.3g} tolerances away on its families")
    if missed:
        shortfalls.append(f"not failed and named {own!r} on the cases of {', '.join(missed)}")
    if shortfalls:
        return Finding("pitfall", row.name, Verdict.FAIL, "; ".join(shortfalls), worst)
    detail = f"fails and is named {own!r} in practice and on all {len(blocks) - 1} secrets"
    return Finding("pitfall", row.name, Verdict.OK, detail, worst)


def _failing_blocks(row: Row, blocks: dict[str, list[int]]) -> list[str]:
    """The blocks (practice, each secret) on some case of which the row is outside the tolerance."""
    return [block for block, indices in blocks.items() if any(row.ratios.get(i, 0) > 1 for i in indices)]


def _variant_finding(problem: Problem, table: Table, row: Row, blocks: dict[str, list[int]]) -> Finding:
    if row.failure:
        return Finding("variant", row.name, Verdict.FAIL, f"no outputs: {row.failure.splitlines()[0]}")
    worst = row.worst(table.cases)
    aim = variant_aim(problem, row.name)
    if not worst <= aim:
        detail = f"{worst:.3g} tolerances from the reference"
        failing = _failing_blocks(row, blocks)
        if failing and len(failing) < len(blocks):
            detail += f"; the verdict changes with the secret: fails on {', '.join(failing)} only"
        elif failing:
            detail += "; fails everywhere"
        return Finding("variant", row.name, Verdict.FAIL, detail, worst)
    within = f"within the tolerance on all {len(table.cases)} cases"
    if aim != VARIANT_AIM:
        within += f", and within {aim:g} of it as its rule states (accepted_within)"
    return Finding("variant", row.name, Verdict.OK, within, worst)


def _unexplained(
    problem: Problem, table: Table, row: Row, name: str, blocks: dict[str, list[int]]
) -> list[str]:
    """The blocks on which no file of the pitfall `name` (it or a form) explains the row's outputs: the
    same verdict on every case of the block, the same numbers where the row fails."""
    forms = {
        r.name: r.outputs
        for r in table.rows
        if r.kind == "pitfall" and pitfall_name(r.name) == name and not r.failure
    }
    unexplained = []
    for block, indices in blocks.items():
        returned = {i: Returned.from_array(row.outputs[i]) for i in indices if i in row.outputs}
        expected = {i: table.expected[i] for i in indices}
        if not diagnose(problem, returned, expected, forms, indices).named:
            unexplained.append(block)
    return unexplained


def _mistake_finding(problem: Problem, table: Table, row: Row, blocks: dict[str, list[int]]) -> Finding:
    """A natural mistake no pitfall describes must fail on every secret, and any name the grader gives it
    must belong to a pitfall whose files reproduce it everywhere, not only on the practice cases."""
    if row.failure:  # an error on some case: a learner's run fails there, and no pitfall gives an error
        detail = f"fails with an error, never named: {row.failure.splitlines()[0]}"
        return Finding("mistake", row.name, Verdict.OK, detail)
    # how clearly it fails where it fails least: the largest ratio of its weakest block
    worst = min(max(row.ratios.get(i, 0.0) for i in indices) for indices in blocks.values())
    failing = _failing_blocks(row, blocks)
    passing = [block for block in blocks if block not in failing]
    if passing:
        detail = f"passes on the cases of {', '.join(passing)}: catch it on every secret, or accept it"
        return Finding("mistake", row.name, Verdict.FAIL, detail, worst)
    rejected = {row.rejected[i] for i in blocks["practice"] if i in row.rejected}
    named = sorted(_named(problem, table, row, blocks["practice"]) - rejected)
    wrong = {name: where for name in named if (where := _unexplained(problem, table, row, name, blocks))}
    if wrong:
        detail = "; ".join(
            f"named {name!r}, which does not reproduce it on {', '.join(where)}"
            for name, where in wrong.items()
        )
        return Finding("mistake", row.name, Verdict.FAIL, detail, worst)
    said = f"named {', '.join(map(repr, named))}, reproduced on every case" if named else "never named"
    if rejected:
        said += f"; rejected by the harness as {', '.join(map(repr, sorted(rejected)))}"
    return Finding(
        "mistake",
        row.name,
        Verdict.OK,
        f"fails in practice and on all {len(blocks) - 1} secrets; {said}",
        worst,
    )


def _grade(grader: Grader, items: list[tuple[Problem, Path]]) -> list:
    return grader.grade_files(items) if items else []


def check_problems(
    course: Course,
    problems: Sequence[Problem],
    secrets: Sequence[str] = DEFAULT_SECRETS,
    *,
    settings: Settings,
    jobs: int | None = None,
) -> list[ProblemCheck]:
    """Checks every problem of `problems` under the GRADE_* `settings`, sharing the child processes between
    them: `jobs` children compute the tables (by default one per core: running/limits.py's
    children_that_fit)."""
    limits = checking_limits(settings)
    findings = {
        problem.id: file_findings(course, problem)
        + manifest_findings(problem, set(table_files(course, problem)))
        for problem in problems
    }
    ready = {problem.id: ready_files(course, problem, findings[problem.id]) for problem in problems}
    runnable = [
        p
        for p in problems
        if p.stub_path.is_file()
        and not any(f.name == "cases.py" and f.verdict is Verdict.FAIL for f in findings[p.id])
    ]
    with_reference = [p for p in runnable if REFERENCE in ready[p.id]]
    measured = [None, *secrets]  # the practice cases too: a learner must meet every mistake named there
    files = {p.id: ready[p.id] for p in with_reference}
    # The tables first, in the background: the stub's and the reference's grading (one child at a time)
    # would otherwise leave a core idle.
    pending = PendingTables(with_reference, files, measured, limits, practice_store(settings), jobs).start()
    stubs = _grade(Grader(course, limits=limits), [(p, p.stub_path) for p in runnable])
    for problem, result in zip(runnable, stubs, strict=True):
        findings[problem.id].append(_stub_finding(result))
    references = [(p, ready[p.id][REFERENCE]) for p in with_reference]
    practice = _grade(Grader(course, limits=limits), references)
    hidden = _grade(Grader(course, secret=secrets[0], limits=limits), references)
    for problem, passed, hidden_passed in zip(with_reference, practice, hidden, strict=True):
        findings[problem.id].append(_reference_finding(passed, hidden_passed, secrets[0]))
    tables = pending.tables()
    checks = []
    for problem in problems:
        table = tables.get(problem.id)
        if table is not None and not table.reference_failure:
            blocks = {
                name: [case.index for case in block] for name, block in case_blocks(problem, measured).items()
            }
            for row in table.rows:
                if row.kind == "pitfall":
                    findings[problem.id].append(_pitfall_finding(problem, table, row, blocks))
                elif row.kind == "mistake":
                    findings[problem.id].append(_mistake_finding(problem, table, row, blocks))
                else:
                    findings[problem.id].append(_variant_finding(problem, table, row, blocks))
            findings[problem.id] += rule_findings(problem, findings[problem.id])
        checks.append(ProblemCheck(problem, findings[problem.id], table))
    return checks
