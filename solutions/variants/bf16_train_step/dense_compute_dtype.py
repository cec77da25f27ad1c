"""Correct variant: Dense(dtype=bfloat16) casts params and inputs itself; value_and_grad; squared_error."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


def mixed_precision_step(seed, x, y, lr, loss_scale):
    model = nn.Dense(1, dtype=jnp.bfloat16)  # fp32 params, bf16 compute
    variables = model.init(jax.random.PRNGKey(int(seed)), x)
    state = train_state.TrainState.create(apply_fn=model.apply, params=variables["params"], tx=optax.sgd(lr))
    y_bf16 = jnp.asarray(y, dtype=jnp.bfloat16)

    def mse(params):
        preds = state.apply_fn({"params": params}, x).reshape(-1)
        return optax.squared_error(preds, y_bf16).mean()

    def scaled_loss(params):
        return mse(params).astype(jnp.float32) * loss_scale

    _, grads = jax.value_and_grad(scaled_loss)(state.params)
    grads = jax.tree_util.tree_map(lambda g: jnp.float32(g) / loss_scale, grads)
    state = state.apply_gradients(grads=grads)
    return jnp.atleast_1d(mse(state.params).astype(jnp.float32))
