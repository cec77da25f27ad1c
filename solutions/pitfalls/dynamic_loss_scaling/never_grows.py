"""Pitfall never_grows: the scale only ever backs off; finite steps never raise it again.

After an early back-off the scale stays low for the rest of the run, so the scale trajectory is flat where
the reference grows.
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
    scale = float(init_scale)

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
        if finite:
            updates, opt_state = opt.update(g, opt_state, w)
            w = optax.apply_updates(w, updates)
        if not finite:
            scale = max(min_scale, scale / factor)
    return jnp.concatenate([jnp.stack(losses), jnp.asarray(scales, jnp.float32)])
