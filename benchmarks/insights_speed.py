"""What `grade insights` costs next to `grade batch` alone, in one run, on a class made from the course's own
files (benchmarks/class_of_course.py: every mistake and pitfall file in three writings, the variants), and
prints the ratio. The goal: at most 1.1 times `grade batch` alone on a class of 300.

    python benchmarks/insights_speed.py [--learners 300] [--jobs 2] [--repeat 1] [ID ...]

A first `grade batch` warms the caches (JAX's compilation cache, the output store) and is not counted;
then `grade batch` and `grade batch --insights` run in turn, `--repeat` times each, in fresh processes,
with the caches of the first run. What the record and the page cost is also timed apart, in this process:
reading the record (`GRADEBOOK.behaviour.json`, which every batch writes), grouping every problem, and
rendering the page. The whole course at 300 learners takes hours on 2 cores: measure with fewer learners
(or problems) where that is too long, and say so.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from class_of_course import ROOT, build_class

from grader.classroom.behaviour_record import read_record
from grader.classroom.insights import class_insights
from grader.course.problems import Course
from grader.report.insights_page import render_insights_page


def _batch(roster: Path, out: Path, jobs: int, insights: bool, environment: dict) -> float:
    command = [sys.executable, "-m", "grader", "batch", str(roster), "--out", str(out), "--jobs", str(jobs)]
    start = time.perf_counter()
    done = subprocess.run(
        command + (["--insights"] if insights else []),
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"grade batch failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds


def _in_process(gradebook: Path) -> tuple[float, float, float, int]:
    """Seconds to read the record, group it, render the page; and how many behaviours it holds."""
    start = time.perf_counter()
    record = read_record(gradebook)
    read = time.perf_counter()
    insights = class_insights(record)
    grouped = time.perf_counter()
    render_insights_page(insights, record.mode, str(gradebook))
    rendered = time.perf_counter()
    return read - start, grouped - read, rendered - grouped, len(record.behaviours)


def grouping_scale(gradebook: Path, copies: tuple[int, ...] = (1, 10)) -> list[tuple[int, float]]:
    """Seconds to group the record's behaviours, each handed in by `k` learners, for each k: linear in the
    class when the seconds per submission stay flat."""
    record = read_record(gradebook)
    timed = []
    for k in copies:
        behaviours = tuple(
            dataclasses.replace(b, learner=f"{b.learner}-{n}") for n in range(k) for b in record.behaviours
        )
        start = time.perf_counter()
        class_insights(dataclasses.replace(record, behaviours=behaviours))
        timed.append((len(behaviours), time.perf_counter() - start))
    return timed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("ids", nargs="*", metavar="ID", help="problems (default: every problem)")
    parser.add_argument("--learners", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    course = Course(ROOT)
    problems = [course.problem(i) for i in args.ids] if args.ids else course.problems()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        environment = {k: v for k, v in os.environ.items() if k != "GRADE_SECRET"}
        environment.setdefault("GRADE_CACHE_DIR", str(folder / "cache"))
        build_class(course, problems, folder / "roster", args.learners)
        rows = args.learners * len(problems)
        print(f"class of {args.learners} learners x {len(problems)} problems ({rows} rows), jobs {args.jobs}")
        warm = _batch(folder / "roster", folder / "warm" / "gradebook.csv", args.jobs, False, environment)
        print(f"warm-up grade batch (not counted): {warm:.1f} s")
        alone, with_insights = [], []
        for k in range(args.repeat):
            alone.append(
                _batch(folder / "roster", folder / f"a{k}" / "gb.csv", args.jobs, False, environment)
            )
            with_insights.append(
                _batch(folder / "roster", folder / f"i{k}" / "gb.csv", args.jobs, True, environment)
            )
            print(
                f"  run {k + 1}: grade batch {alone[-1]:.1f} s, "
                f"grade batch --insights {with_insights[-1]:.1f} s"
            )
        read, grouped, rendered, kept = _in_process(folder / "i0" / "gb.csv")
        scale = grouping_scale(folder / "i0" / "gb.csv")
    ratio = sum(with_insights) / sum(alone)
    print(f"grade batch alone:         {sum(alone) / len(alone):8.1f} s")
    print(f"grade batch --insights:    {sum(with_insights) / len(with_insights):8.1f} s")
    print(f"ratio:                     {ratio:8.3f}   (goal <= 1.1) {'ok' if ratio <= 1.1 else 'MISSED'}")
    print(
        f"in-process, {kept} failing submissions kept: read the record {read:.3f} s, group {grouped:.3f} s, "
    )
    print(f"  render the page {rendered:.3f} s")
    for count, seconds in scale:
        print(
            f"grouping {count} failing submissions: {seconds:.3f} s "
            f"({1e3 * seconds / max(count, 1):.2f} ms each)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
