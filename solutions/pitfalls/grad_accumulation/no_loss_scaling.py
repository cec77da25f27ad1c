"""Pitfall no_loss_scaling: the fp16 forward and backward pass are right, but the loss is never scaled.

The gradient of the plain micro-batch loss goes through the fp16 backward pass, so its fp16 values (the
cotangent 2 (pred - y) / B of every row and the gradient itself) are S times smaller than the recipe's and
can fall into fp16's subnormal range or below it; the accumulated gradient is then divided by K only.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


@jax.jit
def _micro_batch(w, xb, yb):
    def loss_fn(w):
        pred = (xb.astype(jnp.float16) @ w.astype(jnp.float16)).astype(jnp.float32)
        return jnp.mean((pred - yb) ** 2)

    return jax.value_and_grad(loss_fn)(w)  # no loss scale


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
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))
    opt_state = tx.init(w)
    acc = jnp.zeros_like(w)
    losses = []
    for i in range(x.shape[0]):
        loss, grad = _micro_batch(w, x[i], y[i])
        losses.append(loss)
        acc = acc + grad
        if (i + 1) % accum_steps == 0:
            updates, opt_state = tx.update(acc / accum_steps, opt_state, w)
            w = optax.apply_updates(w, updates)
            acc = jnp.zeros_like(w)
    return jnp.stack(losses)
