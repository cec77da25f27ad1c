"""A submission for the toy problem that reads the other learners' folders (a class graded from one roster
folder: roster/<learner>/problems/toy/stub.py) and runs a classmate's answer. The child grades a copy of the
submission in its private folder, so its own path tells it nothing; this one knows the layout (the tests
write the roster's path into ROSTER, as a learner who guessed it would).

Landlock lets the child read the Python installation only: listing the roster, or opening the classmate's
file, fails with PermissionError. With GRADE_LANDLOCK=off it passes, which is what tests/test_sandbox.py
shows."""

import os
from pathlib import Path

ROSTER = "ROSTER_FOLDER"


def _classmates_answer() -> str:
    for name in sorted(os.listdir(ROSTER)):  # PermissionError where the roster cannot be listed
        other = Path(ROSTER) / name / "problems" / "toy" / "stub.py"
        if other.is_file() and "ROSTER" not in other.read_text():
            return other.read_text()
    raise FileNotFoundError("no classmate's folder within reach")


def scaled_sum(x, scale):
    namespace = {}
    exec(_classmates_answer(), namespace)
    return namespace["scaled_sum"](x, scale)
