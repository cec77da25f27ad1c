"""Where the test suite's time goes: pytest run with a recorder, and a table per test module and phase.

    python benchmarks/suite_profile.py                 # the README's test command (pyproject's addopts)
    python benchmarks/suite_profile.py -m course       # the course's checks, as .ci/run runs them
    python benchmarks/suite_profile.py -- -k export    # anything after -- goes to pytest as it is

Every test's setup, call and teardown are timed by pytest itself (its reports' `duration`); the table sums
them per module, with the module's wall time (first test's start to last test's end, so the session
fixtures a module sets up first are counted there) and the CPU time of the whole run, this process and its
children together (a suite whose graders' children wait on the CPU shows CPU well below twice the wall on
2 cores). The slowest tests follow. Nothing is cut or skipped: the run is the one asked for.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


class Recorder:
    """Collects each test report's phase and duration, and each module's first start and last end."""

    def __init__(self) -> None:
        self.phases: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.tests: dict[str, float] = defaultdict(float)
        self.span: dict[str, list[float]] = {}
        self.counts: dict[str, int] = defaultdict(int)
        self.outcomes: dict[str, int] = defaultdict(int)

    def pytest_runtest_logreport(self, report) -> None:
        module = report.nodeid.split("::")[0]
        self.phases[module][report.when] += report.duration
        self.tests[report.nodeid] += report.duration
        start, stop = report.start, report.stop
        first, last = self.span.get(module, [start, stop])
        self.span[module] = [min(first, start), max(last, stop)]
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.counts[module] += 1
            self.outcomes[report.outcome] += 1


def _cpu() -> float:
    """User and system time of this process and of its children that have been waited for."""
    return sum(os.times()[:4])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/suite_profile.py", description=__doc__)
    parser.add_argument("-m", dest="marker", help="a marker expression, as pytest's -m")
    parser.add_argument("--slowest", type=int, default=15, help="slowest tests listed (default 15)")
    parser.add_argument("rest", nargs="*", help="after --: passed to pytest")
    args = parser.parse_args(argv)
    pytest_args = ["-q", "-p", "no:cacheprovider", *(["-m", args.marker] if args.marker else []), *args.rest]
    recorder = Recorder()
    os.chdir(ROOT)
    wall, cpu = time.monotonic(), _cpu()
    status = pytest.main(list(pytest_args), plugins=[recorder])  # it prepends pyproject's addopts
    wall, cpu = time.monotonic() - wall, _cpu() - cpu
    command = f"python -m pytest {' '.join(pytest_args)} (and pyproject's addopts)"
    print(f"\n{command}: exit {int(status)}, {dict(recorder.outcomes)}")
    print(f"wall {wall:.0f} s, CPU {cpu:.0f} s (with its children: {cpu / wall:.2f} cores busy)\n")
    head = f"{'module':44} {'tests':>5} {'wall':>7} {'setup':>7} {'call':>7} {'teardown':>8} {'share':>6}"
    print(head)
    rows = sorted(recorder.span, key=lambda m: recorder.span[m][1] - recorder.span[m][0], reverse=True)
    for module in rows:
        phases, (first, last) = recorder.phases[module], recorder.span[module]
        span = last - first
        print(
            f"{module:44} {recorder.counts[module]:5} {span:7.1f} {phases['setup']:7.1f} "
            f"{phases['call']:7.1f} {phases['teardown']:8.1f} {span / wall:6.1%}"
        )
    print(f"\nslowest {args.slowest} tests (setup + call + teardown):")
    for nodeid, seconds in sorted(recorder.tests.items(), key=lambda item: -item[1])[: args.slowest]:
        print(f"  {seconds:7.1f} s  {nodeid}")
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
