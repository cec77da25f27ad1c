"""Grading cases: practice cases with fixed seeds, hidden cases with seeds derived from a secret."""

from __future__ import annotations

import functools
import hashlib
import hmac
import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from grader.course.problems import Problem
from grader.errors import CourseError

SECRET_ENV = "GRADE_SECRET"
PROFILE_CASE = (
    0  # the practice case a submission and the reference are traced on (grader/profile/profiler.py)
)


@dataclass(frozen=True)
class Case:
    """The inputs of one call of the learner's function, in parameter order."""

    index: int
    family: str
    seed: int
    inputs: dict[str, Any]

    @property
    def label(self) -> str:
        return f"case {self.index + 1} ({self.family})"

    @functools.cached_property
    def digest(self) -> str:
        """A digest of the inputs (names, dtypes, shapes and every byte of every value), computed once: the
        output stores key every file's output on this case by it."""
        digest = hashlib.sha256()
        for name, value in self.inputs.items():
            array = np.asarray(value)
            digest.update(f"{name}|{array.dtype.str}|{array.shape}|".encode())
            digest.update(np.ascontiguousarray(array).tobytes())
        return digest.hexdigest()


def practice_seed(problem_id: str, index: int) -> int:
    """Returns the fixed seed of a practice case (public by design)."""
    digest = hashlib.sha256(f"{problem_id}/practice/{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def hidden_seed(secret: str, problem_id: str, index: int) -> int:
    """Returns HMAC-SHA256(secret, "<id>/hidden/<index>") as a 64-bit seed."""
    digest = hmac.new(secret.encode(), f"{problem_id}/hidden/{index}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


def load_families(problem: Problem) -> Mapping[str, Callable[[np.random.Generator], dict[str, Any]]]:
    """Returns the FAMILIES mapping of a problem's public case generator."""
    module = _load_module(problem)
    families = getattr(module, "FAMILIES", None)
    if not isinstance(families, Mapping) or not families:
        raise CourseError(f"{problem.cases_path}: defines no FAMILIES mapping")
    return families


def _load_module(problem: Problem) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_grader_cases_{problem.id}", problem.cases_path)
    if spec is None or spec.loader is None:
        raise CourseError(f"{problem.cases_path}: cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_cases(problem: Problem, secret: str | None = None) -> list[Case]:
    """Returns the practice cases (no secret) or the hidden cases of a problem."""
    families = load_families(problem)
    names = list(families)
    count = len(names) * (problem.hidden_cases_per_family if secret else 1)
    cases = []
    for index in range(count):
        family = names[index % len(names)]
        seed = hidden_seed(secret, problem.id, index) if secret else practice_seed(problem.id, index)
        inputs = families[family](np.random.default_rng(seed))
        if list(inputs) != list(problem.case_inputs):
            raise CourseError(
                f"{problem.cases_path}: family {family!r} returns {list(inputs)}, "
                f"expected the inputs {list(problem.case_inputs)}"
            )
        cases.append(Case(index=index, family=family, seed=seed, inputs=inputs))
    return cases


def describe_inputs(case: Case) -> str:
    """Returns a one-line summary of a case's inputs: scalars by value, arrays by dtype and shape."""
    parts = []
    for name, value in case.inputs.items():
        if isinstance(value, np.ndarray):
            parts.append(f"{name}: {value.dtype} {tuple(value.shape)}")
        else:
            parts.append(f"{name}={value!r}")
    return ", ".join(parts)
