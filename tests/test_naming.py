"""Naming a mistake on the practice cases: the same name in practice and hidden mode, a hidden-mode
submission runs them after its hidden cases, and nothing waits for them when it is not needed."""

from __future__ import annotations

import time

from grader.cases import make_cases
from grader.grading import Grader
from grader.isolation import IsolatedRun, Job
from grader.limits import Limits
from grader.naming import naming_label
from grader.results import Status


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
    jobs = [
        Job("toy", hang, problem, make_cases(problem, "s")),
        Job(naming_label("toy"), hang, problem, make_cases(problem), after="toy"),
    ]
    start = time.monotonic()
    run = IsolatedRun(jobs, Limits(timeout=2)).start()
    assert "timed out" in run.wait_for("toy").stopped
    assert run.wait_for(naming_label("toy")).stopped.startswith("not run")
    assert time.monotonic() - start < 30
