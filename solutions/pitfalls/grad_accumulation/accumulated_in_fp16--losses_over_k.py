"""Pitfall accumulated_in_fp16, another form: an fp16 accumulator fed the gradients of losses divided by K.

Each micro-batch loss is divided by K before scaling (loss / K * S, an accepted form with an fp32
accumulator), the gradients are taken with respect to the fp16 copy of the weights and summed as they come in
an fp16 accumulator, and the sum is cast to fp32 and divided by S alone. The sum never overflows (K gradients
of at most 65504 / K each), but every partial sum is rounded to fp16: a small gradient added to a large
partial sum is rounded away.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


@jax.jit
def _micro_batch16(w16, xb, yb, scale, k):
    """Loss and the fp16 gradient of loss / k * scale with respect to the fp16 weights."""

    def scaled_loss(w16):
        pred = (xb.astype(jnp.float16) @ w16).astype(jnp.float32)
        loss = jnp.mean((pred - yb) ** 2)
        return loss / k * scale, loss

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
    k = jnp.float32(accum_steps)
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))
    opt_state = tx.init(w)
    acc16 = jnp.zeros(w.shape, jnp.float16)
    losses = []
    for i in range(x.shape[0]):
        loss, g16 = _micro_batch16(w.astype(jnp.float16), x[i], y[i], scale, k)
        losses.append(loss)
        acc16 = acc16 + g16  # fp16 running sum of gradients already divided by K: no overflow, only rounding
        if (i + 1) % accum_steps == 0:
            g = acc16.astype(jnp.float32) / scale
            updates, opt_state = tx.update(g, opt_state, w)
            w = optax.apply_updates(w, updates)
            acc16 = jnp.zeros(w.shape, jnp.float16)
    return jnp.stack(losses)
