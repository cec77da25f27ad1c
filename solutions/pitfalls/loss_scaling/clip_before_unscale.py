"""Pitfall: the global norm is clipped while the gradients are still scaled, then unscaled."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def scaled_loss(w32, x16, y32, scale):
    pred = (x16 @ w32.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - y32) ** 2)
    return loss * scale, loss


grad_fn = jax.jit(jax.grad(scaled_loss, has_aux=True))


def train_with_loss_scaling(x, y, w, lr, loss_scale, max_norm, num_steps):
    x16 = jnp.asarray(x, jnp.float32).astype(jnp.float16)
    y32 = jnp.asarray(y, jnp.float32)
    master = jnp.asarray(w, jnp.float32)
    scale = jnp.float32(loss_scale)

    losses = []
    for _ in range(int(num_steps)):
        grad, loss = grad_fn(master, x16, y32, scale)
        norm = jnp.sqrt(jnp.sum(grad * grad))
        grad = jnp.where(norm < max_norm, grad, grad / norm * max_norm)
        grad = grad / scale
        master = master - lr * grad
        losses.append(loss)
    return jnp.stack(losses)
