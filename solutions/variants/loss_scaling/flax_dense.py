"""Variant: flax Dense(use_bias=False, dtype=float16, param_dtype=float32), a jitted step, and
jax.tree_util for the unscale and the clip."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax import tree_util


def train_with_loss_scaling(x, y, w, lr, loss_scale, max_norm, num_steps):
    model = nn.Dense(1, use_bias=False, dtype=jnp.float16, param_dtype=jnp.float32)
    params = {"params": {"kernel": jnp.asarray(w, jnp.float32).reshape(-1, 1)}}
    xs = jnp.asarray(x, jnp.float32)
    ys = jnp.asarray(y, jnp.float32)
    s = jnp.float32(loss_scale)

    def loss_fn(p):
        pred = model.apply(p, xs)[:, 0].astype(jnp.float32)  # Dense casts x and kernel to fp16
        mse = jnp.mean((pred - ys) ** 2)
        return mse * s, mse

    @jax.jit
    def step(p):
        grads, mse = jax.grad(loss_fn, has_aux=True)(p)
        grads = tree_util.tree_map(lambda g: g / s, grads)
        leaves = tree_util.tree_leaves(grads)
        norm = jnp.sqrt(sum(jnp.sum(g**2) for g in leaves))
        factor = jnp.where(norm < max_norm, 1.0, max_norm / norm)
        new_p = tree_util.tree_map(lambda a, g: a - lr * (g * factor), p, grads)
        return new_p, mse

    losses = []
    for _ in range(int(num_steps)):
        params, mse = step(params)
        losses.append(mse)
    return jnp.stack(losses)
