"""Pitfall restored_low_precision, another form: fp16 restore target, then a hand-written update.

The abstract target for the restore is built from the fp16 working copy, so Orbax hands the master weights
back rounded to fp16. The hand-written update w - lr * m promotes them to fp32 again at the first applied
step, so this run keeps fp32 master weights afterwards, but the bits below fp16 precision that the master
weights had at the checkpoint are gone.
"""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp


def _loss_fn(w, x16, y, scale):
    pred = jnp.dot(x16, w.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - y) ** 2)
    return loss * scale, loss


_grad_fn = jax.jit(jax.value_and_grad(_loss_fn, has_aux=True))


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
    x16 = jnp.asarray(x).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    path = Path(ckpt_dir) / "state"
    checkpointer = ocp.StandardCheckpointer()

    if start_step == 0:
        w = jnp.asarray(w, jnp.float32)
        trace = jnp.zeros_like(w)
        scale, counter = np.float32(init_scale), 0
    else:
        w16 = jnp.asarray(w).astype(jnp.float16)  # the copy the model runs in
        target = {
            "params": jax.ShapeDtypeStruct(w16.shape, w16.dtype),
            "opt_state": {"trace": jax.ShapeDtypeStruct(w16.shape, jnp.float32)},
            "scale": jax.ShapeDtypeStruct((), jnp.float32),
            "counter": jax.ShapeDtypeStruct((), jnp.int32),
            "step": jax.ShapeDtypeStruct((), jnp.int32),
        }
        state = checkpointer.restore(path, target)
        w, trace = state["params"], state["opt_state"]["trace"]
        scale, counter = np.float32(state["scale"]), int(state["counter"])

    losses, scales = [], []
    for k in range(start_step, stop_step):
        scales.append(scale)
        (_, loss), g = _grad_fn(w, x16, y, jnp.float32(scale))
        losses.append(loss)
        g = g.astype(jnp.float32) / scale
        if bool(jnp.all(jnp.isfinite(g))):
            lr_k = lr * 0.5 ** (k // decay_every)
            trace = g + momentum * trace
            w = w - lr_k * trace
            counter += 1
            if counter == period:
                scale, counter = scale * np.float32(2.0), 0
        else:
            scale, counter = max(np.float32(1.0), scale / np.float32(2.0)), 0

    state = {
        "params": w,
        "opt_state": {"trace": trace},
        "scale": jnp.float32(scale),
        "counter": jnp.int32(counter),
        "step": jnp.int32(stop_step),
    }
    checkpointer.save(path, state, force=True)
    checkpointer.wait_until_finished()
    return jnp.concatenate([jnp.stack(losses), jnp.asarray(scales, jnp.float32)])
