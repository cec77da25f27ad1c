"""Pitfall fp16_master_weights: the weights are cast to fp16 once, before training, and kept in fp16.

The gradient is taken with respect to the fp16 weights and accumulated, unscaled, clipped and turned into an
update in fp32 as the recipe says, but optax.apply_updates casts every new weight back to the fp16 dtype of
the parameters: an update smaller than half the fp16 spacing of a weight is rounded away.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


@jax.jit
def _micro_batch(w16, xb, yb, scale):
    def scaled_loss(w16):
        pred = (xb.astype(jnp.float16) @ w16).astype(jnp.float32)
        loss = jnp.mean((pred - yb) ** 2)
        return loss * scale, loss

    (_, loss), grad16 = jax.value_and_grad(scaled_loss, has_aux=True)(w16)
    return loss, grad16.astype(jnp.float32)


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
    params = jnp.asarray(w, jnp.float32).astype(jnp.float16)  # the only copy of the weights, in fp16
    scale = jnp.float32(loss_scale)
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))
    opt_state = tx.init(params)  # zeros; the buffer becomes fp32 with the first fp32 gradient
    acc = jnp.zeros(params.shape, jnp.float32)
    losses = []
    for i in range(x.shape[0]):
        loss, grad = _micro_batch(params, x[i], y[i], scale)
        losses.append(loss)
        acc = acc + grad
        if (i + 1) % accum_steps == 0:
            updates, opt_state = tx.update(acc / (accum_steps * scale), opt_state)
            params = optax.apply_updates(params, updates)  # fp16 + fp32 update, cast back to fp16
            acc = jnp.zeros_like(acc)
    return jnp.stack(losses)
