"""Pitfall schedule_counts_updates: the step decay is an optax schedule, which counts applied updates only.

optax.sgd is given optax.exponential_decay(..., staircase=True) as its learning rate. The schedule's count
lives in the optimizer state, and a skipped (overflowing) step keeps that state, so the count falls behind
the global step after every overflow and each decay comes late.
"""

from __future__ import annotations

import os
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax
import orbax.checkpoint as ocp


def _optimizer(lr, momentum, decay_every):
    schedule = optax.exponential_decay(lr, decay_every, 0.5, staircase=True)
    return optax.sgd(schedule, momentum=momentum)


def _scaled_loss(w, x16, y, scale):
    pred = (x16 @ w.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - y) ** 2)
    return loss * scale, loss


@partial(jax.jit, static_argnames=("decay_every",))
def _step(w, opt_state, scale, counter, x16, y, lr, momentum, period, *, decay_every):
    (_, loss), grads = jax.value_and_grad(_scaled_loss, has_aux=True)(w, x16, y, scale)
    grads = grads / scale
    finite = jnp.all(jnp.isfinite(grads))
    updates, new_state = _optimizer(lr, momentum, decay_every).update(grads, opt_state, w)
    w = jnp.where(finite, optax.apply_updates(w, updates), w)
    opt_state = jax.tree.map(lambda new, old: jnp.where(finite, new, old), new_state, opt_state)
    grow = counter == period - 1
    scale_next = jnp.where(finite, jnp.where(grow, scale * 2.0, scale), jnp.maximum(1.0, scale / 2.0))
    counter = jnp.where(finite & ~grow, counter + 1, 0)
    return w, opt_state, scale_next, counter, loss


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
        "opt_state": _optimizer(lr, momentum, decay_every).init(w0),
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

    w, opt_state, scale, counter = state["params"], state["opt_state"], state["scale"], state["counter"]
    losses, scales = [], []
    for _ in range(start_step, stop_step):
        scales.append(scale)
        w, opt_state, scale, counter, loss = _step(
            w,
            opt_state,
            scale,
            counter,
            x16,
            y,
            jnp.float32(lr),
            jnp.float32(momentum),
            jnp.int32(period),
            decay_every=decay_every,
        )
        losses.append(loss)

    state = {
        "params": w,
        "opt_state": opt_state,
        "scale": scale,
        "counter": counter,
        "step": jnp.int32(stop_step),
    }
    checkpointer.save(path, state, force=True)
    checkpointer.wait_until_finished()
    return jnp.concatenate([jnp.stack(losses), jnp.stack(scales)])
