"""Correct variant: hand-written momentum SGD, lax.cond to skip, jax.grad plus a separate forward pass."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def _mse(params, x16, y):
    pred = jnp.matmul(x16, params["w"].astype(jnp.float16)).astype(jnp.float32)
    r = pred - y
    return jnp.sum(r * r) / y.shape[0]


@jax.jit
def _step(params, trace, scale, x16, y, lr, momentum):
    loss = _mse(params, x16, y)
    grads = jax.grad(lambda p: _mse(p, x16, y) * scale)(params)
    grads = jax.tree_util.tree_map(lambda g: g / scale, grads)
    finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(g)) for g in jax.tree_util.tree_leaves(grads)]))

    def apply(operands):
        params, trace, grads = operands
        trace = jax.tree_util.tree_map(lambda g, m: g + momentum * m, grads, trace)
        params = jax.tree_util.tree_map(lambda p, m: p - lr * m, params, trace)
        return params, trace

    params, trace = jax.lax.cond(finite, apply, lambda ops: (ops[0], ops[1]), (params, trace, grads))
    return params, trace, loss, finite


def train_with_dynamic_loss_scaling(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    lr: float,
    momentum: float,
    init_scale: float,
    period: int,
    factor: float,
    min_scale: float,
    num_steps: int,
) -> jax.Array:
    """Same signature as the reference; returns float32 (2 * num_steps,)."""
    x16 = jnp.asarray(x, jnp.float32).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    params = {"w": jnp.asarray(w, jnp.float32)}
    trace = jax.tree_util.tree_map(jnp.zeros_like, params)
    lr, momentum = jnp.float32(lr), jnp.float32(momentum)

    scale, good_steps = np.float32(init_scale), 0
    losses, scales = [], []
    for _ in range(num_steps):
        scales.append(scale)
        params, trace, loss, finite = _step(params, trace, jnp.float32(scale), x16, y, lr, momentum)
        losses.append(loss)
        if bool(finite):
            good_steps += 1
            if good_steps == period:
                bigger = np.float32(scale * np.float32(factor))
                scale = bigger if np.isfinite(bigger) else scale
                good_steps = 0
        else:
            scale = np.float32(max(np.float32(min_scale), scale / np.float32(factor)))
            good_steps = 0
    return jnp.concatenate([jnp.stack(losses), jnp.asarray(np.array(scales, np.float32))])
