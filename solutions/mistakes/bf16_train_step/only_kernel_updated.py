"""Mistake: my hand-written update only changes the kernel and leaves the bias at its initial value."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


def mixed_precision_step(seed, x, y, lr, loss_scale):
    params = nn.Dense(1).init(jax.random.PRNGKey(int(seed)), x)["params"]
    x16 = x.astype(jnp.bfloat16)
    y16 = y.astype(jnp.bfloat16)

    def mse(kernel, bias):
        preds = (x16 @ kernel.astype(jnp.bfloat16) + bias.astype(jnp.bfloat16)).reshape(-1)
        return jnp.mean((preds - y16) ** 2)

    def loss_fn(kernel):
        return mse(kernel, params["bias"]).astype(jnp.float32) * loss_scale

    g = jax.grad(loss_fn)(params["kernel"]).astype(jnp.float32) / loss_scale
    kernel = params["kernel"] - lr * g
    return mse(kernel, params["bias"]).astype(jnp.float32).reshape(1)
