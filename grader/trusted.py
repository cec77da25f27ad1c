"""Outputs of the course's own code (the reference and the named pitfalls) on a list of cases.

Trusted files run together in one child, on the same machine and backend as the learner's code, and are
remembered for the life of the process, keyed by the file's content and the case seeds.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from grader.cases import Case
from grader.errors import CourseError
from grader.isolation import IsolatedRun, Limits, RunOutcome
from grader.problems import Problem

Outputs = dict[int, np.ndarray]
_memo: dict[tuple, Outputs] = {}


def _key(path: Path, cases: list[Case]) -> tuple:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return (str(path.resolve()), digest, tuple((case.index, case.seed) for case in cases))


def _outputs(outcome: RunOutcome) -> Outputs | str:
    """Returns the outputs of every case, or why the run could not produce them."""
    if outcome.load_failure:
        return f"{outcome.load_failure.message}\n{outcome.load_failure.detail}"
    outputs: Outputs = {}
    for index, case in outcome.cases.items():
        if case.raised:
            raised = case.raised
            return f"case {index + 1} raised {raised.type_name}: {raised.message}\n{raised.traceback}"
        if case.returned is None or case.returned.kind != "array":
            return f"case {index + 1} returned {case.returned.describe() if case.returned else 'nothing'}"
        outputs[index] = case.returned.values
    if outcome.stopped:
        return outcome.stopped
    return outputs


class TrustedOutputs:
    """Computes (in the background) the outputs of trusted files; `result()` waits for them."""

    def __init__(self, problem: Problem, paths: dict[str, Path], cases: list[Case], limits: Limits) -> None:
        self.paths = paths
        self.keys = {label: _key(path, cases) for label, path in paths.items()}
        missing = [(label, path) for label, path in paths.items() if self.keys[label] not in _memo]
        self.run = IsolatedRun(missing, problem, cases, limits, trusted=True).start() if missing else None

    def result(self) -> dict[str, Outputs | str]:
        """Returns, per label, the outputs by case index or the reason the file failed."""
        results: dict[str, Outputs | str] = {}
        fresh = self.run.wait() if self.run else {}
        for label, key in self.keys.items():
            if key in _memo:
                results[label] = _memo[key]
                continue
            outputs = _outputs(fresh[label])
            if isinstance(outputs, dict):
                _memo[key] = outputs
            results[label] = outputs
        return results


def reference_outputs_or_raise(results: dict[str, Outputs | str], label: str, path: Path) -> Outputs:
    """Returns the reference's outputs, or raises CourseError: a broken reference is never the learner's."""
    outputs = results[label]
    if isinstance(outputs, str):
        raise CourseError(f"the reference {path} failed, so nothing can be graded:\n{outputs}")
    return outputs
