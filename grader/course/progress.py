"""What a learner's checkout remembers between runs: the last verdict per problem and the hints shown."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from grader.course.checkout import LearnerCheckout
from grader.course.problems import Problem
from grader.results import ProblemResult

STATE_FILE = Path(".grade") / "progress.json"


def _load(root: Path) -> dict[str, Any]:
    try:
        state = json.loads((root / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def _save(root: Path, state: dict[str, Any]) -> None:
    path = root / STATE_FILE
    try:
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(state, indent=2, sort_keys=True), encoding="utf-8")
    except OSError:
        pass  # a read-only checkout (CI) simply keeps no progress


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def record_result(root: Path, result: ProblemResult, submission: Path, mode: str) -> None:
    """Remembers the verdict on `submission` for `grade list`."""
    state = _load(root)
    entry = state.setdefault(result.problem, {})
    entry.update(status=str(result.status), mode=mode, sha256=_digest(submission))
    _save(root, state)


def status(checkout: LearnerCheckout, problem: Problem) -> str:
    """Returns the learner-facing status of a problem in this checkout."""
    if checkout.missing(problem):
        return "no stub.py"
    entry = _load(checkout.root).get(problem.id, {})
    if entry.get("sha256") == _digest(checkout.stub(problem)):
        return {"pass": "passed", "fail": "failed", "error": "error"}.get(entry.get("status"), "not graded")
    if checkout.untouched(problem):
        return "not started"
    return "changed since last graded" if entry else "not graded"


def hints_shown(root: Path, problem: Problem) -> int:
    return int(_load(root).get(problem.id, {}).get("hints_shown", 0))


def record_hint(root: Path, problem: Problem, level: int) -> None:
    state = _load(root)
    entry = state.setdefault(problem.id, {})
    entry["hints_shown"] = max(level, int(entry.get("hints_shown", 0)))
    _save(root, state)
