"""Pitfall accumulated_in_fp16, another form: optax.MultiSteps summing the scaled gradients of losses divided
by K in fp16.

Each micro-batch loss is divided by K before scaling (loss / K * S), and its scaled fp32 gradient goes to
optax.MultiSteps(..., use_grad_mean=False, accumulator_dtype=jnp.float16): a sum, since the loss already holds
the division by K, stored in fp16 between micro-batches (the unscaling, optax.scale(1 / S), comes first in the
wrapped chain, before the clip). The sum never overflows, but every partial sum is rounded to fp16.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax


def _optimizer(lr, momentum, max_norm, scale, k):
    inner = optax.chain(
        optax.scale(1.0 / scale), optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum)
    )
    return optax.MultiSteps(inner, every_k_schedule=k, use_grad_mean=False, accumulator_dtype=jnp.float16)


@partial(jax.jit, static_argnames=("k",))
def _micro_step(params, opt_state, xb, yb, scale, lr, momentum, max_norm, *, k):
    def scaled_loss(p):
        pred = jnp.dot(xb.astype(jnp.float16), p.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean(jnp.square(pred - yb))
        return loss / k * scale, loss

    (_, loss), grads = jax.value_and_grad(scaled_loss, has_aux=True)(params)
    updates, opt_state = _optimizer(lr, momentum, max_norm, scale, k).update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


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
    params = jnp.asarray(w, f32)
    opt_state = _optimizer(lr, momentum, max_norm, f32(loss_scale), accum_steps).init(params)
    hyper = (f32(loss_scale), f32(lr), f32(momentum), f32(max_norm))
    losses = []
    for xb, yb in zip(np.asarray(x, np.float32), np.asarray(y, np.float32), strict=True):
        params, opt_state, loss = _micro_step(params, opt_state, xb, yb, *hyper, k=int(accum_steps))
        losses.append(loss)
    return jnp.stack(losses)
