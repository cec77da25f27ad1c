"""Pitfall: the prediction is an elementwise fp16 product summed over features, not a matrix product.

Every product x_ij * w_j is rounded to fp16 before the sum, which a matrix product does not do.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def scaled_loss(w32, x16, y32, scale):
    pred16 = (x16 * w32.astype(jnp.float16)).sum(axis=-1)
    loss = jnp.mean((pred16.astype(jnp.float32) - y32) ** 2)
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
        grad = grad / scale
        norm = jnp.sqrt(jnp.sum(grad * grad))
        grad = jnp.where(norm < max_norm, grad, grad / norm * max_norm)
        master = master - lr * grad
        losses.append(loss)
    return jnp.stack(losses)
