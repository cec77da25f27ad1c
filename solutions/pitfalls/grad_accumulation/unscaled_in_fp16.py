"""Pitfall unscaled_in_fp16: each fp16 micro-batch gradient is divided by loss_scale before the cast to fp32.

The Python float scale becomes fp16 in the division, and 2**16 or more is inf there, so every gradient is 0.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


@jax.jit
def _micro_batch16(w16, xb, yb, scale):
    """Loss and the fp16 gradient of loss * scale with respect to the fp16 weights."""

    def scaled_loss(w16):
        pred = (xb.astype(jnp.float16) @ w16).astype(jnp.float32)
        loss = jnp.mean((pred - yb) ** 2)
        return loss * scale, loss

    (_, loss), grad16 = jax.value_and_grad(scaled_loss, has_aux=True)(w16)
    return loss, grad16


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
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))
    opt_state = tx.init(w)
    acc = jnp.zeros_like(w)
    losses = []
    for i in range(x.shape[0]):
        loss, g16 = _micro_batch16(w.astype(jnp.float16), x[i], y[i], scale)
        losses.append(loss)
        acc = acc + (g16 / loss_scale).astype(jnp.float32)  # unscaled in fp16
        if (i + 1) % accum_steps == 0:
            updates, opt_state = tx.update(acc / accum_steps, opt_state, w)
            w = optax.apply_updates(w, updates)
            acc = jnp.zeros_like(w)
    return jnp.stack(losses)
