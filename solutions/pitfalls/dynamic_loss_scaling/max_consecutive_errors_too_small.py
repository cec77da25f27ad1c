"""Pitfall max_consecutive_errors_too_small: optax.apply_if_finite with max_consecutive_errors=5.

apply_if_finite skips at most max_consecutive_errors non-finite updates in a row and applies the next one:
in a run of overflows the 6th overflowing step is applied, and its inf/NaN gradients turn the momentum
buffer and the weights into NaN. Everything else follows the recipe; the scale logic reads the wrapper's
own finiteness flag.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


def _optimizer(lr, momentum):
    return optax.apply_if_finite(optax.sgd(lr, momentum=momentum), max_consecutive_errors=5)


@jax.jit
def _step(w, opt_state, x16, y, scale, lr, momentum):
    def scaled_loss(w):
        pred = (x16 @ w.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - y) ** 2)
        return loss * scale, loss

    (_, loss), grads = jax.value_and_grad(scaled_loss, has_aux=True)(w)
    updates, opt_state = _optimizer(lr, momentum).update(grads / scale, opt_state, w)
    return optax.apply_updates(w, updates), opt_state, loss


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
    opt_state = _optimizer(lr, momentum).init(w)
    lr, momentum = jnp.float32(lr), jnp.float32(momentum)
    scale, counter = float(init_scale), 0
    losses, scales = [], []
    for _ in range(num_steps):
        scales.append(scale)
        w, opt_state, loss = _step(w, opt_state, x16, y, jnp.float32(scale), lr, momentum)
        losses.append(loss)
        if bool(opt_state.last_finite):
            counter += 1
            if counter == period:
                grown = scale * factor
                scale = grown if np.isfinite(grown) else scale
                counter = 0
        else:
            scale, counter = max(min_scale, scale / factor), 0
    return jnp.concatenate([jnp.stack(losses), jnp.asarray(scales, jnp.float32)])
