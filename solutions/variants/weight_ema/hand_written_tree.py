"""Correct variant: no optax; only the gradient is jitted, the updates run eagerly: hand-written momentum, the
EMA as ema * decay + w * (1 - decay) with jax.tree_util over a params dict, and a Python `if` on the
finiteness check."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def _scaled_loss(p, xb, yb, scale):
    pred = jnp.dot(xb.astype(jnp.float16), p["kernel"].astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - yb) ** 2)
    return scale * loss, loss


_grad_fn = jax.jit(jax.value_and_grad(_scaled_loss, has_aux=True))


def train_with_weight_ema(x, y, w, x_eval, y_eval, lr, momentum, loss_scale, decay):
    """Same signature as the reference; returns float32 (2 * T,)."""
    tree_map = jax.tree_util.tree_map
    params = {"kernel": jnp.asarray(w, jnp.float32)}
    velocity = tree_map(jnp.zeros_like, params)
    average = tree_map(lambda p: p.copy(), params)
    scale = np.float32(loss_scale)
    losses, evals = [], []
    for k in range(x.shape[0]):
        (_, loss), grads = _grad_fn(params, jnp.asarray(x[k]), jnp.asarray(y[k]), scale)
        grads = tree_map(lambda g: g / scale, grads)
        finite = all(bool(jnp.isfinite(g).all()) for g in jax.tree_util.tree_leaves(grads))
        if finite:
            velocity = tree_map(lambda g, v: g + momentum * v, grads, velocity)
            params = tree_map(lambda p, v: p - lr * v, params, velocity)
            average = tree_map(lambda a, p: a * decay + p * (1.0 - decay), average, params)
        losses.append(loss)
        residual = jnp.asarray(x_eval) @ average["kernel"] - jnp.asarray(y_eval)
        evals.append(jnp.mean(residual**2))
    return jnp.array(losses + evals, dtype=jnp.float32)
