"""Pitfall: the loss is never scaled (loss_scale ignored), so every fp16 row gradient underflows."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def loss_fn(w32, x16, y32):
    pred = (x16 @ w32.astype(jnp.float16)).astype(jnp.float32)
    return jnp.mean((pred - y32) ** 2)


value_and_grad_fn = jax.jit(jax.value_and_grad(loss_fn))


def train_with_loss_scaling(x, y, w, lr, loss_scale, max_norm, num_steps):
    x16 = jnp.asarray(x, jnp.float32).astype(jnp.float16)
    y32 = jnp.asarray(y, jnp.float32)
    master = jnp.asarray(w, jnp.float32)

    losses = []
    for _ in range(int(num_steps)):
        loss, grad = value_and_grad_fn(master, x16, y32)
        norm = jnp.sqrt(jnp.sum(grad * grad))
        grad = jnp.where(norm < max_norm, grad, grad / norm * max_norm)
        master = master - lr * grad
        losses.append(loss)
    return jnp.stack(losses)
