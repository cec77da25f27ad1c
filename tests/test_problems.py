"""Every problem is sound, as `grade check` measures it: complete files, the stub fails as not implemented,
the reference passes practice and hidden cases, every pitfall file fails far from the reference on the
families built for it and is named as its own pitfall on the hidden cases of every secret, every
correct variant stays well inside the tolerance (DESIGN section 4), and every natural mistake fails
everywhere and is never named by a pitfall that does not reproduce it. Parametrised over problems and their
files, so a new problem is covered the moment its folder exists; one `check_problems` run (the `checks`
fixture of conftest.py), shared by every test here and the other `course` tests, computes it all in a few
child processes."""

from __future__ import annotations

import pytest
from conftest import COURSE, PROBLEMS, problem_params

from grader.authoring.check import DEFAULT_SECRETS, PITFALL_AIM, VARIANT_AIM
from grader.authoring.check_files import Verdict
from grader.grading.grader import Grader
from grader.results import Status
from grader.running.limits import Limits

# The course's own soundness: `python -m pytest -m course` (.ci/run runs it after the README's test command).
pytestmark = pytest.mark.course


def _finding(checks, problem, kind, name):
    check = checks[problem.id]
    found = [f for f in check.findings if f.kind == kind and f.name == name]
    assert found, f"{problem.id}: nothing checked for {kind} {name}:\n{check.render()}"
    return found[0]


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.id)
def test_files_are_complete_and_consistent(problem, checks):
    shortfalls = [f"{f.name}: {f.detail}" for f in checks[problem.id].findings if f.kind == "files"]
    assert not shortfalls, "\n".join(shortfalls)


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.id)
def test_untouched_stub_fails_as_not_implemented(problem, checks):
    finding = _finding(checks, problem, "stub", "stub.py")
    assert finding.verdict is Verdict.OK, finding.detail


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.id)
def test_reference_passes_practice_and_hidden_cases(problem, checks):
    finding = _finding(checks, problem, "reference", "reference")
    assert finding.verdict is Verdict.OK, finding.detail


@pytest.mark.parametrize(("problem", "label"), problem_params(lambda p: list(COURSE.pitfall_paths(p))))
def test_pitfall_fails_far_from_the_reference_and_is_named_on_every_secret(problem, label, checks):
    finding = _finding(checks, problem, "pitfall", label)
    assert finding.verdict is Verdict.OK, finding.detail
    if problem.families_of(label):
        assert finding.ratio >= PITFALL_AIM


@pytest.mark.parametrize(("problem", "variant"), problem_params(lambda p: list(COURSE.variant_paths(p))))
def test_correct_variant_stays_well_inside_the_tolerance(problem, variant, checks):
    finding = _finding(checks, problem, "variant", variant)
    assert finding.verdict is Verdict.OK and finding.ratio <= VARIANT_AIM, finding.detail


@pytest.mark.parametrize(("problem", "mistake"), problem_params(lambda p: list(COURSE.mistake_paths(p))))
def test_natural_mistake_fails_on_every_secret_and_is_never_named_wrongly(problem, mistake, checks):
    """Naming's precision: a mistake no pitfall describes fails everywhere and is left unnamed, or named
    only by a pitfall whose files reproduce it on every case of every secret."""
    finding = _finding(checks, problem, "mistake", mistake)
    assert finding.verdict is Verdict.OK, finding.detail


def _named_pitfall_label(problem) -> str:
    """The pitfall file graded as a submission: the first whose pitfall lists families."""
    return next(label for label in COURSE.pitfall_paths(problem) if problem.families_of(label))


@pytest.fixture(scope="module")
def pitfalls_graded(request, checks, settings) -> dict:
    """One pitfall file of each selected problem graded as one learner's submissions, in practice mode and in
    hidden mode (the check's first secret, whose outputs the check has computed): one child per mode for
    all of them, as `grade --all` grades a learner, instead of one per problem and mode."""
    wanted = {
        item.callspec.params["problem"].id
        for item in request.session.items
        if "pitfalls_graded" in getattr(item, "fixturenames", ())
    }
    items = [
        (problem, COURSE.pitfall_paths(problem)[_named_pitfall_label(problem)])
        for problem in PROBLEMS
        if problem.id in wanted
    ]
    graded = {}
    for secret in (None, DEFAULT_SECRETS[0]):
        grader = Grader(COURSE, secret=secret, limits=Limits(timeout=300, settings=settings))
        for (problem, _), result in zip(items, grader.grade_files(items), strict=True):
            graded[(problem.id, secret)] = result
    return graded


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.id)
def test_the_grader_names_a_pitfall_file_graded_as_a_submission_the_same_in_both_modes(
    problem, pitfalls_graded
):
    """The check names pitfalls from the trusted outputs; the grader must name them the same way when the
    file is graded as a learner's submission, in a learner's child, in practice and in hidden mode."""
    label = _named_pitfall_label(problem)
    names = {}
    for secret in (None, DEFAULT_SECRETS[0]):
        result = pitfalls_graded[(problem.id, secret)]
        assert result.status is not Status.PASS, f"{label} passed with secret {secret!r}"
        names[secret] = [
            m.name for m in ([result.pitfall] if result.pitfall else []) + list(result.also_matches)
        ]
    assert problem.pitfall(label).name in names[None], names
    assert names[None] == names[DEFAULT_SECRETS[0]]
