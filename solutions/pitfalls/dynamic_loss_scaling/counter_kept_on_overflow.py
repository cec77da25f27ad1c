"""Pitfall counter_kept_on_overflow: an overflow backs off the scale but leaves the growth counter as it was.

The finite steps counted before the overflow still count towards the next growth, so where an overflow
comes with a nonzero counter the scale grows again too early.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


def _scaled_loss(w, x16, y, scale):
    pred = (x16 @ w.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - y) ** 2)
    return loss * scale, loss


@jax.jit
def _grads(w, x16, y, scale):
    """The loss of this forward pass, the unscaled fp32 gradient and whether it is finite."""
    (_, loss), g = jax.value_and_grad(_scaled_loss, has_aux=True)(w, x16, y, scale)
    g = g / scale
    return loss, g, jnp.all(jnp.isfinite(g))


@jax.jit
def _apply(w, opt_state, g, lr, momentum):
    updates, opt_state = optax.sgd(lr, momentum=momentum).update(g, opt_state, w)
    return optax.apply_updates(w, updates), opt_state


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
    x16 = jnp.asarray(x, jnp.float32).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    w = jnp.asarray(w, jnp.float32)
    opt_state = optax.sgd(lr, momentum=momentum).init(w)
    lr, momentum = jnp.float32(lr), jnp.float32(momentum)
    scale, counter = float(init_scale), 0
    losses, scales = [], []
    for _ in range(num_steps):
        loss, g, finite = _grads(w, x16, y, jnp.float32(scale))
        losses.append(loss)
        scales.append(scale)
        if finite:  # a skipped step touches neither the weights nor the momentum buffer
            w, opt_state = _apply(w, opt_state, g, lr, momentum)
        if finite:
            counter += 1
            if counter == period:
                grown = scale * factor
                scale = grown if np.isfinite(grown) else scale
                counter = 0
        else:
            scale = max(min_scale, scale / factor)  # the counter is not reset
    return jnp.concatenate([jnp.stack(losses), jnp.asarray(scales, jnp.float32)])
