"""Outputs stored at export: what a learner copy (no solutions/) grades practice cases against.

`grade export` runs the reference and every pitfall file on the practice cases and writes their outputs to
`problems/<id>/expected.json`. A learner copy compares with those numbers and names pitfalls from them.
Each case is stored with a digest of its inputs, so a changed `cases.py` (or a numpy whose generator draws
differently) is caught instead of grading against outputs of other inputs.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from grader.course.cases import PROFILE_CASE, Case
from grader.course.problems import Problem
from grader.errors import CourseError
from grader.expected.trusted import REFERENCE, Outputs, arrays

STORED_FILE = "expected.json"
STORED_FORMAT = 1


def stored_path(problem: Problem) -> Path:
    return problem.directory / STORED_FILE


def _encode(values: np.ndarray) -> dict[str, Any]:
    array = np.asarray(values)
    numbers = [v if math.isfinite(v) else str(v) for v in array.astype(np.float64).reshape(-1).tolist()]
    return {"dtype": array.dtype.str, "shape": list(array.shape), "values": numbers}


def _decode(entry: dict[str, Any]) -> np.ndarray:
    values = np.array([float(v) for v in entry["values"]], dtype=np.float64)
    return values.astype(np.dtype(entry["dtype"])).reshape(entry["shape"])


def write_stored(
    problem: Problem,
    cases: list[Case],
    outputs: dict[str, Outputs],
    made_with: dict[str, str],
    profiles: dict[str, dict] | None = None,
) -> Path:
    """Writes the outputs of the reference (label REFERENCE) and the pitfall files on `cases`, and the
    summaries of their precision profiles on case PROFILE_CASE, by label (which dtypes each role ran in: no
    line of any file): the reference's to show a failed answer where its dtypes differ, the pitfall files'
    to name a mistake as the course does where pitfalls give the same numbers."""
    document = {
        "format": STORED_FORMAT,
        "problem": problem.id,
        "made_with": made_with,
        "cases": [
            {"index": case.index, "family": case.family, "seed": case.seed, "inputs": case.digest}
            for case in cases
        ],
        "outputs": {  # cases a harness rejected need no numbers: the learner copy's harness names them
            label: {str(index): _encode(values) for index, values in arrays(by_case).items()}
            for label, by_case in outputs.items()
        },
    }
    made = {label: profile for label, profile in (profiles or {}).items() if profile and "summary" in profile}
    summaries = {label: profile["summary"] for label, profile in made.items()}
    if REFERENCE in summaries:
        document["reference_profile"] = {"case": PROFILE_CASE, "summary": summaries.pop(REFERENCE)}
    if summaries:
        document["pitfall_profiles"] = {"case": PROFILE_CASE, "summaries": summaries}
    path = stored_path(problem)
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return path


class StoredOutputs:
    """The outputs kept in a problem's expected.json, checked against the cases they were made for."""

    def __init__(self, problem: Problem) -> None:
        path = stored_path(problem)
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            if document.get("format") != STORED_FORMAT or document.get("problem") != problem.id:
                raise ValueError("not an expected-outputs file of this problem and format")
            self.digests = {int(c["index"]): c["inputs"] for c in document["cases"]}
            self.outputs = {
                label: {int(index): _decode(entry) for index, entry in by_case.items()}
                for label, by_case in document["outputs"].items()
            }
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CourseError(f"{path}: cannot be read ({exc}); export the course again") from None
        self.path = path
        self.profile = document.get("reference_profile")
        self.pitfall_profile = document.get("pitfall_profiles")

    def _check(self, cases: list[Case]) -> None:
        for case in cases:
            if self.digests.get(case.index) != case.digest:
                raise CourseError(
                    f"{self.path} was made for other inputs than {case.label} has now (cases.py or numpy "
                    "changed since the export): ask for a fresh copy of the course"
                )

    def reference(self, cases: list[Case]) -> dict[int, np.ndarray]:
        """Returns the reference outputs on `cases`."""
        self._check(cases)
        return {case.index: self.outputs[REFERENCE][case.index] for case in cases}

    def reference_profile(self, case: Case) -> dict | None:
        """The reference's precision profile (its summary) on `case`, if the export stored one for it."""
        self._check([case])
        stored = self.profile
        if not isinstance(stored, dict) or stored.get("case") != case.index:
            return None
        return {"entries": [], "summary": stored.get("summary") or {}}

    def profiles(self, case: Case) -> dict[str, dict]:
        """The precision profiles (their summaries) of the reference and the pitfall files on `case`, by
        label, as far as the export stored them."""
        found = {}
        reference = self.reference_profile(case)
        if reference is not None:
            found[REFERENCE] = reference
        stored = self.pitfall_profile
        if isinstance(stored, dict) and stored.get("case") == case.index:
            for label, summary in (stored.get("summaries") or {}).items():
                if isinstance(summary, dict):
                    found[label] = {"entries": [], "summary": summary}
        return found

    def pitfalls(self, cases: list[Case]) -> dict[str, dict[int, np.ndarray]]:
        """Returns every stored pitfall file's outputs on `cases`, by label (`name` or `name--form`)."""
        self._check(cases)
        return {
            label: {case.index: by_case[case.index] for case in cases if case.index in by_case}
            for label, by_case in self.outputs.items()
            if label != REFERENCE
        }


def load_stored(problem: Problem) -> StoredOutputs | None:
    """Returns the problem's stored outputs, or None when it has none (an instructor's copy)."""
    return StoredOutputs(problem) if stored_path(problem).is_file() else None
