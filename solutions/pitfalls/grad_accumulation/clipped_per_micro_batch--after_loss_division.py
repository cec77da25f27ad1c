"""Pitfall clipped_per_micro_batch, another form: the loss is divided by K, and each micro-batch's unscaled
gradient (already divided by K) is clipped before it is added.

This is the clip-inside-the-loop habit with a PyTorch-style loss / K: clipping sees 1 / K of a micro-batch's
gradient, so it only acts when a single micro-batch's gradient is above K * max_norm.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


@jax.jit
def _micro_batch(w, xb, yb, scale, k):
    def scaled_loss(w):
        pred = (xb.astype(jnp.float16) @ w.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - yb) ** 2)
        return loss / k * scale, loss

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
    scale, k = jnp.float32(loss_scale), jnp.float32(accum_steps)
    clip = optax.clip_by_global_norm(max_norm)
    opt = optax.sgd(lr, momentum=momentum)
    opt_state = opt.init(w)
    acc = jnp.zeros_like(w)
    losses = []
    for i in range(x.shape[0]):
        loss, grad = _micro_batch(w, x[i], y[i], scale, k)
        losses.append(loss)
        clipped, _ = clip.update(grad / scale, optax.EmptyState())
        acc = acc + clipped
        if (i + 1) % accum_steps == 0:
            updates, opt_state = opt.update(acc, opt_state, w)
            w = optax.apply_updates(w, updates)
            acc = jnp.zeros_like(w)
    return jnp.stack(losses)
