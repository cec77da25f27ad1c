"""Accepted form (not graded): optax.apply_if_finite does the skip, with max_consecutive_errors =
num_steps - 1 instead of num_steps. The wrapper gives up only on the num_steps-th overflow in a row, which
is the last step of a run where every step overflows: its update is applied after its loss is recorded,
and the scale logic still sees the step as an overflow, so every output is the recipe's."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax


def _optimizer(lr, momentum, max_errors):
    return optax.apply_if_finite(optax.sgd(lr, momentum=momentum), max_consecutive_errors=max_errors)


@partial(jax.jit, static_argnames=("max_errors",))
def _step(w, state, x16, y, hyper, *, max_errors):
    opt_state, scale, finite_run = state
    lr, momentum, period, factor, min_scale = hyper

    def scaled_loss(w):
        pred = jnp.dot(x16, w.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean(jnp.square(pred - y))
        return scale * loss, loss

    (_, loss), grads = jax.value_and_grad(scaled_loss, has_aux=True)(w)
    updates, opt_state = _optimizer(lr, momentum, max_errors).update(grads / scale, opt_state, w)
    w = optax.apply_updates(w, updates)  # zero updates on a skipped step: w + 0 is w

    finite = opt_state.last_finite
    finite_run = jnp.where(finite, finite_run + 1, 0)
    grown = jnp.where(jnp.isfinite(scale * factor), scale * factor, scale)
    scale = jnp.where(
        finite, jnp.where(finite_run == period, grown, scale), jnp.maximum(min_scale, scale / factor)
    )
    finite_run = jnp.where(finite_run == period, 0, finite_run)
    return w, (opt_state, scale, finite_run), loss


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
    f32 = jnp.float32
    x16 = jnp.asarray(x, f32).astype(jnp.float16)
    y = jnp.asarray(y, f32)
    w = jnp.asarray(w, f32)
    state = (_optimizer(lr, momentum, num_steps - 1).init(w), f32(init_scale), jnp.int32(0))
    hyper = (f32(lr), f32(momentum), jnp.int32(period), f32(factor), f32(min_scale))
    losses, scales = [], []
    for _ in range(num_steps):
        scales.append(state[1])
        w, state, loss = _step(w, state, x16, y, hyper, max_errors=int(num_steps) - 1)
        losses.append(loss)
    return jnp.concatenate([jnp.stack(losses), jnp.stack(scales)])
