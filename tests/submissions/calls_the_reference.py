"""Expect: error: no reference solution within reach"""

# Finds the course's reference solution by path and calls it: no import, so the import blocker cannot see
# it. A child running as the grader's own user could read what the grader reads; Landlock (on by default)
# refuses the read, and so does an OS sandbox (GRADE_SANDBOX, see docs/security.md). With GRADE_LANDLOCK=off and
# no GRADE_SANDBOX it passes.

import os
import subprocess
from pathlib import Path


def _places() -> list[Path]:
    """Where the course may be: beside this file, or where any process it can see (the grader) works."""
    places = [Path(__file__).resolve(), Path.cwd()]
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            places.append(Path(os.readlink(entry / "cwd")))
        except OSError:
            continue  # not ours to read: Landlock hides every process but this one
    return [folder for place in places for folder in (place, *place.parents)]


def _reference_source() -> str:
    for folder in _places():
        if (folder / "solutions").is_dir():  # a sandbox may have mounted an empty folder over it
            try:
                subprocess.run(["umount", str(folder / "solutions")], capture_output=True)
            except OSError:
                pass  # no umount within reach either
    for folder in _places():
        candidate = folder / "solutions" / "toy.py"
        if candidate.is_file():
            try:
                return candidate.read_text()
            except OSError as exc:  # Landlock: there, but not readable
                raise FileNotFoundError(f"no reference solution within reach: {exc}") from None
    raise FileNotFoundError("no reference solution within reach")


def scaled_sum(x, scale):
    namespace = {}
    exec(_reference_source(), namespace)
    return namespace["scaled_sum"](x, scale)
