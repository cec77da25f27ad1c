"""Outputs of the course's own code (the reference and the named pitfalls) on a list of cases.

Trusted files run together in one child, on the same machine and backend as the learner's code.
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
REFERENCE = "reference"  # the label of the reference solution among trusted files
_memo: dict[tuple[str, int], np.ndarray] = {}  # (file digest, case seed) -> output


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _outputs(outcome: RunOutcome) -> Outputs | str:
    """Returns the outputs of every case, or why the run could not produce them."""
    if outcome.load_failure:
        return f"{outcome.load_failure.message}\n{outcome.load_failure.detail}\n{outcome.stderr}"
    outputs: Outputs = {}
    for index, case in outcome.cases.items():
        if case.raised:
            raised = case.raised
            return f"case {index + 1} raised {raised.type_name}: {raised.message}\n{raised.traceback}"
        if case.returned is None or case.returned.kind != "array":
            return f"case {index + 1} returned {case.returned.describe() if case.returned else 'nothing'}"
        outputs[index] = case.returned.values
    if outcome.stopped:
        return f"{outcome.stopped}\n{outcome.stderr}"
    return outputs


class TrustedOutputs:
    """Computes (in the background) the outputs of trusted files; `result()` waits for them.

    Outputs are remembered per (file content, case seed) for the life of the process, so a file is run
    only on the cases it has not seen; all the files that need a run share one child.
    """

    def __init__(self, problem: Problem, paths: dict[str, Path], cases: list[Case], limits: Limits) -> None:
        self.cases = cases
        self.digests = {label: _digest(path) for label, path in paths.items()}
        stale = [
            label
            for label, digest in self.digests.items()
            if any((digest, c.seed) not in _memo for c in cases)
        ]
        missing = [c for c in cases if any((self.digests[label], c.seed) not in _memo for label in stale)]
        submissions = [(label, paths[label]) for label in stale]
        self.run = IsolatedRun(submissions, problem, missing, limits, trusted=True).start() if stale else None

    def cancel(self) -> None:
        """Stops the computation: nothing will be compared with these outputs."""
        if self.run:
            self.run.cancel()

    def result(self) -> dict[str, Outputs | str]:
        """Returns, per label, the outputs by case index or the reason the file failed."""
        fresh = self.run.wait() if self.run else {}
        results: dict[str, Outputs | str] = {}
        for label, digest in self.digests.items():
            outputs = _outputs(fresh[label]) if label in fresh else {}
            if isinstance(outputs, str):
                results[label] = outputs
                continue
            seeds = {case.index: case.seed for case in self.cases}
            for index, values in outputs.items():
                _memo[(digest, seeds[index])] = values
            results[label] = {case.index: _memo[(digest, case.seed)] for case in self.cases}
        return results


class KnownOutputs:
    """Outputs that are already at hand (stored at export): the same interface as TrustedOutputs."""

    def __init__(self, results: dict[str, Outputs]) -> None:
        self.results = results

    def cancel(self) -> None:
        pass

    def result(self) -> dict[str, Outputs | str]:
        return dict(self.results)


def reference_outputs_or_raise(results: dict[str, Outputs | str], label: str, path: Path) -> Outputs:
    """Returns the reference's outputs, or raises CourseError: a broken reference is never the learner's."""
    outputs = results[label]
    if isinstance(outputs, str):
        raise CourseError(f"the reference {path} failed, so nothing can be graded:\n{outputs}")
    return outputs
