"""Precision profiles (grader/profile/profiler.py) and their comparison (grader/profile/compare.py): on one
practice case, every pitfall file whose mistake is about dtypes shows a difference from the reference that
names a line of that file, and every correct variant shows none. In this process: traced where tracing can
follow the code, run (recorded) where it cannot and where a harness makes the calls.

Every problem is profiled (PROFILED); every pitfall file is either expected to show a difference or listed
below with the reason it does not."""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import COURSE, PROBLEM_IDS

from grader.child.calls import load_harness
from grader.course.cases import make_cases
from grader.profile.compare import compare_profiles, runs_the_mistakes_dtypes
from grader.profile.profiler import ROLES, profile, signature

PROFILED = PROBLEM_IDS  # a new problem is profiled the moment it exists: its pitfalls show or are listed

_SAME_DTYPES = "the mistake changes the numbers or the order of operations, not a dtype"
_STATE = "what is saved, restored or counted between the calls, not a dtype"
NOT_ABOUT_DTYPES = {  # (problem, pitfall file): why no dtype difference is expected
    ("bf16_train_step", "grads_not_unscaled"): "the gradients are never divided by the scale: "
    + _SAME_DTYPES,
    ("dtype_casting", "no_loss_scaling"): "the loss is not multiplied by the scale: " + _SAME_DTYPES,
    ("dtype_casting", "schedule_step_off_by_one"): "the counter is read a step late: " + _SAME_DTYPES,
    ("dtype_casting", "step_not_incremented"): "the counter never moves: " + _SAME_DTYPES,
    ("mixed_precision_mlp", "relu_derivative_at_zero"): "the ReLU's slope at 0: " + _SAME_DTYPES,
    ("mixed_precision_mlp", "relu_derivative_at_zero--where_ge"): "the ReLU's slope at 0: " + _SAME_DTYPES,
    ("dynamic_loss_scaling", "nan_only_check"): "isnan where isfinite is needed: which values count as "
    "an overflow, not a dtype",
    ("checkpoint_resume", "save_not_finished"): "the save is not waited for: " + _STATE,
    **{
        ("loss_scaling", name): _SAME_DTYPES
        for name in ("always_clips", "clip_before_unscale", "grads_not_unscaled", "no_loss_scaling")
    },
    **{
        ("grad_accumulation", name): _SAME_DTYPES
        for name in (
            "accumulator_not_reset",
            "clipped_before_averaging",
            "clipped_before_unscaling",
            "clipped_per_micro_batch",
            "clipped_per_micro_batch--after_loss_division",
            "clipped_per_micro_batch--outside_multisteps",
            "divided_by_k_twice",
            "no_division_by_k",
            "no_division_by_k--multisteps_sum",
            "no_loss_scaling",
            "no_loss_scaling--loss_divided_by_k",
            "recorded_loss_divided_by_k",
            "step_per_micro_batch",
            "step_per_micro_batch--running_mean",
            "step_per_micro_batch--state_every_micro_batch",
            "window_off_by_one",
        )
    },
    **{  # the loss scale's schedule and the skipping of overflowing steps
        ("dynamic_loss_scaling", name): _SAME_DTYPES
        for name in (
            "counter_kept_on_overflow",
            "growth_one_step_late",
            "max_consecutive_errors_too_small",
            "max_consecutive_errors_too_small--ten",
            "min_scale_ignored",
            "never_grows",
            "no_backoff",
            "no_skip_on_overflow",
            "optimizer_state_advanced_on_skip",
            "optimizer_state_advanced_on_skip--keep_weights_take_nan_state",
            "optimizer_state_advanced_on_skip--keep_weights_take_state",
        )
    },
    **{
        ("checkpoint_resume", name): _STATE
        for name in (
            "counter_kept_on_overflow",
            "counter_reset",
            "optimizer_state_dropped",
            "restarted_from_inputs",
            "scale_reset",
            "schedule_counts_updates",
            "schedule_restarted",
        )
    },
    **{  # one fp16 product over the K * B rows of a window: the same dtypes, rounded once instead of K times
        ("grad_accumulation", name): _SAME_DTYPES
        for name in ("window_as_one_product", "window_as_one_product--summed_losses")
    },
    **{  # which steps update the average, by which formula, from which start, and which weights are scored
        ("weight_ema", name): _SAME_DTYPES
        for name in (
            "decay_swapped",
            "decay_swapped--residual",
            "ema_updated_on_skipped_step",
            "ema_zero_start",
            "ema_zero_start--debiased",
            "eval_with_training_weights",
        )
    },
    **{  # which statistics, which convention, which divisor: the running statistics stay fp32 in each
        ("conv_batchnorm", name): _SAME_DTYPES
        for name in (
            "momentum_swapped",
            "statistics_mode_swapped",
            "statistics_mode_swapped--running_in_training",
            "statistics_mode_swapped--updated_first",
            "unbiased_running_variance",
        )
    },
    **{  # the delayed scales: which amaxes they come from, and how they are applied
        ("fp8_delayed_scaling", name): _SAME_DTYPES
        for name in (
            "current_amax",
            "history_rolled_before_use",
            "history_rolled_before_use--x_and_w",
            "margin_ignored",
            "no_saturation",
            "scale_from_exp2",  # float32 either way: exp2's last bits, not a dtype
            "scale_from_exp2--exp2_of_k",
            "scale_from_exp2--inverse_scale",
            "scale_not_inverted",
            "zero_history_unguarded",
        )
    },
}
NOT_SHOWN_YET = {  # about dtypes, but the difference lies where the profile does not look
    ("checkpoint_resume", "saved_working_copy"): "the checkpoint holds the float16 copy: a dtype of what is "
    "saved, not of an operation (its float32 -> float16 cast is one the reference makes too); the "
    "harness rejects the checkpoint",
    ("conv_batchnorm", "variance_in_fp16--sum_of_squares_upcast"): "its fp16 means of z16 and z16 * z16 are "
    "float16 -> float16 reductions, a kind the reference runs too (its fp16 mean over the positions), "
    "and the profile compares kinds, not counts; its casts back to fp32 are ones the reference makes",
}


def _problem(problem_id: str):
    return COURSE.problem(problem_id)


@functools.cache
def _case(problem_id: str) -> dict:
    return make_cases(_problem(problem_id))[0].inputs


@functools.cache
def _harness(problem_id: str):
    path = _problem(problem_id).harness_path
    return load_harness(str(path)) if path is not None else None


@functools.cache
def _function(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(f"_profiled_{path.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # flax's dataclasses look their module up
    spec.loader.exec_module(module)
    return getattr(module, name)


def _profile(problem_id: str, path: Path) -> dict:
    fn = _function(path, _problem(problem_id).function)
    with tempfile.TemporaryDirectory() as folder:  # a fresh folder per run, as the child gives a harness
        return profile(fn, _case(problem_id), path, _harness(problem_id), Path(folder))


@functools.cache
def _reference(problem_id: str) -> dict:
    return _profile(problem_id, COURSE.reference_path(_problem(problem_id)))


def _differences(problem_id: str, path: Path) -> list[str]:
    return compare_profiles(_profile(problem_id, path), _reference(problem_id))


def _files(kind: str, select=lambda key: True) -> list:
    params = []
    for problem_id in PROFILED:
        problem = _problem(problem_id)
        paths = COURSE.pitfall_paths(problem) if kind == "pitfall" else COURSE.variant_paths(problem)
        params += [
            pytest.param(problem_id, path, id=f"{problem_id}-{name}")
            for name, path in paths.items()
            if select((problem_id, name))
        ]
    return params


@pytest.mark.parametrize("problem_id", PROFILED)
def test_the_reference_has_a_profile(problem_id):
    reference = _reference(problem_id)
    assert "error" not in reference, reference
    assert reference["summary"], "the reference shows no operation that matters"
    assert set(reference["summary"]) <= set(ROLES)
    json.dumps(reference)  # the child sends it as one JSON line


@pytest.mark.parametrize(
    ("problem_id", "path"), _files("pitfall", lambda key: key not in NOT_ABOUT_DTYPES | NOT_SHOWN_YET)
)
def test_a_pitfall_about_dtypes_shows_a_difference_on_its_own_line(problem_id, path):
    lines = _differences(problem_id, path)
    assert any(f"at {path.name}:" in line for line in lines), lines


@pytest.mark.parametrize(("problem_id", "path"), _files("pitfall", lambda key: key in NOT_SHOWN_YET))
def test_a_pitfall_listed_as_not_shown_yet_shows_nothing(problem_id, path):
    """Keeps NOT_SHOWN_YET honest: a file the profile learns to show moves out of it."""
    assert not any(f"at {path.name}:" in line for line in _differences(problem_id, path))


ACCEPTED_DEPARTURES = {  # variants the statement accepts though they run other dtypes than the recipe
    ("mixed_precision_mlp", "update_rounded_to_fp16"): "the fp32 update lr * g rounded to fp16 before it is "
    "subtracted: accepted (the grader cannot tell it apart), and the profile rightly shows the round trip",
    ("conv_batchnorm", "flax_modules_optax"): "flax.linen.BatchNorm takes the fp32 statistics of its "
    "fp16 input and normalizes it by mixing the two (fp16 promoted to fp32 inside flax): the recipe's "
    "numbers, and the profile rightly shows the mixing at the BatchNorm line",
    # not-graded rules' accepted files (problem.toml `accepted`): other dtypes, the recipe's numbers here
    ("bf16_train_step", "grads_left_bf16"): "the gradients left bf16 for the update: one bf16 rounding",
    ("mixed_precision_mlp", "loss_recorded_fp16"): "the recorded loss rounded through fp16",
    ("mixed_precision_mlp", "unscaled_in_fp16"): "the gradient divided by S in fp16, exact here",
    ("weight_ema", "unscaled_in_fp16"): "the gradient taken for the fp16 weights and divided by S in fp16",
    ("conv_batchnorm", "unscaled_in_fp16"): "the gradient divided by S in fp16, exact here",
}


@pytest.mark.parametrize(
    ("problem_id", "path"), _files("variant", lambda key: key not in ACCEPTED_DEPARTURES)
)
def test_a_correct_variant_shows_no_difference(problem_id, path):
    assert _differences(problem_id, path) == []


@pytest.mark.parametrize(("problem_id", "path"), _files("variant", lambda key: key in ACCEPTED_DEPARTURES))
def test_an_accepted_departure_from_the_recipe_shows_its_dtypes(problem_id, path):
    assert any(f"at {path.name}:" in line for line in _differences(problem_id, path))


def test_every_listed_file_exists():
    listed = {**NOT_ABOUT_DTYPES, **NOT_SHOWN_YET, **ACCEPTED_DEPARTURES}
    existing = {
        (problem_id, name)
        for problem_id in PROFILED
        for paths in (COURSE.pitfall_paths(_problem(problem_id)), COURSE.variant_paths(_problem(problem_id)))
        for name in paths
    }
    assert set(listed) <= existing, set(listed) - existing


def _learner_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "stub.py"
    path.write_text("import jax\nimport jax.numpy as jnp\n\n\n" + body)
    return path


def test_entries_carry_dtypes_and_the_submission_line(tmp_path):
    path = _learner_file(
        tmp_path,
        "def f(x, w, steps):\n"
        "    for _ in range(int(steps)):\n"
        "        x = jnp.tanh(x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16))\n"
        "    return jnp.exp(x.astype(jnp.float32)).sum()\n",
    )
    x, w = np.ones((4, 3), np.float32), np.ones((3, 3), np.float32)
    found = profile(_function(path, "f"), {"x": x, "w": w, "steps": 2}, path)
    matmuls = [e for e in found["entries"] if e["role"] == "matmul"]
    assert len(matmuls) == 2  # the Python loop, unrolled by the trace
    assert matmuls[0] == {
        "role": "matmul",
        "primitive": "dot_general",
        "operands": ["bfloat16", "bfloat16"],
        "result": "bfloat16",
        "file": "stub.py",
        "line": 7,
    }
    assert found["summary"]["exp/log"] == {"float32 -> float32": 1}
    assert found["summary"]["cast"] == {"bfloat16 -> float32": 1, "float32 -> bfloat16": 3}
    assert found["summary"]["reduction"] == {"float32 -> float32": 1}


def test_a_jnp_reduction_of_a_16_bit_array_shows_as_written(tmp_path):
    path = _learner_file(tmp_path, "def f(x):\n    return jnp.mean(x.astype(jnp.float16))\n")
    found = profile(_function(path, "f"), [np.ones(8, np.float32)], path)
    assert found["summary"] == {"reduction": {"float16 -> float16": 1}, "cast": {"float32 -> float16": 1}}


def test_python_control_flow_on_a_computed_value_runs_recorded(tmp_path):
    path = _learner_file(
        tmp_path,
        "def f(x):\n"
        "    y = x.astype(jnp.float16)\n"
        "    if y.sum() > 0:\n"
        "        return jnp.exp(y)\n"
        "    return jnp.log(y)\n",
    )
    found = profile(_function(path, "f"), [np.ones(3, np.float32)], path)
    where = {(e["role"], signature(e), e["line"]) for e in found["entries"]}
    assert where == {
        ("cast", "float32 -> float16", 6),
        ("reduction", "float16 -> float16", 7),
        ("exp/log", "float16 -> float16", 8),  # the branch taken, and only it
    }


def test_code_that_writes_into_its_inputs_runs_on_numpy_copies(tmp_path):
    path = _learner_file(
        tmp_path,
        "def f(x):\n"
        "    x[0] = 2.0  # NumPy's: a jax array cannot be written to\n"
        "    if float(jnp.sum(x)) > 0:\n"
        "        return jnp.asarray(x).astype(jnp.bfloat16)\n",
    )
    x = np.zeros(3, np.float32)
    found = profile(_function(path, "f"), [x], path)
    assert found["summary"] == {"reduction": {"float32 -> float32": 1}, "cast": {"float32 -> bfloat16": 1}}
    assert not x.any(), "the case's own array was changed"


def test_code_that_raises_has_no_profile(tmp_path):
    path = _learner_file(tmp_path, "def f(x):\n    raise ValueError('not yet')\n")
    found = profile(_function(path, "f"), [np.ones(3, np.float32)], path)
    assert found["error"] == "ValueError: not yet"
    assert compare_profiles(found, found) == ["no profile: ValueError: not yet"]


class _Harness:
    """A harness as a problem's harness.py is: two calls of the function, the second reading what the first
    wrote to the case's folder, with jax work of its own in between, then maybe a rejection."""

    class Rejected(Exception):
        pass

    def __init__(self, reject: bool) -> None:
        self.reject = reject

    def run_case(self, function, inputs: dict, folder: Path) -> np.ndarray:
        first = function(np.array(inputs["x"]), str(folder / "state.npy"), False)
        checked = jnp.exp(jnp.asarray(first, jnp.float16))  # the harness's own: not the submission's
        second = function(np.array(inputs["x"]), str(folder / "state.npy"), True)
        if self.reject:
            raise self.Rejected("the checkpoint is wrong")
        return np.concatenate([np.asarray(checked), np.asarray(second)])


def test_a_harness_run_writing_and_reading_a_file_is_recorded(tmp_path):
    path = _learner_file(
        tmp_path,
        "def f(x, state, resume):\n"
        "    import numpy as np\n"
        "\n"
        "    if not resume:\n"
        "        np.save(state, np.asarray(x.astype(jnp.bfloat16).astype(jnp.float32)))\n"
        "        return x\n"
        "    w = jnp.asarray(np.load(state)).astype(jnp.float16)\n"
        "    return (w @ w).astype(jnp.float32)\n",
    )
    x = np.ones((2, 2), np.float32)
    for reject in (False, True):  # a rejection after the calls still leaves the recording of the calls
        folder = tmp_path / f"case-{reject}"
        folder.mkdir()
        found = profile(_function(path, "f"), {"x": x}, path, _Harness(reject), folder)
        assert found["summary"] == {
            "matmul": {"float16 x float16 -> float16": 1},
            "cast": {
                "float16 -> float32": 1,
                "float32 -> bfloat16": 1,
                "float32 -> bfloat16 -> float32": 1,
                "float32 -> float16": 1,  # and not the harness's own cast
            },
        }, found
        assert {e["line"] for e in found["entries"]} == {9, 11, 12}
        assert (folder / "state.npy").exists()
    assert not x.any() or x.all(), "the case's own array was changed"


def test_a_harness_call_that_raises_has_no_profile(tmp_path):
    path = _learner_file(tmp_path, "def f(x, state, resume):\n    raise ValueError('no checkpoint')\n")
    found = profile(_function(path, "f"), {"x": np.ones(2, np.float32)}, path, _Harness(False), tmp_path)
    assert found["error"] == "ValueError: no checkpoint"


_FP8 = (
    "E4 = jnp.float8_e4m3fn\n"
    "\n"
    "\n"
    "def direct(x, w):\n"
    "    return jnp.dot(x.astype(E4), (w * 2.0).astype(E4).T, preferred_element_type=jnp.float32) / 2.0\n"
    "\n"
    "\n"
    "def emulated(x, w):\n"
    "    x8, w8 = x.astype(E4), (w * 2.0).astype(E4)\n"
    "    return x8.astype(jnp.float32) @ (w8.astype(jnp.float32) / 2.0).T\n"
    "\n"
    "\n"
    "def emulated_eagerly(x, w):\n"
    "    if bool(jnp.isfinite(x).all()):  # a Python if on a computed value: run, recorded\n"
    "        return emulated(x, w)\n"
    "\n"
    "\n"
    "def half_quantised(x, w):\n"
    "    return x.astype(E4).astype(jnp.float32) @ w.T\n"
    "\n"
    "\n"
    "def amax_of_quantised(x, w):\n"
    "    return jnp.max(jnp.abs(x.astype(E4).astype(jnp.float32))) * (x @ w.T)\n"
)


def test_an_fp8_matmul_emulated_in_float32_shows_float8_operands(tmp_path):
    path = _learner_file(tmp_path, _FP8)
    inputs = [np.ones((2, 3), np.float32), np.ones((4, 3), np.float32)]
    found = {name: profile(_function(path, name), inputs, path) for name in _FP8_NAMES}
    fp8 = {"float8_e4m3fn x float8_e4m3fn -> float32": 1}
    for name in ("direct", "emulated", "emulated_eagerly"):
        assert found[name]["summary"]["matmul"] == fp8, name
        assert compare_profiles(found[name], found["direct"]) == [], name  # no cast back, no round trip
    half = compare_profiles(found["half_quantised"], found["direct"])
    assert half[0] == (
        "your matmul at stub.py:23 ran in float32 (float8_e4m3fn x float32 -> float32); "
        "the reference's matmuls run in float8_e4m3fn x float8_e4m3fn -> float32"
    )
    assert not [line for line in half if line.startswith("the reference has a matmul")], "said twice"
    assert found["amax_of_quantised"]["summary"]["reduction"] == {"float8_e4m3fn -> float32": 1}


_FP8_NAMES = ("direct", "emulated", "emulated_eagerly", "half_quantised", "amax_of_quantised")
_SUMS = (
    "def fp16_loop(gs):\n"
    "    acc = jnp.zeros(gs.shape[1:], jnp.float16)\n"
    "    for g in gs.astype(jnp.float16):\n"
    "        acc = acc + g\n"
    "    return acc\n"
    "\n"
    "\n"
    "def fp16_scan(gs):\n"
    "    add = lambda acc, g: (acc + g, None)  # noqa: E731\n"
    "    return jax.lax.scan(add, jnp.zeros(gs.shape[1:], jnp.float16), gs.astype(jnp.float16))[0]\n"
    "\n"
    "\n"
    "def fp16_eager(gs):\n"
    "    return fp16_loop(gs) if float(gs.sum()) > 0 else None\n"
    "\n"
    "\n"
    "def fp32_loop(gs):\n"
    "    acc = jnp.zeros(gs.shape[1:], jnp.float32)\n"
    "    for g in gs:\n"
    "        acc = acc + g\n"
    "    return acc.astype(jnp.float16)\n"
    "\n"
    "\n"
    "def fp16_layers(gs):\n"
    "    h = gs[0].astype(jnp.float16)\n"
    "    h = h + gs[1].astype(jnp.float16)  # a residual, then a bias: additions, not a running sum\n"
    "    return h + jnp.float16(1.0)\n"
)


def test_a_running_sum_in_16_bits_shows_and_other_additions_do_not(tmp_path):
    path = _learner_file(tmp_path, _SUMS)
    gs = np.ones((3, 4), np.float32)
    found = {
        name: profile(_function(path, name), [gs], path)
        for name in ("fp16_loop", "fp16_scan", "fp16_eager", "fp32_loop", "fp16_layers")
    }
    for name in ("fp16_loop", "fp16_eager"):  # traced, and run (each addition a jitted jnp.add)
        sums = {(e["line"], signature(e)) for e in found[name]["entries"] if e["role"] == "accumulation"}
        assert sums == {(8, "float16 -> float16")}, name
    assert found["fp16_loop"]["summary"]["accumulation"] == {"float16 -> float16": 2}  # the 2nd, 3rd adds
    assert found["fp16_scan"]["summary"]["accumulation"] == {"float16 -> float16": 1}
    assert "accumulation" not in found["fp32_loop"]["summary"]
    assert "accumulation" not in found["fp16_layers"]["summary"]
    assert compare_profiles(found["fp16_loop"], found["fp32_loop"])[0] == (
        "your running sum at stub.py:8 ran in float16 (float16 -> float16); "
        "the reference has no 16-bit running sums"
    )


def test_the_exponent_of_one_float32_number_is_bookkeeping(tmp_path):
    path = _learner_file(
        tmp_path,
        "def f(amax, x):\n"
        "    return 2.0 ** jnp.floor(jnp.log2(448.0 / amax)) * jnp.exp(x.astype(jnp.float16))\n",
    )
    found = profile(_function(path, "f"), [np.float32(3.0) * np.ones((), np.float32), np.ones(3)], path)
    assert found["summary"]["exp/log"] == {"float16 -> float16": 1}


def test_a_learner_matmul_in_float32_is_named_in_the_learner_terms(tmp_path):
    path = _learner_file(
        tmp_path,
        "def f(x, w):\n    return x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)\n\n\n"
        "def g(x, w):\n    return x @ w\n",
    )
    inputs = [np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)]
    reference, learner = (profile(_function(path, name), inputs, path) for name in ("f", "g"))
    lines = compare_profiles(learner, reference)
    assert lines[0] == (
        "your matmul at stub.py:10 ran in float32 (float32 x float32 -> float32); "
        "the reference's matmuls run in bfloat16 x bfloat16 -> bfloat16"
    )
    assert not [line for line in lines if line.startswith("the reference has a")], "said twice"


def test_an_update_mixing_float16_with_float32_and_a_round_trip_are_named(tmp_path):
    path = _learner_file(
        tmp_path,
        "def f(w, u):\n    return w + u\n\n\n"
        "def g(w, u):\n    return w.astype(jnp.float16) + u\n\n\n"
        "def h(w, u):\n    return w.astype(jnp.float16).astype(jnp.float32) + u\n",
    )
    inputs = [np.ones(3, np.float32), np.ones(3, np.float32)]
    reference, mixed, rounded = (profile(_function(path, name), inputs, path) for name in ("f", "g", "h"))
    assert compare_profiles(mixed, reference)[-1] == (
        "your code at stub.py:10 mixes float16 with float32 in one operation (float16 promoted to float32); "
        "the reference never mixes them"
    )
    assert compare_profiles(rounded, reference) == [
        "your cast at stub.py:14 converts float32 to float16; the reference never does",
        "your code at stub.py:14 rounds float32 through float16 (float32 -> float16 -> float32); "
        "the reference never does",
    ]


def test_code_that_turns_an_input_into_numpy_runs_on_copies_of_the_inputs(tmp_path):
    path = _learner_file(
        tmp_path,
        "def f(x):\n    import numpy as np\n\n    x = np.asarray(x)\n    x += 1\n"
        "    return jnp.asarray(x).astype(jnp.bfloat16)\n",
    )
    x = np.zeros(3, np.float32)
    found = profile(_function(path, "f"), [x], path)
    assert found["summary"] == {"cast": {"float32 -> bfloat16": 1}}
    assert not x.any(), "the case's own array was changed"


def test_sums_kept_wider_than_the_reference_and_products_with_nothing_summed_are_no_fault(tmp_path):
    """A mean taken in float32 over bfloat16 squares is allowed (more precise); an einsum that picks one
    entry per row with a one-hot matrix sums in float32 and its gradient sums nothing: none is reported.
    A sum that reads fewer bits than the reference's (the amax of a float8 value) still is."""
    path = _learner_file(
        tmp_path,
        "def f(x, w):\n    d = x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)\n"
        "    return jnp.mean(d * d)\n\n\n"
        "def g(x, w):\n    d = x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)\n"
        "    return jnp.mean(d * d, dtype=jnp.float32) + jnp.einsum('nk,nk->n', x, x).sum()\n\n\n"
        "def h(x, w):\n    d = x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)\n"
        "    return jnp.mean(d * d) + jnp.max(x.astype(jnp.float8_e4m3fn)).astype(jnp.float32)\n",
    )
    inputs = [np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)]

    reference, wider, narrower = (profile(_function(path, name), inputs, path) for name in ("f", "g", "h"))
    assert "error" not in wider and compare_profiles(wider, reference) == [], wider["summary"]
    assert any("max at stub.py:17" in line for line in compare_profiles(narrower, reference))
    gradients = [profile(jax.grad(_function(path, name)), inputs, path) for name in ("f", "g")]
    assert "matmul" in gradients[1]["summary"]  # the step's own matmuls, forward and back
    assert compare_profiles(gradients[1], gradients[0]) == [], gradients[1]["summary"]


def _summary(**roles: list[str]) -> dict:
    return {"summary": {role: dict.fromkeys(sigs, 1) for role, sigs in roles.items()}, "entries": []}


def test_a_mistakes_dtypes_are_matched_however_its_conversions_are_spelt():
    """A name needs the learner's code to run the pitfall file's dtypes; a cast spelt as a promotion by a
    mixed operation, or a round trip spelt as two casts, is the same conversion (the weight_ema audit's bf16
    averages cast after every update were left unnamed for it). The down-cast itself stays required."""
    reference = _summary(matmul=["float16 x float16 -> float16"])
    pitfall = _summary(
        matmul=["float16 x float16 -> float16"],
        cast=["float32 -> bfloat16", "bfloat16 -> float32"],
        scaling=["bfloat16 -> bfloat16"],
    )
    promoted = _summary(
        matmul=["float16 x float16 -> float16"],
        cast=["float32 -> bfloat16"],
        mixed=["bfloat16 -> float32"],
        scaling=["bfloat16 -> bfloat16"],
    )
    round_trip = _summary(
        matmul=["float16 x float16 -> float16"],
        cast=["float32 -> bfloat16 -> float32"],
        scaling=["bfloat16 -> bfloat16"],
    )
    never_cast_down = _summary(matmul=["float16 x float16 -> float16"], mixed=["bfloat16 -> float32"])
    assert runs_the_mistakes_dtypes(promoted, pitfall, reference)
    assert runs_the_mistakes_dtypes(round_trip, pitfall, reference)
    assert not runs_the_mistakes_dtypes(never_cast_down, pitfall, reference)
