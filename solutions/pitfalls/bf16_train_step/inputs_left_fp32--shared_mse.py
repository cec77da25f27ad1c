"""Pitfall, another form: one MSE helper that casts the params but not x and y, used for the step and for
the returned loss alike."""

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

    def mse(params):
        p16 = jax.tree.map(lambda p: p.astype(jnp.bfloat16), params)
        preds = state.apply_fn({"params": p16}, x).reshape(-1)
        return jnp.mean((preds - y) ** 2)

    grads = jax.grad(lambda p: mse(p).astype(jnp.float32) * loss_scale)(state.params)
    grads = jax.tree.map(lambda g: g.astype(jnp.float32) / loss_scale, grads)
    state = state.apply_gradients(grads=grads)
    return mse(state.params).astype(jnp.float32).reshape(1)
