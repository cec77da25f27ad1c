"""Variant: the whole loop under jax.jit with lax.scan; the step count is static."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="num_steps")
def _train(x, y, w, lr, loss_scale, max_norm, num_steps):
    x16 = x.astype(jnp.float16)

    def scaled_loss(w32):
        pred = (x16 @ w32.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - y) ** 2)
        return loss * loss_scale, loss

    def step(w32, _):
        (_, loss), g = jax.value_and_grad(scaled_loss, has_aux=True)(w32)
        g = g / loss_scale
        norm = jnp.sqrt(jnp.vdot(g, g))
        g = jax.lax.cond(norm < max_norm, lambda v: v, lambda v: v / norm * max_norm, g)
        return w32 - lr * g, loss

    _, losses = jax.lax.scan(step, w, None, length=num_steps)
    return losses


def train_with_loss_scaling(x, y, w, lr, loss_scale, max_norm, num_steps):
    f32 = jnp.float32
    return _train(
        jnp.asarray(x, f32),
        jnp.asarray(y, f32),
        jnp.asarray(w, f32),
        f32(lr),
        f32(loss_scale),
        f32(max_norm),
        num_steps=int(num_steps),
    )
