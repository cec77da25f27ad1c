"""Mistake: I subtract y from the (N, 1) output of the flax Dense layer without flattening it, so the residual broadcasts to (N, N)."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


def train_with_loss_scaling(x, y, w, lr, loss_scale, max_norm, num_steps):
    x = jnp.asarray(x, jnp.float32)
    y = jnp.asarray(y, jnp.float32)
    model = nn.Dense(1, use_bias=False, dtype=jnp.float16)
    params = {"kernel": jnp.asarray(w, jnp.float32)[:, None]}
    S = jnp.float32(loss_scale)
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr))
    opt_state = tx.init(params)

    def scaled_loss(p):
        pred = model.apply({"params": p}, x).astype(jnp.float32)
        loss = jnp.mean((pred - y) ** 2)
        return loss * S, loss

    @jax.jit
    def step(params, opt_state):
        g, loss = jax.grad(scaled_loss, has_aux=True)(params)
        g = jax.tree.map(lambda a: a.astype(jnp.float32) / S, g)
        updates, opt_state = tx.update(g, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    losses = []
    for _ in range(num_steps):
        params, opt_state, loss = step(params, opt_state)
        losses.append(loss)
    return jnp.stack(losses)
