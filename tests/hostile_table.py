"""Prints the verdict, reason and time to verdict of every submission in tests/submissions, each graded
by the real `grade` command in hidden mode, as a Markdown table.

    python tests/hostile_table.py [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUBMISSIONS = HERE / "submissions"
SHOWN = {"GRADE_HIDDEN_SHOWS_OUTPUT": "1"}  # hidden mode, as a course that shows learners' messages
SECRET = "hostile-tests-secret"
TIMEOUTS = {"takes_8_gib": 60, "forks_to_hoard_memory": 60}  # touching GiBs page by page is slow
MEMORY = {"hoards_memory_outside_its_session": "1500M"}  # what it holds outside its session exceeds


def grade(course: Path, path: Path, timeout: float) -> tuple[int, dict, float]:
    script = Path(sys.executable).with_name("grade")
    argv = [str(script), "toy", "--submission", str(path), "--format", "json"]
    argv += ["--timeout", str(TIMEOUTS.get(path.stem, timeout))]
    argv += ["--memory-limit", MEMORY[path.stem]] if path.stem in MEMORY else []
    start = time.monotonic()
    done = subprocess.run(
        argv,
        cwd=course,
        env={**os.environ, "GRADE_SECRET": SECRET, "GRADE_HIDDEN_SHOWS_OUTPUT": "1"},
        capture_output=True,
        text=True,
    )
    seconds = time.monotonic() - start
    if done.returncode == 2:
        return done.returncode, {"status": "grader error", "message": done.stderr.strip()}, seconds
    (problem,) = json.loads(done.stdout)["problems"]
    return done.returncode, problem, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=2.0, help="per-case limit (default 2 s)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        course = Path(folder) / "course"
        shutil.copytree(HERE / "toy_course", course)
        print("| submission | verdict | exit | reason shown | time to verdict |")
        print("|---|---|---|---|---|")
        for path in sorted(SUBMISSIONS.glob("*.py")):
            code, problem, seconds = grade(course, path, args.timeout)
            reason = problem["message"].replace("|", "\\|")
            print(f"| `{path.name}` | {problem['status']} | {code} | {reason} | {seconds:.1f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
