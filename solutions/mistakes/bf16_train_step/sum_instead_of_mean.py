"""Mistake: I used the sum of squared errors instead of the mean, so the gradient is N times too large."""

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

    def sse(p):
        p16 = jax.tree.map(lambda a: a.astype(jnp.bfloat16), p)
        preds = state.apply_fn({"params": p16}, x.astype(jnp.bfloat16)).reshape(-1)
        return jnp.sum((preds - y.astype(jnp.bfloat16)) ** 2)

    def loss_fn(params):
        return sse(params).astype(jnp.float32) * loss_scale

    grads = jax.grad(loss_fn)(state.params)
    grads = jax.tree.map(lambda g: g.astype(jnp.float32) / loss_scale, grads)
    state = state.apply_gradients(grads=grads)
    return (sse(state.params) / x.shape[0]).astype(jnp.float32).reshape(1)
