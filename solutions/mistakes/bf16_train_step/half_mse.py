"""Mistake: I used the textbook 0.5 * mean squared error as the loss and the returned value, which halves the gradient and the loss."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp


def half_mse(p, x, y):
    k = p["kernel"].astype(jnp.bfloat16)
    b = p["bias"].astype(jnp.bfloat16)
    preds = (x.astype(jnp.bfloat16) @ k + b).reshape(-1)
    return 0.5 * jnp.mean(jnp.square(preds - y.astype(jnp.bfloat16)))


@jax.jit
def step(p, x, y, lr, loss_scale):
    grads = jax.grad(lambda q: half_mse(q, x, y).astype(jnp.float32) * loss_scale)(p)
    grads = jax.tree_util.tree_map(lambda g: g.astype(jnp.float32) / loss_scale, grads)
    p = jax.tree_util.tree_map(lambda a, g: a - lr * g, p, grads)
    return half_mse(p, x, y).astype(jnp.float32)


def mixed_precision_step(seed, x, y, lr, loss_scale):
    params = nn.Dense(1).init(jax.random.PRNGKey(int(seed)), x)["params"]

    return step(params, x, y, lr, loss_scale).reshape(1)
