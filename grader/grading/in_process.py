"""A function object called in this process, for notebooks (`Grader.grade_function`): its calls on the
practice cases, and its precision profile. Learner code here can read what this process holds, which is
why only practice cases come here."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

from grader.child.calls import call_case, load_harness
from grader.course.cases import Case
from grader.course.problems import Problem
from grader.profile.profiler import profile
from grader.protocol.payloads import decode_profile, decode_raised, decode_returned
from grader.running.outcomes import CaseOutcome, RunOutcome
from grader.settings import jax_platforms


def _source(fn: Callable) -> Path:
    """The file a function object was defined in (a notebook cell's own file name, in a kernel)."""
    return Path(getattr(getattr(fn, "__code__", None), "co_filename", "<notebook>"))


@contextlib.contextmanager
def grading_device() -> Iterator[None]:
    """Runs what it holds on the CPU unless GRADE_BACKEND=native: the outputs a notebook compares with were
    made on the CPU, and the cases' margins were measured there (docs/platforms.md). On a GPU runtime the
    learner's function would otherwise run on the GPU, where correct answers of several problems fail.
    The learner's code imported jax already; this imports nothing new where it did not."""
    if jax_platforms() != "cpu":
        yield
        return
    import jax

    try:
        cpu = jax.devices("cpu")[0]
    except RuntimeError:  # a runtime without the CPU backend (JAX_PLATFORMS=cuda in the kernel)
        yield
        return
    backend = jax.default_backend()
    if backend != "cpu":
        warnings.warn(accelerator_note(backend), stacklevel=3)
    with jax.default_device(cpu):
        yield


def accelerator_note(backend: str) -> str:
    """Why a verdict given in a process whose JAX default backend is `backend` (not the CPU) is not the one
    the course measured: what was seen on a GPU runtime (docs/platforms.md)."""
    return (
        f"JAX's default backend in this process is {backend}. Your function is graded on the CPU, but "
        "code that looks devices up (jax.devices(), an Orbax restore without a CPU target) still finds "
        f"the {backend}, and on a GPU some mistakes lose their names. For the verdict the course "
        "measured, restart and set os.environ['JAX_PLATFORMS'] = 'cpu' before jax is imported (the "
        "notebooks' set-up cell does)."
    )


def call_in_process(problem: Problem, fn: Callable, cases: list[Case]) -> RunOutcome:
    """Calls a function object on `cases` in this process (through the problem's harness, if any)."""
    outcome = RunOutcome(label="learner")
    source, harness = _source(fn), load_harness(str(problem.harness_path or ""))
    scratch = Path(tempfile.mkdtemp(prefix="grade-")) if harness else None
    try:
        with grading_device():
            for case in cases:
                folder = scratch / f"case-{case.index}" if scratch else None
                ran = call_case(fn, case.inputs, source, harness, folder)
                outcome.cases[case.index] = CaseOutcome(
                    index=case.index,
                    seconds=ran["seconds"],
                    returned=decode_returned(ran["returned"]) if "returned" in ran else None,
                    raised=decode_raised(ran["raised"]) if "raised" in ran else None,
                )
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    return outcome


def trace_in_process(problem: Problem, fn: Callable, case: Case) -> dict:
    """The precision profile of a function object on `case`, traced in this process (grade_function's)."""
    source, harness = _source(fn), load_harness(str(problem.harness_path or ""))
    folder = Path(tempfile.mkdtemp(prefix="grade-profile-"))
    try:
        with grading_device():
            return decode_profile(profile(fn, case.inputs, source, harness, folder))
    except Exception as exc:  # advice only: never the grade's end
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
