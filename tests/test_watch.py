"""`grade watch`: a save re-grades the problem, a burst of saves is graded once, a stub that does not parse or
hangs is reported and the loop goes on, and a pass moves on to the next unfinished problem. Real files in a
temporary checkout, real file events (watchfiles), real grading."""

from __future__ import annotations

import itertools
import queue
import threading
import time

from grader.classroom.watch import stub_changes, watch_loop
from grader.course import progress
from grader.course.checkout import LearnerCheckout
from grader.grading.grader import Grader
from grader.results import Status
from grader.running.limits import Limits

SOLVED_TOY = (
    "import numpy as np\n\n\ndef scaled_sum(x, scale):\n"
    "    return np.array([x.sum() * scale, x.max()], np.float32)\n"
)
SOLVED_MAX = "import numpy as np\n\n\ndef largest(x):\n    return np.array([x.max()], np.float32)\n"
BROKEN = "def scaled_sum(x, scale)\n    return x\n"
HANGS = "def scaled_sum(x, scale):\n    while True:\n        pass\n"


def test_watch_regrades_each_save_survives_broken_code_and_moves_on_after_a_pass(toy_course):
    checkout = LearnerCheckout(toy_course.root)
    problems = toy_course.problems()
    toy, toy_max = problems
    grader = Grader(toy_course, limits=Limits(timeout=2))
    graded: queue.Queue = queue.Queue()
    said: list[str] = []

    def grade(problem):
        result = grader.grade_file(problem, checkout.stub(problem))
        progress.record_result(checkout.root, result, checkout.stub(problem), grader.mode)
        graded.put((problem.id, result.status, result.message))
        return result

    def passed(problem):
        return progress.status(checkout, problem) == "passed"

    def next_grade():
        return graded.get(timeout=60)

    stop = threading.Event()
    outcome: list[int] = []
    changes = stub_changes(checkout, stop)
    thread = threading.Thread(
        target=lambda: outcome.append(
            watch_loop(problems, checkout, toy, grade, said.append, changes, passed)
        )
    )
    thread.start()
    try:
        assert next_grade()[:2] == ("toy", Status.ERROR), "the untouched stub, graded at the start"
        time.sleep(0.5)  # the watcher is set up while the first grade runs
        checkout.stub(toy).write_text(BROKEN)
        problem, status, message = next_grade()
        assert (problem, status) == ("toy", Status.ERROR) and "SyntaxError" in message
        checkout.stub(toy).write_text(HANGS)
        problem, status, message = next_grade()
        assert (problem, status) == ("toy", Status.ERROR) and "timed out" in message
        saved_at = []
        for version in range(5):  # a burst of saves 0.08 s apart, the last one right: graded once
            checkout.stub(toy).write_text(BROKEN if version < 4 else SOLVED_TOY)
            saved_at.append(time.monotonic())
            time.sleep(0.08)
        gaps = [round(later - earlier, 3) for earlier, later in itertools.pairwise(saved_at)]
        problem, status, message = next_grade()
        assert (problem, status) == ("toy", Status.PASS), f"{message} (seconds between saves: {gaps})"
        assert next_grade()[:2] == ("toy_max", Status.ERROR), "after a pass, the next unfinished problem"
        assert any("toy passed. Next: toy_max" in line for line in said)
        checkout.stub(toy_max).write_text(SOLVED_MAX)
        assert next_grade()[:2] == ("toy_max", Status.PASS)
        thread.join(timeout=30)
        assert outcome == [0] and said[-1].startswith("Every problem passed")
        assert graded.empty(), "one grade per burst, none after the last pass"
    finally:
        stop.set()
        thread.join(timeout=30)
