"""Pitfall counter_kept_on_overflow: an overflowing step halves the loss scale but leaves the growth counter
as it was, instead of setting it back to 0.

The finite steps counted before the overflow still count towards the next growth, so the scale doubles
again too early. Everything else (the checkpoint included) follows the recipe.
"""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np
import optax
import orbax.checkpoint as ocp


def _scaled_loss(w, x16, y, scale):
    pred = (x16 @ w.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - y) ** 2)
    return loss * scale, loss


@jax.jit
def _step(w, opt_state, scale, x16, y, lr_k, momentum):
    """The update, skipped when the unscaled gradient is not finite; returns (w, opt_state, loss, finite)."""
    (_, loss), grads = jax.value_and_grad(_scaled_loss, has_aux=True)(w, x16, y, scale)
    grads = grads / scale
    finite = jnp.all(jnp.isfinite(grads))
    updates, stepped_state = optax.sgd(lr_k, momentum=momentum).update(grads, opt_state, w)
    w = jnp.where(finite, optax.apply_updates(w, updates), w)
    opt_state = jax.tree.map(lambda new, old: jnp.where(finite, new, old), stepped_state, opt_state)
    return w, opt_state, loss, finite


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
    x16 = jnp.asarray(x, jnp.float32).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    w0 = jnp.asarray(w, jnp.float32)
    fresh = {
        "params": w0,
        "opt_state": optax.sgd(lr, momentum=momentum).init(w0),
        "scale": jnp.float32(init_scale),
        "counter": jnp.int32(0),
        "step": jnp.int32(0),
    }
    path = os.path.join(ckpt_dir, "state")
    checkpointer = ocp.StandardCheckpointer()
    if start_step == 0:
        state = fresh
    else:
        state = checkpointer.restore(path, jax.tree.map(ocp.utils.to_shape_dtype_struct, fresh))

    w, opt_state = state["params"], state["opt_state"]
    scale, counter = float(state["scale"]), int(state["counter"])
    losses, scales = [], []
    for k in range(start_step, stop_step):
        lr_k = jnp.float32(lr * 0.5 ** (k // decay_every))
        scales.append(scale)
        w, opt_state, loss, finite = _step(
            w, opt_state, jnp.float32(scale), x16, y, lr_k, jnp.float32(momentum)
        )
        losses.append(loss)
        if bool(finite):
            counter += 1
            if counter == period:
                scale, counter = scale * 2.0, 0
        else:
            scale = max(1.0, scale / 2.0)  # the counter keeps its count

    state = {
        "params": w,
        "opt_state": opt_state,
        "scale": jnp.float32(scale),
        "counter": jnp.int32(counter),
        "step": jnp.int32(stop_step),
    }
    checkpointer.save(path, state, force=True)
    checkpointer.wait_until_finished()
    return jnp.concatenate([jnp.stack(losses), jnp.asarray(scales, jnp.float32)])
