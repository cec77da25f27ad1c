"""Where JAX may run on a GPU, a learner's child must be able to start CUDA and must not take the card's
memory up front. Both were measured on an H200 (benchmarks/measured/): in a PID namespace cuInit fails with
CUDA_ERROR_OPERATING_SYSTEM and JAX falls back to the CPU while the reference runs on the GPU; and a child
that preallocates holds about 4 GiB of host memory, over the default limit. These tests run on any machine:
they pretend a GPU plugin is installed."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from leftover_processes import live_processes_named, within

from grader import grade_function
from grader.classroom.notebooks import setup_source
from grader.errors import CourseError
from grader.expected.output_cache import platform_fingerprint
from grader.grading.grader import Grader
from grader.results import Status
from grader.running import packages, sandbox
from grader.running.limits import Limits
from grader.settings import Settings, jax_platforms

FOLDER = Path(__file__).parent / "submissions"


@pytest.mark.parametrize(
    ("plugin", "platforms", "expected"),
    [
        (True, "", True),
        (True, "cuda", True),
        (True, "cpu", False),
        (False, "", False),
        (True, "cpu,cuda", True),
    ],
)
def test_with_grade_backend_native_a_gpu_may_be_used_where_a_plugin_is_installed_and_jax_platforms_allows_it(
    monkeypatch, plugin, platforms, expected
):
    monkeypatch.setattr(packages, "gpu_plugin_installed", lambda: plugin)
    monkeypatch.setenv("JAX_PLATFORMS", platforms)
    monkeypatch.setenv("GRADE_BACKEND", "native")
    assert packages.may_use_gpu() is expected
    monkeypatch.delenv("GRADE_BACKEND")  # the default: every child on the CPU, whatever JAX_PLATFORMS says
    assert packages.may_use_gpu() is False


@pytest.mark.parametrize(
    ("backend", "platforms", "expected"),
    [
        (None, None, "cpu"),
        (None, "cuda", "cpu"),
        ("cpu", "cuda", "cpu"),
        ("native", "cuda", "cuda"),
        ("native", None, None),
        (" Native ", "cpu,cuda", "cpu,cuda"),
    ],
)
def test_children_run_on_the_cpu_unless_grade_backend_is_native(
    monkeypatch, tmp_path, backend, platforms, expected
):
    for name, value in (("GRADE_BACKEND", backend), ("JAX_PLATFORMS", platforms)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    assert jax_platforms() == expected
    for learner in ("someone", None):  # the learner's child and the course's own
        env = Settings().child_environment(tmp_path, learner=learner, sandboxed=False)
        assert env.get("JAX_PLATFORMS") == expected


def test_an_unknown_grade_backend_is_refused_with_the_values_it_takes(monkeypatch):
    monkeypatch.setenv("GRADE_BACKEND", "gpu")
    with pytest.raises(CourseError, match="cpu \\(the default\\) or native"):
        jax_platforms()


def test_stored_outputs_are_keyed_by_the_backend_the_children_run_on(monkeypatch):
    monkeypatch.delenv("GRADE_BACKEND", raising=False)
    monkeypatch.delenv("JAX_PLATFORMS", raising=False)
    on_cpu = platform_fingerprint()
    monkeypatch.setenv("JAX_PLATFORMS", "cuda")
    assert platform_fingerprint() == on_cpu  # the children still run on the CPU
    monkeypatch.setenv("GRADE_BACKEND", "native")
    assert platform_fingerprint() != on_cpu


@pytest.mark.parametrize(("backend", "device"), [(None, "cpu"), ("native", None)])
def test_a_notebooks_function_is_graded_on_the_cpu_unless_grade_backend_is_native(
    toy_course, monkeypatch, backend, device
):
    import jax

    if backend is None:
        monkeypatch.delenv("GRADE_BACKEND", raising=False)
    else:
        monkeypatch.setenv("GRADE_BACKEND", backend)
    seen = []

    def scaled_sum(x, scale):
        seen.append(jax.config.jax_default_device)
        return np.array([x.sum() * scale, x.max()], dtype=np.float32)

    assert grade_function("toy", scaled_sum).status is Status.PASS
    assert seen and all(getattr(d, "platform", d) == device for d in seen)
    assert jax.config.jax_default_device is None  # and put back after the calls


@pytest.mark.parametrize(("gpu", "mode"), [(False, ["isolate"]), (True, ["gpu"])])
def test_a_learners_child_enters_a_pid_namespace_only_where_no_gpu_may_be_used(monkeypatch, gpu, mode):
    monkeypatch.setattr(sandbox, "may_use_gpu", lambda: gpu)
    assert sandbox.process_mode(Limits(), trusted=False) == mode
    assert sandbox.process_mode(Limits(), trusted=True) == []  # the course's own code never does
    off = Limits(settings=Settings(unprotected=frozenset({"process-namespace"})))
    assert sandbox.process_mode(off, trusted=False) == []


def test_on_a_gpu_install_the_child_says_why_no_namespace_held_and_its_leftovers_are_still_killed(
    toy_course, monkeypatch
):
    monkeypatch.setattr(sandbox, "may_use_gpu", lambda: True)
    grader = Grader(toy_course, secret="gpu-tests", limits=Limits(timeout=30))
    result = grader.grade_file(toy_course.problem("toy"), FOLDER / "leaves_a_process_behind.py")
    assert result.status is Status.PASS, result.message
    assert result.sandbox is not None and not result.sandbox.processes
    assert "no PID namespace (JAX may use a GPU here" in result.sandbox.describe()
    gone = within(3, lambda: not live_processes_named(b"left-behind"))
    assert gone, "the process the submission left behind outlived the run"


@pytest.mark.parametrize(("set_by_user", "expected"), [(None, "false"), ("true", "true")])
def test_a_child_asks_for_gpu_memory_as_it_goes_unless_the_user_says_otherwise(
    monkeypatch, tmp_path, set_by_user, expected
):
    if set_by_user is None:
        monkeypatch.delenv("XLA_PYTHON_CLIENT_PREALLOCATE", raising=False)
    else:
        monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", set_by_user)
    monkeypatch.setenv("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.2")
    env = Settings().child_environment(tmp_path, learner="someone", sandboxed=False)
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == expected
    assert env["XLA_PYTHON_CLIENT_MEM_FRACTION"] == "0.2"


@pytest.mark.parametrize(("backend", "warned"), [("gpu", True), ("cpu", False)])
def test_grading_in_a_process_whose_default_backend_is_an_accelerator_says_what_that_changes(
    toy_course, monkeypatch, backend, warned
):
    import jax

    monkeypatch.delenv("GRADE_BACKEND", raising=False)
    monkeypatch.setattr(jax, "default_backend", lambda: backend)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert grade_function("toy", lambda x, scale: np.array([x.sum() * scale, x.max()], np.float32)).passed
    notes = [str(w.message) for w in caught if "JAX_PLATFORMS" in str(w.message)]
    assert bool(notes) is warned
    assert not notes or "default backend in this process is gpu" in notes[0]


def test_the_notebooks_set_jax_on_the_cpu_before_jax_is_first_imported():
    source = setup_source("..")
    assert 'os.environ["JAX_PLATFORMS"] = "cpu"' in source
    assert source.index('os.environ["JAX_PLATFORMS"]') < source.index("import grader")
    before = source.split('os.environ["JAX_PLATFORMS"]')[0]
    assert "import jax" not in before and "import grader" not in before


SAVE_ON_THE_SECOND_DEVICE = """
import jax, jax.numpy as jnp, orbax.checkpoint as ocp, sys
second = jax.devices()[1]
state = {"params": jax.device_put(jnp.ones(3, jnp.float32), second), "step": 3}
with ocp.StandardCheckpointer() as checkpointer:
    checkpointer.save(sys.argv[1], state)
"""


def test_the_checkpoint_harness_restores_arrays_saved_on_a_device_the_default_backend_does_not_list(tmp_path):
    """As a notebook on a GPU runtime saves on the CPU device that grading uses, while Orbax looks saved
    devices up among the GPU's: here a device that only the saving process had (two host devices)."""
    import importlib.util
    import os
    import subprocess
    import sys

    path = tmp_path / "state"
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2", "JAX_PLATFORMS": "cpu"}
    subprocess.run(
        [sys.executable, "-c", SAVE_ON_THE_SECOND_DEVICE, str(path)], env=env, check=True, timeout=120
    )
    harness_path = Path(__file__).parents[1] / "problems" / "checkpoint_resume" / "harness.py"
    spec = importlib.util.spec_from_file_location("checkpoint_harness", harness_path)
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    restored = harness._restore(path)
    assert restored["step"] == 3 and np.array_equal(np.asarray(restored["params"]), np.ones(3, np.float32))
