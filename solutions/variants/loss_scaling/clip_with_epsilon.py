"""Accepted form (not graded): PyTorch's clip, `g * min(1, max_norm / (n + 1e-6))`, with an epsilon the
recipe does not add to the norm. The epsilon changes the clipped steps by a relative 1e-6 / n, which the
losses do not show within the tolerance in these cases."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike


def train_with_loss_scaling(
    x: ArrayLike,
    y: ArrayLike,
    w: ArrayLike,
    lr: float,
    loss_scale: float,
    max_norm: float,
    num_steps: int,
) -> jax.Array:
    """Trains pred = x @ w with a loss-scaled MSE; returns the float32 losses, shape (num_steps,).

    x: float32 (N, D); y: float32 (N,); w: float32 (D,) initial master weights.
    losses[k] is the unscaled fp32 MSE of step k's forward pass, before step k's update.
    """
    x16 = jnp.asarray(x, jnp.float32).astype(jnp.float16)
    y32 = jnp.asarray(y, jnp.float32)
    master = jnp.asarray(w, jnp.float32)
    # Keep the scale in fp32: 2^16 and above would be inf in fp16.
    scale = jnp.float32(loss_scale)

    def scaled_loss(w32):
        # The cast sits inside the differentiated function, so the gradient comes back fp32.
        pred = (x16 @ w32.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - y32) ** 2)  # the reduction runs in fp32
        return loss * scale, loss

    grad_fn = jax.grad(scaled_loss, has_aux=True)
    losses = []
    for _ in range(int(num_steps)):
        scaled_grad, loss = grad_fn(master)
        grad = scaled_grad / scale  # unscale in fp32, before clipping touches it
        norm = jnp.sqrt(jnp.sum(grad * grad))
        grad = grad * jnp.minimum(1.0, max_norm / (norm + 1e-6))  # PyTorch's clip_grad_norm_
        master = master - jnp.float32(lr) * grad
        losses.append(loss)
    return jnp.stack(losses)
