"""Pitfall step_per_micro_batch, another form: the optimizer runs on the running mean at every micro-batch.

After micro-batch j of a window (j = 1..K), the mean of the j gradients so far, acc / (j * S), goes through
clip and sgd, and the new optimizer state is kept; the weights are replaced only after the K-th micro-batch.
The momentum buffer therefore takes K running means per window instead of one mean.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


@jax.jit
def _micro_batch(w, xb, yb, scale):
    def scaled_loss(w):
        pred = (xb.astype(jnp.float16) @ w.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - yb) ** 2)
        return loss * scale, loss

    (_, loss), grad = jax.value_and_grad(scaled_loss, has_aux=True)(w)
    return loss, grad


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
    x = jnp.asarray(x, jnp.float32)
    y = jnp.asarray(y, jnp.float32)
    w = jnp.asarray(w, jnp.float32)
    scale = jnp.float32(loss_scale)
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))
    opt_state = tx.init(w)
    acc = jnp.zeros_like(w)
    count = 0
    losses = []
    for i in range(x.shape[0]):
        loss, grad = _micro_batch(w, x[i], y[i], scale)
        losses.append(loss)
        acc = acc + grad
        count += 1
        updates, opt_state = tx.update(acc / (count * scale), opt_state, w)  # every micro-batch
        if count == accum_steps:
            w = optax.apply_updates(w, updates)
            acc = jnp.zeros_like(w)
            count = 0
    return jnp.stack(losses)
