"""Mistake: my loss_fn returns the plain float32 MSE, without multiplying it by loss_scale, but I still
divide the gradients by loss_scale afterwards, so every step is loss_scale times too small."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


def mixed_precision_step(seed, x, y, lr, loss_scale):
    """Returns the bf16 MSE after one SGD step, as float32 of shape (1,)."""
    model = nn.Dense(1)
    params = model.init(jax.random.PRNGKey(int(seed)), x)["params"]
    state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.sgd(lr))

    def bf16_mse(params):
        params_bf16 = jax.tree.map(lambda p: p.astype(jnp.bfloat16), params)
        preds = state.apply_fn({"params": params_bf16}, x.astype(jnp.bfloat16)).reshape(-1)
        return jnp.mean((preds - y.astype(jnp.bfloat16)) ** 2)

    def loss_fn(params):
        return bf16_mse(params).astype(jnp.float32)

    grads = jax.grad(loss_fn)(state.params)
    grads = jax.tree.map(lambda g: g.astype(jnp.float32) / loss_scale, grads)
    state = state.apply_gradients(grads=grads)
    return bf16_mse(state.params).astype(jnp.float32).reshape(1)
