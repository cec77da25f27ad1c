"""Pitfall fp16_master_weights: the weights are cast to fp16 once and kept in fp16 between steps.

optax.apply_updates returns each parameter in its own dtype, so every update is rounded to fp16: an update
smaller than half an fp16 spacing of its weight rounds away and the weight never moves.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


def _scaled_loss(w16, x16, y, scale):
    pred = (x16 @ w16).astype(jnp.float32)
    loss = jnp.mean((pred - y) ** 2)
    return loss * scale, loss


@jax.jit
def _step(w16, opt_state, x16, y, scale, lr, momentum):
    """One step on the fp16 weights; the update is applied only when the unscaled gradient is finite."""
    (_, loss), g16 = jax.value_and_grad(_scaled_loss, has_aux=True)(w16, x16, y, scale)
    g = g16.astype(jnp.float32) / scale
    finite = jnp.all(jnp.isfinite(g))
    updates, new_state = optax.sgd(lr, momentum=momentum).update(g, opt_state, w16)
    new_w16 = optax.apply_updates(w16, updates)  # stays fp16
    w16 = jnp.where(finite, new_w16, w16)
    opt_state = jax.tree.map(lambda new, old: jnp.where(finite, new, old), new_state, opt_state)
    return w16, opt_state, loss, finite


def train_with_dynamic_loss_scaling(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    lr: float,
    momentum: float,
    init_scale: float,
    period: int,
    factor: float,
    min_scale: float,
    num_steps: int,
) -> jax.Array:
    """Same signature as the reference; returns float32 (2 * num_steps,)."""
    x16 = jnp.asarray(x, jnp.float32).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    w16 = jnp.asarray(w, jnp.float32).astype(jnp.float16)  # the only copy of the weights, in fp16
    opt_state = optax.sgd(lr, momentum=momentum).init(w16)
    lr, momentum = jnp.float32(lr), jnp.float32(momentum)
    scale, counter = float(init_scale), 0
    losses, scales = [], []
    for _ in range(num_steps):
        scales.append(scale)
        w16, opt_state, loss, finite = _step(w16, opt_state, x16, y, jnp.float32(scale), lr, momentum)
        losses.append(loss)
        if finite:
            counter += 1
            if counter == period:
                grown = scale * factor
                scale = grown if np.isfinite(grown) else scale
                counter = 0
        else:
            scale, counter = max(min_scale, scale / factor), 0
    return jnp.concatenate([jnp.stack(losses), jnp.asarray(scales, jnp.float32)])
