"""Correct variant: hand-written momentum kept in a dict, lax.cond to skip, jax.grad plus a separate
forward pass in one jitted step, NumPy float32 scale and Python int counter, the learning rate computed
with ldexp; the synchronous PyTreeCheckpointer, restored without a target (the state is plain dicts and
arrays, so nothing needs one)."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp


def _mse(w, x16, y):
    r = jnp.dot(x16, w.astype(jnp.float16)).astype(jnp.float32) - y
    return jnp.sum(r * r) / y.shape[0]


@jax.jit
def _step(w, trace, scale, x16, y, lr_k, momentum):
    loss = _mse(w, x16, y)
    g = jax.grad(lambda w: _mse(w, x16, y) * scale)(w) / scale
    finite = jnp.all(jnp.isfinite(g))

    def apply(operands):
        w, trace, g = operands
        trace = g + momentum * trace
        return w - lr_k * trace, trace

    w, trace = jax.lax.cond(finite, apply, lambda ops: (ops[0], ops[1]), (w, trace, g))
    return w, trace, loss, finite


def train_segment(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    lr: float,
    momentum: float,
    decay_every: int,
    init_scale: float,
    period: int,
    start_step: int,
    stop_step: int,
    ckpt_dir: str,
) -> jax.Array:
    """Same signature as the reference; returns float32 (2 * (stop_step - start_step),)."""
    path = Path(ckpt_dir) / "state"
    checkpointer = ocp.PyTreeCheckpointer()
    if start_step == 0:
        w = jnp.asarray(w, jnp.float32)
        trace = jnp.zeros_like(w)
        scale, good_steps = np.float32(init_scale), 0
    else:
        state = checkpointer.restore(path)
        w, trace = state["params"], state["opt_state"]["trace"]
        scale, good_steps = np.float32(state["scale"]), int(state["counter"])

    x16 = jnp.asarray(x, jnp.float32).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    losses, scales = [], []
    for k in range(start_step, stop_step):
        scales.append(scale)
        lr_k = np.ldexp(np.float32(lr), -(k // decay_every))
        w, trace, loss, finite = _step(w, trace, jnp.float32(scale), x16, y, lr_k, jnp.float32(momentum))
        losses.append(loss)
        if bool(finite):
            good_steps += 1
            if good_steps == period:
                bigger = np.float32(scale * np.float32(2))
                scale = bigger if np.isfinite(bigger) else scale
                good_steps = 0
        else:
            scale = np.float32(max(np.float32(1), scale / np.float32(2)))
            good_steps = 0

    state = {
        "params": w,
        "opt_state": {"trace": trace},
        "scale": jnp.float32(scale),
        "counter": jnp.int32(good_steps),
        "step": jnp.int32(stop_step),
    }
    checkpointer.save(path, state, force=True)
    return jnp.concatenate([jnp.stack(losses), jnp.asarray(np.array(scales, np.float32))])
