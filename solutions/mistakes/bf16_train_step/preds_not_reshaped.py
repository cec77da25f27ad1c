"""Mistake: I subtract y from the (N, 1) Dense output without reshape(-1), so the difference broadcasts to (N, N)."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


def mixed_precision_step(seed, x, y, lr, loss_scale):
    model = nn.Dense(1)
    params = model.init(jax.random.PRNGKey(int(seed)), x)["params"]
    state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.sgd(lr))
    x16 = x.astype(jnp.bfloat16)
    y16 = y.astype(jnp.bfloat16)

    def bf16_mse(p):
        p16 = jax.tree.map(lambda a: a.astype(jnp.bfloat16), p)
        preds = state.apply_fn({"params": p16}, x16)
        return jnp.mean((preds - y16) ** 2)

    def loss_fn(params):
        return bf16_mse(params).astype(jnp.float32) * loss_scale

    grads = jax.grad(loss_fn)(state.params)
    grads = jax.tree.map(lambda g: g.astype(jnp.float32) / loss_scale, grads)
    state = state.apply_gradients(grads=grads)
    return bf16_mse(state.params).astype(jnp.float32).reshape(1)
