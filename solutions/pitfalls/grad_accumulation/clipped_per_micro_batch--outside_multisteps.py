"""Pitfall clipped_per_micro_batch, another form: the clip sits outside optax.MultiSteps.

optax.chain(clip_by_global_norm, MultiSteps(sgd)) clips every micro-batch gradient on its way into the
accumulator, instead of clipping the accumulated mean once per step.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax


def _optimizer(lr, momentum, max_norm, k):
    return optax.chain(
        optax.clip_by_global_norm(max_norm),
        optax.MultiSteps(optax.sgd(lr, momentum=momentum), every_k_schedule=k),
    )


@partial(jax.jit, static_argnames=("k",))
def _micro_step(params, opt_state, xb, yb, scale, lr, momentum, max_norm, *, k):
    def scaled_loss(p):
        pred = jnp.dot(xb.astype(jnp.float16), p.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean(jnp.square(pred - yb))
        return scale * loss, loss

    (_, loss), grads = jax.value_and_grad(scaled_loss, has_aux=True)(params)
    updates, opt_state = _optimizer(lr, momentum, max_norm, k).update(grads / scale, opt_state, params)
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
    opt_state = _optimizer(lr, momentum, max_norm, accum_steps).init(params)
    hyper = (f32(loss_scale), f32(lr), f32(momentum), f32(max_norm))
    losses = []
    for xb, yb in zip(np.asarray(x, np.float32), np.asarray(y, np.float32), strict=True):
        params, opt_state, loss = _micro_step(params, opt_state, xb, yb, *hyper, k=int(accum_steps))
        losses.append(loss)
    return jnp.stack(losses)
