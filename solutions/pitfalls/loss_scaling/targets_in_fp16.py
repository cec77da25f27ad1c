"""Pitfall: the targets y are cast to fp16 along with the inputs, so the residual uses a rounded y."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def scaled_loss(w32, x16, y16, scale):
    pred16 = x16 @ w32.astype(jnp.float16)
    loss = jnp.mean((pred16.astype(jnp.float32) - y16.astype(jnp.float32)) ** 2)
    return loss * scale, loss


grad_fn = jax.jit(jax.grad(scaled_loss, has_aux=True))


def train_with_loss_scaling(x, y, w, lr, loss_scale, max_norm, num_steps):
    x16 = jnp.asarray(x).astype(jnp.float16)
    y16 = jnp.asarray(y).astype(jnp.float16)
    master = jnp.asarray(w, jnp.float32)
    scale = jnp.float32(loss_scale)

    losses = []
    for _ in range(int(num_steps)):
        grad, loss = grad_fn(master, x16, y16, scale)
        grad = grad / scale
        norm = jnp.sqrt(jnp.sum(grad * grad))
        grad = jnp.where(norm < max_norm, grad, grad / norm * max_norm)
        master = master - lr * grad
        losses.append(loss)
    return jnp.stack(losses)
