"""Mistake: I chained optax.sgd before optax.clip_by_global_norm, so the clip sees lr * g instead of the gradient."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax


def make_tx(lr, max_norm):
    return optax.chain(optax.sgd(lr), optax.clip_by_global_norm(max_norm))


def scaled_loss(m, S, x16, y):
    pred = jnp.matmul(x16, m.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - y) ** 2)
    return loss * S, loss


@jax.jit
def step(params, opt_state, lr, max_norm, S, x16, y):
    g, loss = jax.grad(scaled_loss, has_aux=True)(params, S, x16, y)
    g = g.astype(jnp.float32) / S
    updates, opt_state = make_tx(lr, max_norm).update(g, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def train_with_loss_scaling(x, y, w, lr, loss_scale, max_norm, num_steps):
    x16 = jnp.asarray(x).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    params = jnp.asarray(w, jnp.float32)
    S = jnp.float32(loss_scale)

    opt_state = make_tx(lr, max_norm).init(params)

    losses = []
    for _ in range(num_steps):
        params, opt_state, loss = step(params, opt_state, lr, max_norm, S, x16, y)
        losses.append(loss)
    return jnp.stack(losses)
