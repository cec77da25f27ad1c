"""Pitfall computed_in_fp32, another form: w is cast to fp16 but x is left in fp32, so the product is fp32.

x @ w16 with an fp32 x promotes w16 back to fp32: the product uses the fp16-rounded weights, but its result
is never rounded to fp16.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


@jax.jit
def _micro_batch(w, xb, yb, scale):
    def scaled_loss(w):
        pred = xb @ w.astype(jnp.float16)  # float32 @ float16 is promoted to float32
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
    losses = []
    for i in range(x.shape[0]):
        loss, grad = _micro_batch(w, x[i], y[i], scale)
        losses.append(loss)
        acc = acc + grad
        if (i + 1) % accum_steps == 0:
            updates, opt_state = tx.update(acc / (accum_steps * scale), opt_state, w)
            w = optax.apply_updates(w, updates)
            acc = jnp.zeros_like(w)
    return jnp.stack(losses)
