"""Pitfall computed_in_fp32: the forward pass has no fp16 casts at all.

The product x @ w, the loss and its gradient are all fp32 (the loss is still scaled by S and the gradient
unscaled, which in fp32 changes nothing): pred is never rounded to fp16, and the weights used by the product
are the fp32 master weights themselves, not their fp16 copy.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


@jax.jit
def _micro_batch(w, xb, yb, scale):
    def scaled_loss(w):
        pred = xb @ w  # fp32 @ fp32: no fp16 anywhere
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
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))
    opt_state = tx.init(w)
    acc = jnp.zeros_like(w)
    losses = []
    for i in range(x.shape[0]):
        loss, grad = _micro_batch(w, x[i], y[i], scale)
        losses.append(loss)
        acc = acc + grad
        if (i + 1) % accum_steps == 0:
            updates, opt_state = tx.update(acc / (accum_steps * scale), opt_state, w)
            w = optax.apply_updates(w, updates)
            acc = jnp.zeros_like(w)
    return jnp.stack(losses)
