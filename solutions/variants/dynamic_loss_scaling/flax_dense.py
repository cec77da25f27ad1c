"""Correct variant: flax Dense(use_bias=False, dtype=float16), optax sgd, jnp.where-selected step."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

_MODEL = nn.Dense(1, use_bias=False, dtype=jnp.float16, param_dtype=jnp.float32)


@jax.jit
def _step(params, opt_state, scale, count, x, y, lr, momentum, period, factor, min_scale):
    tx = optax.sgd(lr, momentum=momentum)

    def loss_fn(params):
        pred = _MODEL.apply(params, x.astype(jnp.float16))[:, 0].astype(jnp.float32)
        loss = jnp.mean((pred - y) ** 2)
        return loss * scale, loss

    (_, loss), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / scale, grads)
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    updates, new_opt_state = tx.update(grads, opt_state, params)
    new_params = optax.apply_updates(params, updates)
    keep = lambda new, old: jnp.where(ok, new, old)  # noqa: E731
    params = jax.tree.map(keep, new_params, params)
    opt_state = jax.tree.map(keep, new_opt_state, opt_state)
    count = jnp.where(ok, count + 1, 0)
    grow = count == period
    scale_next = jnp.where(ok, jnp.where(grow, scale * factor, scale), jnp.maximum(min_scale, scale / factor))
    scale_next = jnp.where(jnp.isfinite(scale_next), scale_next, scale)
    count = jnp.where(grow, 0, count)
    return params, opt_state, scale_next, count, loss


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
    x = jnp.asarray(x, jnp.float32)
    y = jnp.asarray(y, jnp.float32)
    params = {"params": {"kernel": jnp.asarray(w, jnp.float32).reshape(-1, 1)}}
    opt_state = optax.sgd(lr, momentum=momentum).init(params)
    hyper = [
        jnp.float32(lr),
        jnp.float32(momentum),
        jnp.int32(period),
        jnp.float32(factor),
        jnp.float32(min_scale),
    ]
    scale, count = jnp.float32(init_scale), jnp.int32(0)
    losses, scales = [], []
    for _ in range(num_steps):
        scales.append(scale)
        params, opt_state, scale, count, loss = _step(params, opt_state, scale, count, x, y, *hyper)
        losses.append(loss)
    return jnp.concatenate([jnp.stack(losses), jnp.stack(scales)])
