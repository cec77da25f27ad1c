"""A submission for the toy problem that looks for the other learners' folders beside its own (a class
graded from one roster folder: roster/<learner>/problems/toy/stub.py) and runs a classmate's answer.

Landlock lets a child read its own submission file only: listing the roster, or opening the classmate's
file, fails with PermissionError. With GRADE_LANDLOCK=off it passes, which is what tests/test_sandbox.py shows."""

import os
from pathlib import Path


def _classmates_answer() -> str:
    mine = Path(__file__).resolve()
    learners = mine.parents[3]  # roster/ in roster/<learner>/problems/toy/stub.py
    for name in sorted(os.listdir(learners)):  # PermissionError where the roster cannot be listed
        other = learners / name / "problems" / "toy" / "stub.py"
        if other != mine and other.is_file():
            return other.read_text()
    raise FileNotFoundError("no classmate's folder within reach")


def scaled_sum(x, scale):
    namespace = {}
    exec(_classmates_answer(), namespace)
    return namespace["scaled_sum"](x, scale)
