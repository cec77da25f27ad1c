"""The child process: library frames cut from learners' tracebacks, and the compilation caches.

Every broken and hostile submission file is graded in test_hostile.py."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import TEST_SECRET

from grader.course.cases import make_cases
from grader.grading.grader import Grader
from grader.results import Status
from grader.running.limits import Limits
from grader.settings import Settings


@pytest.fixture
def grade(toy_course):
    grader = Grader(toy_course, limits=Limits(timeout=20, start_timeout=60))
    problem = toy_course.problem("toy")
    return lambda path: grader.grade_file(problem, path)


def test_exception_traceback_is_trimmed_to_the_learners_frames(grade, write_submission):
    source = """\
import numpy as np


def helper(x):
    return np.linalg.inv(x)


def scaled_sum(x, scale):
    return helper(x)
"""
    result = grade(write_submission(source, "mine.py"))
    assert result.status is Status.ERROR
    trace = result.cases[0].traceback
    assert "mine.py" in trace and "in helper" in trace and "LinAlgError" in trace
    assert "numpy/linalg" not in trace, "library frames are cut"


def test_course_code_and_each_learner_keep_separate_compilation_caches(
    toy_course, write_submission, cache_folder, settings
):
    assert settings.compilation_cache(None) == cache_folder / "jax-course"
    alice, bob = settings.compilation_cache("/roster/alice"), settings.compilation_cache("/roster/bob")
    assert alice.parent == bob.parent == cache_folder / "jax-learners" and alice != bob
    assert settings.compilation_cache("") is None, "an unnamed learner keeps nothing"
    off = dataclasses.replace(settings, landlock=False)
    assert off.compilation_cache("/roster/alice") is None, "without Landlock nothing keeps learners apart"
    source = """\
import jax.numpy as jnp


def scaled_sum(x, scale):
    return jnp.stack([x.sum() * scale, x.max()])
"""
    grader = Grader(toy_course, limits=Limits(settings=settings))
    path = write_submission(source)
    result = grader.grade_file(toy_course.problem("toy"), path)
    assert result.status is Status.PASS
    mine = settings.compilation_cache(str(path.absolute()))
    assert any(mine.iterdir()), "the submission's kernels were kept, in its own folder"
    assert not (cache_folder / "jax-submissions").exists(), "no folder shared by every learner"


def test_a_step_jitted_inside_the_function_compiles_once_per_shape_not_once_per_case(
    toy_course, write_submission, settings
):
    """Every child hoists the arrays a jitted function closes over into arguments of its program
    (settings.HOISTED_CONSTANTS_ENV), so cases of one shape share a program from the compilation cache: the
    toy's four hidden cases have two shapes (4 and 64 entries). Baked in as constants, each case's `x`
    would make a program of its own, four in all."""
    source = """\
import jax
import jax.numpy as jnp


def scaled_sum(x, scale):
    x = jnp.asarray(x)

    @jax.jit
    def closed_over(s):
        return jnp.stack([x.sum() * s, x.max()])

    return closed_over(jnp.float32(scale))
"""
    path = write_submission(source)
    problem = toy_course.problem("toy")
    grader = Grader(toy_course, secret=TEST_SECRET, limits=Limits(settings=settings))
    result = grader.grade_file(problem, path)
    assert result.status is Status.PASS and len(result.cases) == 4
    shapes = {case.inputs["x"].shape for case in make_cases(problem, TEST_SECRET)}
    assert len(shapes) == 2
    kept = settings.compilation_cache(str(path.absolute()))
    programs = [entry for entry in kept.rglob("*") if "closed_over" in entry.name]
    assert len(programs) == len(shapes), sorted(entry.name for entry in programs)


def test_the_compilation_cache_can_be_turned_off_without_changing_a_verdict(toy_course, settings):
    pitfall = toy_course.root / "solutions" / "pitfalls" / "toy" / "forgot_scale.py"
    problem = toy_course.problem("toy")
    cached = Grader(toy_course, limits=Limits(settings=settings)).grade_file(problem, pitfall)
    off = Settings.from_environment({"GRADE_CACHE_DIR": "off"})
    assert off.compilation_cache("/roster/alice") is None
    uncached = Grader(toy_course, limits=Limits(settings=off)).grade_file(problem, pitfall)
    assert [c.got.tolist() for c in cached.cases] == [c.got.tolist() for c in uncached.cases]
    assert cached.pitfall == uncached.pitfall


def test_problems_share_a_child_yet_keep_their_prints_and_survive_a_hang(toy_course, write_submission):
    hangs = write_submission(
        "def scaled_sum(x, scale):\n    print('printed by toy')\n    while True:\n        pass\n", "toy.py"
    )
    correct = write_submission(
        "import numpy as np\n\n\ndef largest(x):\n    print('printed by toy_max')\n"
        "    return np.array([x.max()], np.float32)\n",
        "toy_max.py",
    )
    grader = Grader(toy_course, limits=Limits(timeout=2, start_timeout=60))
    first, second = grader.grade_files(
        [(toy_course.problem("toy"), hangs), (toy_course.problem("toy_max"), correct)]
    )
    assert first.status is Status.ERROR and "timed out after 2 s" in first.message
    assert second.status is Status.PASS, "a fresh child took over after the hang"
    assert "printed by toy" in first.stdout and "printed by toy_max" not in first.stdout
    assert "printed by toy_max" in second.stdout and "printed by toy" not in second.stdout.replace(
        "toy_max", ""
    )
