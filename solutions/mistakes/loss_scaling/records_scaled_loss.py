"""Mistake: I record the value that value_and_grad returns, which is the scaled loss, not the plain MSE."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp


@functools.partial(jax.jit, static_argnames="num_steps")
def _train(x, y, w, lr, S, max_norm, num_steps):
    x16 = x.astype(jnp.float16)

    def scaled_loss(m):
        pred = jnp.dot(x16, m.astype(jnp.float16)).astype(jnp.float32)
        return jnp.mean((pred - y) ** 2) * S

    def step(master, _):
        value, g = jax.value_and_grad(scaled_loss)(master)
        g = g.astype(jnp.float32) / S
        n = jnp.sqrt(jnp.sum(g * g))
        g = jnp.where(n < max_norm, g, g / n * max_norm)
        return master - lr * g, value

    _, losses = jax.lax.scan(step, w, None, length=num_steps)
    return losses


def train_with_loss_scaling(x, y, w, lr, loss_scale, max_norm, num_steps):
    return _train(
        jnp.asarray(x, jnp.float32),
        jnp.asarray(y, jnp.float32),
        jnp.asarray(w, jnp.float32),
        jnp.float32(lr),
        jnp.float32(loss_scale),
        jnp.float32(max_norm),
        num_steps=int(num_steps),
    )
