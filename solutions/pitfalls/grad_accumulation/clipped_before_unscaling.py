"""Pitfall clipped_before_unscaling: the accumulated gradient is clipped while still multiplied by S.

The scaled norm is far above max_norm, so clipping cuts it down to max_norm, and the division by K * S that
follows leaves a step K * S times smaller than max_norm allows.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


@jax.jit
def _micro_batch(w, xb, yb, scale):
    def scaled_loss(w):
        pred = (xb.astype(jnp.float16) @ w.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - yb) ** 2)
        return loss * scale, loss

    (_, loss), grad = jax.value_and_grad(scaled_loss, has_aux=True)(w)
    return loss, grad


def train_with_grad_accumulation(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    lr: float,
    momentum: float,
    loss_scale: float,
    max_norm: float,
    accum_steps: int,
) -> jax.Array:
    """Same signature as the reference; returns float32 (M,)."""
    x = jnp.asarray(x, jnp.float32)
    y = jnp.asarray(y, jnp.float32)
    w = jnp.asarray(w, jnp.float32)
    scale = jnp.float32(loss_scale)
    opt = optax.sgd(lr, momentum=momentum)
    opt_state = opt.init(w)
    acc = jnp.zeros_like(w)
    losses = []
    for i in range(x.shape[0]):
        loss, grad = _micro_batch(w, x[i], y[i], scale)
        losses.append(loss)
        acc = acc + grad
        if (i + 1) % accum_steps == 0:
            g, _ = optax.clip_by_global_norm(max_norm).update(acc, optax.EmptyState())  # still scaled
            g = g / (accum_steps * scale)
            updates, opt_state = opt.update(g, opt_state, w)
            w = optax.apply_updates(w, updates)
            acc = jnp.zeros_like(w)
    return jnp.stack(losses)
