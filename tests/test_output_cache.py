"""The on-disk cache of the course's outputs: it saves time and never changes a verdict. A changed
reference, JAX version or backend misses it; hidden-case outputs reach the disk only through `grade
prepare`, in a folder only its owner can open."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grader.command.main import main
from grader.course.cases import make_cases
from grader.expected import output_cache, trusted
from grader.expected.trusted import REFERENCE, TrustedOutputs, TrustedRequest
from grader.grading.grader import Grader
from grader.results import Status
from grader.running.isolation import IsolatedRun
from grader.running.limits import Limits
from grader.settings import CACHE_ENV, Settings


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A private cache folder, and no outputs remembered in this process."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(trusted, "_memo", {})
    monkeypatch.setattr(trusted, "_profiles", {})  # kept in the private store only, forgotten after
    return tmp_path / "cache" / "outputs"


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.npy")) if cache.exists() else []


def _needs_a_run(course) -> bool:
    """Whether the reference's practice outputs would have to be computed, with nothing in memory."""
    trusted._memo.clear()
    problem = course.problem("toy")
    request = TrustedRequest(problem, {REFERENCE: course.reference_path(problem)}, make_cases(problem))
    store = output_cache.practice_store(Settings.from_environment())
    outputs = TrustedOutputs([request], Limits(), store)  # not started: no child runs
    return bool(outputs.jobs)


def _grade(course, submission: Path, secret: str | None = None):
    """Grades as a command would: with the settings (the cache folder) the environment gives now."""
    limits = Limits(settings=Settings.from_environment())
    return Grader(course, secret=secret, limits=limits).grade_file(course.problem("toy"), submission)


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


def test_a_passing_answer_keeps_the_reference_profile_so_a_warm_run_starts_only_the_learners_child(
    toy_course, cache, monkeypatch
):
    """The reference's precision profile is traced beside every run (a failed answer's report needs it at
    once); a passing answer never reads it, and a run that then dropped it had every later warm run start a
    trusted child of its own for it again (a second JAX process beside the learner's, on a 2-core machine)."""
    started = []
    run_child = IsolatedRun._run_child

    def counted(self, jobs):
        started.append(self.trusted)
        return run_child(self, jobs)

    monkeypatch.setattr(IsolatedRun, "_run_child", counted)
    correct = toy_course.root / "solutions" / "toy.py"
    assert _grade(toy_course, correct).status is Status.PASS
    assert started == [True, False], "the first run traces the reference beside the learner's child"
    monkeypatch.setattr(trusted, "_memo", {})
    monkeypatch.setattr(trusted, "_profiles", {})  # a new process: only the disk remembers
    started.clear()
    assert _grade(toy_course, correct).status is Status.PASS
    assert started == [False], "a warm run starts the learner's child alone"


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
    assert not _needs_a_run(toy_course), "the children still run on the CPU (GRADE_BACKEND=cpu by default)"
    monkeypatch.setenv("GRADE_BACKEND", "native")
    assert _needs_a_run(toy_course), "another backend"
    monkeypatch.delenv("JAX_PLATFORMS")
    monkeypatch.delenv("GRADE_BACKEND")
    assert not _needs_a_run(toy_course)


def test_hidden_case_outputs_never_reach_the_disk(toy_course, cache):
    """Grading in hidden mode keeps the public practice outputs it names mistakes with, and nothing else."""
    problem = toy_course.problem("toy")
    pitfall = toy_course.root / "solutions" / "pitfalls" / "toy" / "forgot_scale.py"
    assert _grade(toy_course, pitfall, secret="hidden-cache-secret").status is Status.FAIL
    files = [toy_course.reference_path(problem), *toy_course.pitfall_paths(problem).values()]
    digests = [trusted.file_digest(path.read_bytes(), problem) for path in files]

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


def _trusted_children(monkeypatch) -> list[list[str]]:
    """Records the jobs of every trusted child started from now on."""
    started: list[list[str]] = []
    real_start = IsolatedRun.start

    def start(run):
        if run.trusted:
            started.append([job.label for job in run.jobs])
        return real_start(run)

    monkeypatch.setattr(IsolatedRun, "start", start)
    return started


def test_prepare_keeps_the_hidden_reference_outputs_so_hidden_grading_runs_no_reference(
    toy_course, cache, monkeypatch, capsys
):
    secret = "prepared-secret"
    pitfall = toy_course.root / "solutions" / "pitfalls" / "toy" / "forgot_scale.py"
    correct = toy_course.root / "correct.py"
    correct.write_text((toy_course.root / "solutions" / "toy.py").read_text())
    live = [_grade(toy_course, path, secret) for path in (correct, pitfall)]
    hidden = cache.parent / "hidden-outputs"
    assert not hidden.exists(), "grading alone never writes hidden-case outputs"

    monkeypatch.setenv("GRADE_SECRET", secret)
    assert main(["prepare"]) == 0
    assert "hidden outputs kept in" in capsys.readouterr().out
    assert hidden.stat().st_mode & 0o777 == 0o700
    entries = sorted(hidden.rglob("*.npy"))
    assert entries and all(entry.stat().st_mode & 0o077 == 0 for entry in entries)

    monkeypatch.setattr(trusted, "_memo", {})
    started = _trusted_children(monkeypatch)
    prepared = [_grade(toy_course, path, secret) for path in (correct, pitfall)]
    assert started == [], "the reference's hidden outputs and the pitfalls' practice outputs came from disk"
    for before, after in zip(live, prepared, strict=True):
        assert (after.status, after.pitfall, after.message) == (before.status, before.pitfall, before.message)
        for mine, theirs in zip(after.cases, before.cases, strict=True):
            assert np.array_equal(mine.expected, theirs.expected)
    assert prepared[0].status is Status.PASS and prepared[1].pitfall.name == "forgot_scale"

    assert _grade(toy_course, correct, "another-secret").status is Status.PASS
    assert started and started[0] == ["toy/reference"], "another secret's cases are not found: computed live"


def test_prepare_refuses_when_the_cache_is_off(toy_course, cache, monkeypatch, capsys):
    monkeypatch.setenv(CACHE_ENV, "off")
    monkeypatch.setenv("GRADE_SECRET", "prepared-secret")
    assert main(["prepare"]) == 2
    assert "nowhere to keep hidden outputs" in capsys.readouterr().err
