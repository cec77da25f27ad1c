"""Correct variant: the update and the final loss run under jax.jit."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state

BF16 = jnp.bfloat16


def _loss(apply_fn, params, x, y):
    params = jax.tree.map(lambda p: p.astype(BF16), params)
    preds = apply_fn({"params": params}, x.astype(BF16)).reshape(-1)
    return ((preds - y.astype(BF16)) ** 2).mean().astype(jnp.float32)


@jax.jit
def _train_step(state, x, y, loss_scale):
    grads = jax.grad(lambda p: _loss(state.apply_fn, p, x, y) * loss_scale)(state.params)
    grads = jax.tree.map(lambda g: g.astype(jnp.float32) / loss_scale, grads)
    new_state = state.apply_gradients(grads=grads)
    return _loss(new_state.apply_fn, new_state.params, x, y)


def mixed_precision_step(seed, x, y, lr, loss_scale):
    model = nn.Dense(1)
    params = model.init(jax.random.PRNGKey(int(seed)), x)["params"]
    state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.sgd(lr))
    return _train_step(state, jnp.asarray(x), jnp.asarray(y), jnp.float32(loss_scale)).reshape(1)
