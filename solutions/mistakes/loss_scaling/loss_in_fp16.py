"""Mistake: I take the residual in fp32 against the fp32 targets, but cast it to fp16 to square it and
average it, like the rest of the forward pass, and cast only the mean loss back to fp32 before scaling."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike


def scaled_loss(w32, x16, y32, scale):
    # The cast sits inside the differentiated function, so the gradient comes back fp32.
    pred = (x16 @ w32.astype(jnp.float16)).astype(jnp.float32)
    r16 = (pred - y32).astype(jnp.float16)  # the rest of the forward pass is fp16 too
    loss = jnp.mean(r16**2).astype(jnp.float32)
    return loss * scale, loss


grad_fn = jax.jit(jax.grad(scaled_loss, has_aux=True))


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

    losses = []
    for _ in range(int(num_steps)):
        scaled_grad, loss = grad_fn(master, x16, y32, scale)
        grad = scaled_grad / scale  # unscale in fp32, before clipping touches it
        norm = jnp.sqrt(jnp.sum(grad * grad))
        grad = jnp.where(norm < max_norm, grad, grad / norm * max_norm)
        master = master - jnp.float32(lr) * grad
        losses.append(loss)
    return jnp.stack(losses)
