"""Accepted form (not graded): the bf16 MSE multiplied by loss_scale while still bf16, and the product
cast to float32. bf16 has float32's exponent range and loss_scale is a power of two, so the product is
exact either way and the gradients are the recipe's."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


def mixed_precision_step(seed, x, y, lr, loss_scale):
    """Returns the bf16 MSE after one loss-scaled SGD step, as float32 of shape (1,)."""
    model = nn.Dense(1)
    params = model.init(jax.random.PRNGKey(int(seed)), x)["params"]
    state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.sgd(lr))

    def bf16_mse(params):
        params_bf16 = jax.tree.map(lambda p: p.astype(jnp.bfloat16), params)
        preds = state.apply_fn({"params": params_bf16}, x.astype(jnp.bfloat16)).reshape(-1)
        return jnp.mean((preds - y.astype(jnp.bfloat16)) ** 2)

    def loss_fn(params):
        return (bf16_mse(params) * loss_scale).astype(jnp.float32)

    grads = jax.grad(loss_fn)(state.params)
    grads = jax.tree.map(lambda g: g.astype(jnp.float32) / loss_scale, grads)
    state = state.apply_gradients(grads=grads)
    return bf16_mse(state.params).astype(jnp.float32).reshape(1)
