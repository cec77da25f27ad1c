"""How well `grade insights` groups a class by behaviour, measured on a class made from the course's own files
(benchmarks/class_of_course.py: every natural mistake and pitfall file handed in by three learners who wrote
it differently, and the correct variants as they are), and printed.

    python benchmarks/insights_purity.py [ID ...] [--jobs 2] [--keep DIR]

- purity: of the grouped submissions, the share in a group whose commonest behaviour is theirs;
- completeness: of the grouped submissions, the share in the group that holds most of their behaviour;
- a behaviour is a file's, except where files compute the same numbers: files whose outputs (as they are)
  are identical on every practice case are one behaviour (some mistakes of one problem legitimately
  compute the same thing, and nothing can tell them apart by their outputs);
- correct variants never in a group (they pass, and passes are not grouped).

`tests/test_insights_course.py` (marked `class_insights`, run by hand: `python -m pytest -m class_insights`)
asserts 90% or more of each on five problems.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from class_of_course import ROOT, build_class

from grader.behaviours import Behaviour, ProblemInsights
from grader.classroom.behaviour_record import read_record
from grader.classroom.insights import class_insights
from grader.course.problems import Course

DEFAULT_PROBLEMS = (
    "weight_ema",
    "bf16_train_step",
    "fp8_delayed_scaling",
    "checkpoint_resume",
    "loss_scaling",
)


@dataclass(frozen=True)
class Measured:
    problem: str
    submissions: int  # mistake and pitfall submissions handed in
    grouped: int  # of them, failing with outputs, so grouped
    groups: int
    behaviours: int  # distinct behaviours among the grouped (files with identical outputs are one)
    purity: float
    completeness: float
    variants_grouped: int


def _identical(one: Behaviour, other: Behaviour) -> bool:
    cases = set(one.outputs) | set(other.outputs)
    for i in cases:
        a, b = one.outputs.get(i), other.outputs.get(i)
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            if a.shape != b.shape or not np.array_equal(a, b, equal_nan=True):
                return False
        elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray) or a != b:
            return False  # an array against anything else, or two different things that are not arrays
    return True


def behaviour_of_files(truth: dict[tuple[str, str], str], members: list[Behaviour]) -> dict[str, str]:
    """File label -> its behaviour: the first label whose as-is submission has identical outputs."""
    as_is = {
        truth[(m.learner, m.problem)].split("@")[0]: m
        for m in members
        if truth[(m.learner, m.problem)].endswith("@as_is")
    }
    behaviour: dict[str, str] = {}
    for label, member in as_is.items():
        behaviour[label] = next(
            (other for other in behaviour.values() if _identical(member, as_is[other])), label
        )
    return behaviour


def measure_problem(insights: ProblemInsights, truth: dict[tuple[str, str], str]) -> Measured:
    members = [m for group in insights.groups for m in group.members]
    files = behaviour_of_files(truth, members)

    def label(member: Behaviour) -> str:
        file = truth[(member.learner, member.problem)].split("@")[0]
        return files.get(file, file)

    mistakes = [
        t for (_, p), t in truth.items() if p == insights.facts.problem and not t.startswith("variant:")
    ]
    grouped = [m for m in members if not truth[(m.learner, m.problem)].startswith("variant:")]
    variants = len(members) - len(grouped)
    majority = sum(Counter(label(m) for m in group.members).most_common(1)[0][1] for group in insights.groups)
    where: dict[str, Counter] = {}
    for group in insights.groups:
        for member in group.members:
            where.setdefault(label(member), Counter())[group.number] += 1
    kept = sum(counter.most_common(1)[0][1] for counter in where.values())
    total = max(len(members), 1)
    return Measured(
        insights.facts.problem,
        len(mistakes),
        len(grouped),
        len(insights.groups),
        len(where),
        majority / total,
        kept / total,
        variants,
    )


def grade_class(roster: Path, out: Path, jobs: int) -> list[ProblemInsights]:
    """`grade batch --insights` of the roster, as an instructor runs it; the class's insights."""
    command = [sys.executable, "-m", "grader", "batch", str(roster), "--out", str(out), "--jobs", str(jobs)]
    environment = {key: value for key, value in os.environ.items() if key != "GRADE_SECRET"}
    done = subprocess.run([*command, "--insights"], cwd=ROOT, env=environment, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"grade batch failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return class_insights(read_record(out))


def measure(problem_ids: list[str], folder: Path, jobs: int = 2) -> list[Measured]:
    course = Course(ROOT)
    problems = [course.problem(i) for i in problem_ids]
    truth = build_class(course, problems, folder / "roster")
    insights = grade_class(folder / "roster", folder / "out" / "gradebook.csv", jobs)
    return [measure_problem(found, truth) for found in insights if found.facts.problem in problem_ids]


def render(measured: list[Measured]) -> str:
    lines = [
        f"{'problem':<22} {'handed':>6} {'grouped':>7} {'behaviours':>10} {'groups':>6} {'purity':>7} "
        f"{'complete':>8} {'variants grouped':>16}"
    ]
    for m in measured:
        lines.append(
            f"{m.problem:<22} {m.submissions:>6} {m.grouped:>7} {m.behaviours:>10} {m.groups:>6} "
            f"{m.purity:>7.1%} {m.completeness:>8.1%} {m.variants_grouped:>16}"
        )
    grouped = sum(m.grouped for m in measured) or 1
    purity = sum(m.purity * m.grouped for m in measured) / grouped
    completeness = sum(m.completeness * m.grouped for m in measured) / grouped
    lines.append(
        f"{'all':<22} {sum(m.submissions for m in measured):>6} {grouped:>7} {'':>10} {'':>6} "
        f"{purity:>7.1%} {completeness:>8.1%}"
    )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("ids", nargs="*", default=list(DEFAULT_PROBLEMS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="build and grade the class here, and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.keep or Path(temporary)
        print(render(measure(args.ids, folder, args.jobs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
