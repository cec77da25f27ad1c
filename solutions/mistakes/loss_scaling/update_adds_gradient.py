"""Mistake: my SGD update adds lr * g to the master weights instead of subtracting it."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def scaled_loss(m, x16, y, S):
    pred = (x16 @ m.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - y) ** 2)
    return loss * S, loss


grad_fn = jax.jit(jax.grad(scaled_loss, has_aux=True))


def train_with_loss_scaling(x, y, w, lr, loss_scale, max_norm, num_steps):
    x16 = jnp.asarray(x).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    master = jnp.asarray(w, jnp.float32)
    S = jnp.float32(loss_scale)

    losses = []
    for _ in range(num_steps):
        g, loss = grad_fn(master, x16, y, S)
        losses.append(loss)
        g = g.astype(jnp.float32) / S
        n = jnp.sqrt(jnp.sum(g**2))
        g = jnp.where(n < max_norm, g, g / n * max_norm)
        master = master + lr * g
    return jnp.stack(losses)
