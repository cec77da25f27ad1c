"""Mistake: I also append the loss after the last update, so I return num_steps + 1 losses."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def train_with_loss_scaling(x, y, w, lr, loss_scale, max_norm, num_steps):
    x16 = jnp.asarray(x).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    master = jnp.asarray(w, jnp.float32)
    S = jnp.float32(loss_scale)

    def loss_fn(m):
        pred = (x16 @ m.astype(jnp.float16)).astype(jnp.float32)
        return jnp.mean((pred - y) ** 2)

    losses = [loss_fn(master)]
    for _ in range(num_steps):
        g = jax.grad(lambda m: loss_fn(m) * S)(master)
        g = g.astype(jnp.float32) / S
        n = jnp.sqrt(jnp.sum(g**2))
        g = jnp.where(n < max_norm, g, g / n * max_norm)
        master = master - lr * g
        losses.append(loss_fn(master))
    return jnp.stack(losses)
