"""The on-disk cache of the course's outputs: it saves time and never changes a verdict. A changed
reference, JAX version or backend misses it; hidden-case outputs never reach it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grader import output_cache, trusted
from grader.cases import make_cases
from grader.grading import Grader
from grader.limits import Limits
from grader.results import Status
from grader.settings import CACHE_ENV
from grader.trusted import REFERENCE, TrustedOutputs, TrustedRequest


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A private cache folder, and no outputs remembered in this process."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(trusted, "_memo", {})
    return tmp_path / "cache" / "outputs"


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.npy")) if cache.exists() else []


def _needs_a_run(course, persist: bool = True) -> bool:
    """Whether the reference's practice outputs would have to be computed, with nothing in memory."""
    trusted._memo.clear()
    problem = course.problem("toy")
    request = TrustedRequest(problem, {REFERENCE: course.reference_path(problem)}, make_cases(problem))
    outputs = TrustedOutputs([request], Limits(), persist=persist)  # not started: no child runs
    return bool(outputs.jobs)


def _grade(course, submission: Path, secret: str | None = None):
    return Grader(course, secret=secret).grade_file(course.problem("toy"), submission)


def test_a_warm_cache_serves_every_output_and_gives_the_same_verdict(toy_course, cache, monkeypatch):
    pitfall = toy_course.root / "solutions" / "pitfalls" / "toy" / "forgot_scale.py"
    cold = _grade(toy_course, pitfall)
    assert _entries(cache), "practice outputs of the reference and the pitfalls were kept"
    monkeypatch.setattr(trusted, "_memo", {})
    assert not _needs_a_run(toy_course), "every output comes from the disk"
    warm = _grade(toy_course, pitfall)
    assert (warm.status, warm.pitfall, warm.message) == (cold.status, cold.pitfall, cold.message)
    for mine, theirs in zip(warm.cases, cold.cases, strict=True):
        assert np.array_equal(mine.expected, theirs.expected) and mine.expected.dtype == theirs.expected.dtype


def test_a_changed_reference_misses_the_cache(toy_course, cache, monkeypatch):
    solution = toy_course.root / "solutions" / "toy.py"
    correct = toy_course.root / "correct.py"
    correct.write_text(solution.read_text())
    assert _grade(toy_course, correct).status is Status.PASS
    solution.write_text(solution.read_text().replace("x.sum() * scale", "x.sum() * scale * 2"))
    monkeypatch.setattr(trusted, "_memo", {})
    assert _needs_a_run(toy_course)
    assert _grade(toy_course, correct).status is Status.FAIL, "graded against the new reference"


def test_another_jax_version_or_backend_misses_the_cache(toy_course, cache, monkeypatch):
    _grade(toy_course, toy_course.root / "solutions" / "toy.py")
    monkeypatch.setattr(trusted, "_memo", {})
    assert not _needs_a_run(toy_course)
    installed = output_cache._installed()
    other = tuple(item.replace("jax==", "jax==0.0.") for item in installed)
    assert other != installed
    monkeypatch.setattr(output_cache, "_installed", lambda: other)
    assert _needs_a_run(toy_course), "another JAX version"
    monkeypatch.setattr(output_cache, "_installed", lambda: installed)
    monkeypatch.setenv("JAX_PLATFORMS", "cuda")
    assert _needs_a_run(toy_course), "another backend"
    monkeypatch.delenv("JAX_PLATFORMS")
    assert not _needs_a_run(toy_course)


def test_hidden_case_outputs_never_reach_the_disk(toy_course, cache):
    """Grading in hidden mode keeps the public practice outputs it names mistakes with, and nothing else."""
    problem = toy_course.problem("toy")
    pitfall = toy_course.root / "solutions" / "pitfalls" / "toy" / "forgot_scale.py"
    assert _grade(toy_course, pitfall, secret="hidden-cache-secret").status is Status.FAIL
    files = [toy_course.reference_path(problem), *toy_course.pitfall_paths(problem).values()]
    digests = [trusted._digest(path, problem) for path in files]

    def keys(cases):
        return {output_cache.entry_key(digest, case) for digest in digests for case in cases}

    written = {path.stem for path in _entries(cache)}
    assert written and written <= keys(make_cases(problem))
    assert not written & keys(make_cases(problem, "hidden-cache-secret"))


def test_a_damaged_entry_is_recomputed_not_believed(toy_course, cache, monkeypatch):
    correct = toy_course.root / "correct.py"
    correct.write_text((toy_course.root / "solutions" / "toy.py").read_text())
    _grade(toy_course, correct)
    for entry in _entries(cache):
        entry.write_bytes(b"not an array")
    monkeypatch.setattr(trusted, "_memo", {})
    assert _needs_a_run(toy_course)
    assert _grade(toy_course, correct).status is Status.PASS


def test_the_cache_can_be_turned_off(toy_course, cache, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, "off")
    _grade(toy_course, toy_course.root / "solutions" / "toy.py")
    assert _entries(cache) == []
