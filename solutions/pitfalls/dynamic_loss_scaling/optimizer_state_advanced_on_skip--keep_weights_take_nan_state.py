"""Pitfall optimizer_state_advanced_on_skip, another form: the update is skipped but its new state is kept.

The optimizer runs on the overflowing gradients every step; only applying the update is conditional, so
the momentum buffer takes the inf/NaN of the skipped step and the next finite step spreads it to the
weights.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


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
    x16 = jnp.asarray(x).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    w = jnp.asarray(w, jnp.float32)
    opt = optax.sgd(lr, momentum=momentum)
    opt_state = opt.init(w)
    scale, counter = float(init_scale), 0

    def scaled_loss(w, scale):
        pred = (x16 @ w.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - y) ** 2)
        return loss * scale, loss

    losses, scales = [], []
    for _ in range(num_steps):
        (_, loss), g = jax.value_and_grad(scaled_loss, has_aux=True)(w, jnp.float32(scale))
        g = g / jnp.float32(scale)
        losses.append(loss)
        scales.append(scale)
        finite = bool(jnp.all(jnp.isfinite(g)))
        updates, opt_state = opt.update(g, opt_state, w)  # the state advances on every step
        if finite:  # only the weights are protected
            w = optax.apply_updates(w, updates)
        if finite:
            counter += 1
            if counter == period:
                scale, counter = scale * factor, 0
        else:
            scale, counter = max(min_scale, scale / factor), 0
    return jnp.concatenate([jnp.stack(losses), jnp.asarray(scales, jnp.float32)])
