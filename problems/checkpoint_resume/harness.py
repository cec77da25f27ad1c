"""Harness of checkpoint_resume: trains a case in two calls of train_segment, the second resuming from the
Orbax checkpoint the first left in the case's folder, and checks that checkpoint in between.

Course code, run by the grader before your file is imported; you can run it yourself as well:
`run_case(train_segment, inputs, pathlib.Path(an_empty_directory))` gives the same verdicts as the grader.

Unfinished saves are found without relying on timing. Whether the background thread of an asynchronous Orbax
save has finished by the time a call returns is a race: a call that does some work after `save()` can win it
in one run and lose it in the next (a busy machine, or a fresh process such as the grader's, whose first save
is slower than a warm one's). So while each call runs, the harness watches
`orbax.checkpoint.AsyncCheckpointer` (the class that `StandardCheckpointer` builds on): a save whose
checkpointer was never waited for before the call returned (`wait_until_finished()`, `close()`, the end of a
`with` block, or a later save or restore on the same checkpointer, which wait first) fails the case as
`save_not_finished`, whether or not its files happen to be complete already. The harness then waits for that
save itself, so that the case's folder can be removed cleanly.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

CHECKPOINT = "state"  # the checkpoint's path is ckpt_dir / "state"
SAVE_GRACE = 2.0  # seconds to watch an empty ckpt_dir for an asynchronous save that has not started writing
KEYS = ("params", "opt_state", "scale", "counter", "step")


class Rejected(Exception):
    """What train_segment wrote fails the problem's check; `pitfall` names the mistake, if known."""

    def __init__(self, message: str, pitfall: str = "") -> None:
        super().__init__(message)
        self.pitfall = pitfall


def _describe(value: object) -> str:
    """Names what a checkpoint entry holds, without its values."""
    dtype, shape = getattr(value, "dtype", None), getattr(value, "shape", None)
    if dtype is not None and shape is not None:
        return f"an array of dtype {dtype} and shape {tuple(shape)}"
    return f"a {type(value).__name__}"


def _cpu_sharding() -> object | None:
    """The CPU device's sharding, or None where JAX has no CPU backend."""
    import jax

    try:
        return jax.sharding.SingleDeviceSharding(jax.devices("cpu")[0])
    except RuntimeError:
        return None


def _restore(path: Path) -> object:
    """Restores the checkpoint at `path` without a target (nested dicts and lists of arrays). An array saved
    on a device that JAX's default backend does not list (the CPU device a notebook on a GPU runtime grades
    on: Orbax looks saved devices up in `jax.local_devices()`, the GPU's) is restored on the CPU."""
    import orbax.checkpoint as ocp

    try:
        restore_args = ocp.args.StandardRestore(fallback_sharding=_cpu_sharding())
        with ocp.Checkpointer(ocp.StandardCheckpointHandler()) as checkpointer:
            return checkpointer.restore(path, args=restore_args)
    except Exception as exc:  # whatever Orbax raises, the learner gets one clear line
        first_line = (str(exc).strip().splitlines() or [""])[0][:300]
        raise Rejected(
            f"Orbax cannot restore the checkpoint at ckpt_dir / {CHECKPOINT!r} that the first call wrote "
            f"({type(exc).__name__}: {first_line}); save it with "
            "ocp.StandardCheckpointer().save(path, state, force=True) followed by wait_until_finished()"
        ) from None


@contextlib.contextmanager
def _watch_async_saves() -> Iterator[dict[int, object]]:
    """Yields a dict that holds, while the block runs, every Orbax AsyncCheckpointer (StandardCheckpointer
    included) that has started a save and has not been waited for since."""
    import orbax.checkpoint as ocp

    cls = ocp.AsyncCheckpointer
    save, wait = cls.save, cls.wait_until_finished
    pending: dict[int, object] = {}

    def watched_save(self, *args, **kwargs):
        result = save(self, *args, **kwargs)  # waits for this checkpointer's earlier save, then starts one
        pending[id(self)] = self
        return result

    def watched_wait(self, *args, **kwargs):  # close(), `with` and restore() wait through this too
        result = wait(self, *args, **kwargs)
        pending.pop(id(self), None)
        return result

    cls.save, cls.wait_until_finished = watched_save, watched_wait
    try:
        yield pending
    finally:
        cls.save, cls.wait_until_finished = save, wait


def _call_and_check_saves(make_call, which: str) -> object:
    """Makes one call of train_segment and fails the case if it returned with an asynchronous save that it
    never waited for (after waiting for that save here, so that its files are complete either way)."""
    with _watch_async_saves() as pending:
        value = make_call()
    if pending:
        for checkpointer in pending.values():
            checkpointer.wait_until_finished()
        raise Rejected(
            f"the {which} call returned without waiting for its Orbax save: StandardCheckpointer.save "
            "finishes in a background thread, so the checkpoint may still be half-written when your function "
            "returns (whether it is depends on timing). Call checkpointer.wait_until_finished() after save, "
            "or save inside a `with ocp.StandardCheckpointer() as checkpointer:` block",
            pitfall="save_not_finished",
        )
    return value


def check_checkpoint(folder: Path, w: np.ndarray, steps_done: int) -> None:
    """Raises Rejected unless `folder` holds the checkpoint the statement prescribes, after `steps_done`
    steps: a dict with float32 master weights shaped like `w`, an optimizer state holding a float32 buffer
    of w's size, a float32 scalar scale and integer scalars counter and step (step == steps_done)."""
    path = folder / CHECKPOINT
    if not path.is_dir():
        # An asynchronous save may not even have created its temporary folder yet: watch a moment for
        # anything to appear, which tells a save still running from no save at all.
        deadline = time.monotonic() + SAVE_GRACE
        while not any(folder.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.02)
        if any(folder.glob(f"{CHECKPOINT}*")):
            raise Rejected(
                f"when the first call returned, its checkpoint at ckpt_dir / {CHECKPOINT!r} was still being "
                "written (only Orbax's temporary folder existed, or nothing yet): StandardCheckpointer.save "
                "finishes in the background, so call wait_until_finished() before returning",
                pitfall="save_not_finished",
            )
        found = sorted(p.name for p in folder.iterdir())
        raise Rejected(
            f"the first call left no checkpoint at ckpt_dir / {CHECKPOINT!r} (ckpt_dir holds "
            f"{found if found else 'nothing'}); save the state there with Orbax"
        )
    tree = _restore(path)
    if not isinstance(tree, dict):
        raise Rejected(f"the checkpoint holds {_describe(tree)}, not a dict with the keys {', '.join(KEYS)}")
    if "params" not in tree:
        raise Rejected(
            f"the checkpoint has no 'params' entry (it has {sorted(tree)}); it must hold {', '.join(KEYS)}"
        )
    params = tree["params"]
    dtype = getattr(params, "dtype", None)
    if dtype is None or getattr(params, "shape", None) is None:
        raise Rejected(
            f"the checkpoint's 'params' is {_describe(params)}; it must be the fp32 master weights, "
            "one float32 array shaped like w"
        )
    if np.dtype(dtype).name in ("float16", "bfloat16"):
        raise Rejected(
            f"the checkpoint's 'params' are {np.dtype(dtype).name}: that is the low-precision working copy; "
            "save the fp32 master weights",
            pitfall="saved_working_copy",
        )
    if np.dtype(dtype) != np.float32 or tuple(params.shape) != tuple(w.shape):
        raise Rejected(
            f"the checkpoint's 'params' is {_describe(params)}; expected float32 and the shape of w"
        )
    missing = [key for key in KEYS if key not in tree]
    if missing:
        raise Rejected(
            f"the checkpoint has no {', '.join(map(repr, missing))}; it must hold {', '.join(KEYS)}"
        )

    import jax

    sized = [
        leaf
        for leaf in jax.tree.leaves(tree["opt_state"])
        if getattr(leaf, "dtype", None) is not None and np.size(leaf) == np.size(w)
    ]
    if not any(leaf.dtype == np.float32 for leaf in sized):
        # What was found, not a guess at why: a float16 momentum and a missing one call for different fixes.
        found = sorted({np.dtype(leaf.dtype).name for leaf in sized})
        what = (
            f"the arrays of w's size it holds are {' and '.join(found)}"
            if found
            else f"it holds no array of w's size ({_describe(tree['opt_state'])})"
        )
        raise Rejected(
            f"the checkpoint's 'opt_state' has no float32 array of the size of w: {what}; the momentum "
            "buffer is saved as the optimizer keeps it, in float32"
        )
    scale = np.asarray(tree["scale"])
    if scale.shape != () or scale.dtype.kind != "f" or scale.dtype.itemsize < 4:
        raise Rejected(f"the checkpoint's 'scale' is {_describe(tree['scale'])}; expected a float32 scalar")
    for key in ("counter", "step"):
        value = np.asarray(tree[key])
        if value.shape != () or value.dtype.kind not in "iu":
            raise Rejected(f"the checkpoint's {key!r} is {_describe(tree[key])}; expected an int32 scalar")
    if int(np.asarray(tree["step"])) != steps_done:
        raise Rejected(
            f"the checkpoint's 'step' is {int(np.asarray(tree['step']))}; the first call trained "
            f"{steps_done} steps (its stop_step)"
        )


def _segment(value: object, start: int, stop: int, call: str) -> np.ndarray:
    """The losses and scales one call returned, checked for shape."""
    out = np.asarray(value)
    if out.ndim != 1 or out.shape[0] != 2 * (stop - start) or out.dtype.kind != "f":
        raise Rejected(
            f"the {call} call returned {_describe(out)}; each call returns a 1-D float array of "
            "2 * (stop_step - start_step) entries: its losses, then its scales"
        )
    return out


def run_case(function, inputs: dict, folder: Path) -> np.ndarray:
    """Trains steps [0, split) in one call and [split, num_steps) in a second, resumed from `folder`.

    Returns: float32 (2 * num_steps,): the losses of all steps, then the scales of all steps.
    """
    names = ("x", "y", "w", "lr", "momentum", "decay_every", "init_scale", "period")
    split, num_steps = int(inputs["split"]), int(inputs["num_steps"])
    ckpt_dir = str(folder)

    def call(start: int, stop: int) -> object:  # fresh copies of the arrays for each call
        args = [
            np.array(inputs[name]) if isinstance(inputs[name], np.ndarray) else inputs[name] for name in names
        ]
        return function(*args, start, stop, ckpt_dir)

    first = _segment(_call_and_check_saves(lambda: call(0, split), "first"), 0, split, "first")
    check_checkpoint(folder, inputs["w"], split)
    second = _segment(
        _call_and_check_saves(lambda: call(split, num_steps), "second"), split, num_steps, "second"
    )

    steps1, steps2 = split, num_steps - split
    losses = np.concatenate([first[:steps1], second[:steps2]])
    scales = np.concatenate([first[steps1:], second[steps2:]])
    return np.concatenate([losses, scales]).astype(np.float32)
