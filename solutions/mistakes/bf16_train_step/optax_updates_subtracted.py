"""Mistake: I subtract the updates that optax.sgd returns, but they already carry the minus sign, so the step goes uphill."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


def mixed_precision_step(seed, x, y, lr, loss_scale):
    model = nn.Dense(1)
    params = model.init(jax.random.PRNGKey(int(seed)), x)["params"]
    tx = optax.sgd(lr)
    opt_state = tx.init(params)

    def bf16_mse(p):
        p16 = jax.tree.map(lambda a: a.astype(jnp.bfloat16), p)
        preds = model.apply({"params": p16}, x.astype(jnp.bfloat16)).reshape(-1)
        return jnp.mean((preds - y.astype(jnp.bfloat16)) ** 2)

    def loss_fn(params):
        return bf16_mse(params).astype(jnp.float32) * loss_scale

    grads = jax.grad(loss_fn)(params)
    grads = jax.tree.map(lambda g: g.astype(jnp.float32) / loss_scale, grads)
    updates, opt_state = tx.update(grads, opt_state, params)
    params = jax.tree.map(lambda p, u: p - u, params, updates)
    return bf16_mse(params).astype(jnp.float32).reshape(1)
