"""Mistake: I return the loss that jax.value_and_grad gave me (divided by the scale), which is the loss before the step, not after it."""

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

    def loss_fn(params):
        p16 = jax.tree.map(lambda a: a.astype(jnp.bfloat16), params)
        preds = state.apply_fn({"params": p16}, x.astype(jnp.bfloat16)).reshape(-1)
        mse = jnp.mean((preds - y.astype(jnp.bfloat16)) ** 2)
        return mse.astype(jnp.float32) * loss_scale

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    grads = jax.tree.map(lambda g: g.astype(jnp.float32) / loss_scale, grads)
    state = state.apply_gradients(grads=grads)
    return (loss / loss_scale).reshape(1)
