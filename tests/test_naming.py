"""Naming a mistake on the practice cases: the same name in practice and hidden mode, a hidden-mode
submission runs them after its hidden cases, and nothing waits for them when it is not needed."""

from __future__ import annotations

import time

from grader.course.cases import make_cases
from grader.grading.grader import Grader
from grader.grading.naming import naming_label
from grader.results import Status
from grader.running.isolation import IsolatedRun
from grader.running.jobs import Job
from grader.running.limits import Limits
from grader.running.submission import Submission


def _names(result) -> list[str]:
    return [m.name for m in ([result.pitfall] if result.pitfall else []) + list(result.also_matches)]


def test_a_pitfall_file_is_named_the_same_in_practice_and_on_every_secret(toy_course):
    problem = toy_course.problem("toy")
    pitfall = toy_course.solutions_dir / "pitfalls" / "toy" / "forgot_scale.py"
    practice = Grader(toy_course).grade_file(problem, pitfall)
    assert _names(practice) == ["forgot_scale"]
    for secret in ("naming-1", "naming-2", "naming-3"):
        hidden = Grader(toy_course, secret=secret).grade_file(problem, pitfall)
        assert hidden.status is Status.FAIL and _names(hidden) == _names(practice), secret


def test_a_run_that_serves_a_stopped_job_is_not_started_again(toy_course, write_submission):
    """A submission that hangs on its hidden cases must not hang a second time on its practice cases."""
    problem = toy_course.problem("toy")
    hang = write_submission("import time\n\n\ndef scaled_sum(x, scale):\n    time.sleep(60)\n")
    submission = Submission.of_course_file(hang)
    jobs = [
        Job("toy", submission, problem, make_cases(problem, "s")),
        Job(naming_label("toy"), submission, problem, make_cases(problem), after="toy"),
    ]
    start = time.monotonic()
    run = IsolatedRun(jobs, Limits(timeout=2)).start()
    assert "timed out" in run.wait_for("toy").stopped
    assert run.wait_for(naming_label("toy")).stopped.startswith("not run")
    assert time.monotonic() - start < 30


def test_the_practice_run_runs_only_after_a_failed_hidden_run_and_reuses_what_it_loaded(
    toy_course, write_submission, monkeypatch
):
    """The child asks before the practice run; the grader says run only when the hidden run failed (or it
    cannot tell yet). A run that goes ahead reuses the function the hidden run imported: no second import."""
    problem = toy_course.problem("toy")
    answers: list[tuple[str, str, bool]] = []
    answer = IsolatedRun.answer

    def recorded(run, job, what):
        answers.append((job.label, what, answer(run, job, what)))
        return answers[-1][2]

    monkeypatch.setattr(IsolatedRun, "answer", recorded)
    close = IsolatedRun.close

    def close_when_over(run):  # a pass does not wait for the practice job: the test waits, so it always asks
        for job in run.jobs:
            run.wait_for(job.label)
        close(run)

    monkeypatch.setattr(IsolatedRun, "close", close_when_over)
    solution = (toy_course.solutions_dir / "toy.py").read_text()
    correct = write_submission('print("imported")\n' + solution, "correct.py")
    pitfall = toy_course.solutions_dir / "pitfalls" / "toy" / "forgot_scale.py"
    grader = Grader(toy_course, secret="asked", low_memory=True)  # the reference is ready before the ask
    assert grader.grade_file(problem, correct).status is Status.PASS
    assert answers == [(naming_label("toy"), "run", False)]
    assert grader.grade_file(problem, pitfall).pitfall.name == "forgot_scale"
    label = naming_label("toy")
    assert answers[1:] == [(label, "run", True), (label, "profile", True)]  # then traced: it failed

    submission = Submission.of_course_file(correct)
    jobs = [
        Job("toy", submission, problem, make_cases(problem, "s")),
        Job(naming_label("toy"), submission, problem, make_cases(problem), after="toy"),
    ]
    for run_it in (False, True):
        run = IsolatedRun(jobs, Limits(), needed=lambda job, hidden, what, run_it=run_it: run_it).start()
        assert run.wait_for("toy").stdout.count("imported") == 1
        practice = run.wait_for(naming_label("toy"))
        if run_it:
            assert practice.stopped == "" and len(practice.cases) == len(jobs[1].cases)
            assert "imported" not in practice.stdout, "reused, not imported again"
        else:
            assert practice.stopped == "not run: not needed" and not practice.cases
