"""`grade new ID --pitfall NAME --from-group N`: a named pitfall begun from what a class handed in.

The representative file of a group of failing submissions (grader/classroom/insights.py) becomes
`solutions/pitfalls/<id>/NAME.py`, its module docstring replaced by a `TODO(grade new)` one, and problem.toml
gains a `[pitfalls.NAME]` entry with a TODO title and explanation and the families where the group fails.
`grade check ID` then reports the problem incomplete until the author has written them, and checks the
rest as for any pitfall (it fails on every secret, far from the reference, and is named).
"""

from __future__ import annotations

import ast
import keyword
import re
from pathlib import Path

from grader.authoring.check_files import TODO_MARKER
from grader.course.problems import Course, Problem
from grader.errors import UsageError

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_SAFE = re.compile(r"[^\w .,:/()-]")  # what may go into the file and the entry from elsewhere

ENTRY = '''
[pitfalls.{name}]
title = "{todo}: the mistake, in a few words"
explanation = """{todo}: one paragraph in the second person: what the mistake is and what it does to the \\
numbers. It must fit every learner whose outputs match the pitfall file's."""
families = [{families}]  # where {origin} fails; keep those it fails on every secret by 10 tolerances
'''


def _check_name(course: Course, problem: Problem, name: str) -> Path:
    """The new pitfall's file; UsageError when the name is no identifier or is taken."""
    if not _NAME.match(name) or keyword.iskeyword(name) or "--" in name:
        raise UsageError(f"{name!r} is not a pitfall name: use lower case letters, digits and _")
    if name in {pitfall.name for pitfall in problem.pitfalls}:
        raise UsageError(f"{problem.id} already has a pitfall {name!r}")
    path = course.solutions_dir / "pitfalls" / problem.id / f"{name}.py"
    if path.exists():
        raise UsageError(f"{path.relative_to(course.root)} already exists")
    return path


def with_docstring(source: str, docstring: str) -> str:
    """`source` with its module docstring replaced by `docstring` (put first when it has none, or when it
    does not parse), so that a `from __future__` import stays where Python needs it."""
    quoted = f'"""{docstring}"""\n'
    try:
        module = ast.parse(source)
    except SyntaxError:
        return quoted + "\n" + source
    first = module.body[0] if module.body else None
    if ast.get_docstring(module, clean=False) is None or first is None or first.end_lineno is None:
        return quoted + "\n" + source
    lines = source.splitlines(keepends=True)
    return "".join(lines[: first.lineno - 1]) + quoted + "".join(lines[first.end_lineno :])


def new_pitfall(
    course: Course, problem: Problem, name: str, source: str, families: list[str], origin: str
) -> list[Path]:
    """Writes the pitfall file from `source` and its entry in problem.toml; returns the files written.
    `origin` says where the file came from (a group of a class), in the file and the entry."""
    path = _check_name(course, problem, name)
    origin = _SAFE.sub("_", origin)  # it goes inside a docstring and a TOML comment
    docstring = f"Pitfall {name}: {TODO_MARKER}: the one mistake this file makes ({origin})."
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(with_docstring(source, docstring), encoding="utf-8")
    manifest = problem.directory / "problem.toml"
    entry = ENTRY.format(
        name=name,
        todo=TODO_MARKER,
        families=", ".join(f'"{_SAFE.sub("_", family)}"' for family in families),
        origin=origin,
    )
    with manifest.open("a", encoding="utf-8") as stream:
        stream.write(entry)
    return [path, manifest]
