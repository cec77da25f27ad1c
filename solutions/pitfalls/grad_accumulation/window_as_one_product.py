"""Pitfall window_as_one_product: the gradient of a whole window is one fp16 product over its K * B rows.

The K micro-batches of a window are stacked into one batch of K * B rows, and one scaled loss, the mean over
all of them (the mean of the K micro-batch losses), is differentiated: the backward pass takes ONE fp16
product over the K * B rows and rounds the window's gradient to fp16 once, instead of rounding each
micro-batch's gradient to fp16 and adding the K of them in fp32. The recorded losses are still the K
micro-batch means, and the mean over the window is already divided by K, so only S is divided out.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


@jax.jit
def _window(w, xw, yw, scale):
    """(K,) micro-batch losses and the gradient of the window's mean loss * scale w.r.t. the fp32 w."""
    k, b, d = xw.shape

    def scaled_loss(w):
        rows = xw.reshape(k * b, d).astype(jnp.float16)
        pred = (rows @ w.astype(jnp.float16)).astype(jnp.float32)
        squares = (pred - yw.reshape(k * b)) ** 2
        return jnp.mean(squares) * scale, jnp.mean(squares.reshape(k, b), axis=1)

    (_, losses), grad = jax.value_and_grad(scaled_loss, has_aux=True)(w)
    return losses, grad


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
    k = int(accum_steps)
    x = jnp.asarray(x, jnp.float32)
    y = jnp.asarray(y, jnp.float32)
    w = jnp.asarray(w, jnp.float32)
    scale = jnp.float32(loss_scale)
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))
    opt_state = tx.init(w)
    losses = []
    for start in range(0, x.shape[0], k):
        window_losses, grad = _window(w, x[start : start + k], y[start : start + k], scale)
        losses.append(window_losses)
        updates, opt_state = tx.update(grad / scale, opt_state, w)  # the mean over K * B rows: / S only
        w = optax.apply_updates(w, updates)
    return jnp.concatenate(losses).astype(jnp.float32)
