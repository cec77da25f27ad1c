"""Correct variant: no TrainState or optax; explicit kernel/bias arithmetic and a hand-written SGD update."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np


def _bf16_mse(params, x, y):
    kernel = params["kernel"].astype(jnp.bfloat16)
    bias = params["bias"].astype(jnp.bfloat16)
    preds = (x.astype(jnp.bfloat16) @ kernel + bias).reshape(-1)
    err = preds - y.astype(jnp.bfloat16)
    return jnp.mean(jnp.square(err))


def mixed_precision_step(seed, x, y, lr, loss_scale):
    params = nn.Dense(1).init(jax.random.PRNGKey(int(seed)), x)["params"]

    grads = jax.grad(lambda p: _bf16_mse(p, x, y).astype(jnp.float32) * loss_scale)(params)
    params = {name: params[name] - lr * (grads[name].astype(jnp.float32) / loss_scale) for name in params}
    loss = _bf16_mse(params, x, y).astype(jnp.float32)
    return np.asarray(loss, dtype=np.float32).reshape(1)
