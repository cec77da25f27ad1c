"""Pitfall window_as_one_product, summed form: one fp16 product over the window's K * B rows, whose K
micro-batch losses are summed before the backward pass.

All K * B rows of a window go through one fp16 product; the K micro-batch means are taken from its result
and added up, and the gradient of that sum times S is divided by K * S, as the recipe divides its
accumulated sum. The backward pass is still one fp16 product over the K * B rows: the window's scaled
gradient (the sum of the K micro-batch gradients) is rounded to fp16 once, and where that sum does not fit
fp16 it is inf.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax


@partial(jax.jit, static_argnames=("k",))
def _window_grad(w, xw, yw, scale, *, k):
    rows = xw.reshape(-1, xw.shape[-1])

    def scaled_sum(w):
        pred = jnp.dot(rows.astype(jnp.float16), w.astype(jnp.float16)).astype(jnp.float32)
        losses = jnp.mean(jnp.square(pred.reshape(k, -1) - yw), axis=1)  # (K,) micro-batch losses
        return jnp.sum(losses) * scale, losses

    return jax.grad(scaled_sum, has_aux=True)(w)


def train_with_grad_accumulation(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    lr: float,
    momentum: float,
    loss_scale: float,
    max_norm: float,
    accum_steps: int,
) -> jax.Array:
    """Same signature as the reference; returns float32 (M,)."""
    k = int(accum_steps)
    f32 = jnp.float32
    params = jnp.asarray(w, f32)
    scale = f32(loss_scale)
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))
    opt_state = tx.init(params)
    xs = np.asarray(x, np.float32)
    ys = np.asarray(y, np.float32)
    out = []
    for start in range(0, xs.shape[0], k):
        grad, losses = _window_grad(params, xs[start : start + k], ys[start : start + k], scale, k=k)
        out.append(losses)
        updates, opt_state = tx.update(grad / (k * scale), opt_state, params)
        params = optax.apply_updates(params, updates)
    return jnp.concatenate(out)
