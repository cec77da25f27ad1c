"""Pitfall step_per_micro_batch, another form: weights moved once per window, momentum every micro-batch.

One jitted function per micro-batch adds the gradient, always runs the optimizer on the running average and
keeps the new optimizer state, but applies the update to the weights only on the K-th micro-batch.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax


@partial(jax.jit, static_argnames=("k",))
def _micro_step(w, opt_state, acc, count, xb, yb, scale, lr, momentum, max_norm, *, k):
    def scaled_loss(w):
        pred = (xb.astype(jnp.float16) @ w.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - yb) ** 2)
        return loss * scale, loss

    (_, loss), grad = jax.value_and_grad(scaled_loss, has_aux=True)(w)
    acc = acc + grad
    count = count + 1
    last = count == k
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))
    updates, opt_state = tx.update(acc / (k * scale), opt_state, w)  # the state advances every time
    w = jnp.where(last, optax.apply_updates(w, updates), w)  # only the weights wait for the K-th
    acc = jnp.where(last, jnp.zeros_like(acc), acc)
    count = jnp.where(last, 0, count)
    return w, opt_state, acc, count, loss


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
    f32 = jnp.float32
    w = jnp.asarray(w, f32)
    opt_state = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum)).init(w)
    acc, count = jnp.zeros_like(w), jnp.int32(0)
    hyper = (f32(loss_scale), f32(lr), f32(momentum), f32(max_norm))
    losses = []
    for xb, yb in zip(np.asarray(x, np.float32), np.asarray(y, np.float32), strict=True):
        w, opt_state, acc, count, loss = _micro_step(w, opt_state, acc, count, xb, yb, *hyper, k=accum_steps)
        losses.append(loss)
    return jnp.stack(losses)
