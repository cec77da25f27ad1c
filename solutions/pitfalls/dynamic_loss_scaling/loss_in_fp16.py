"""Pitfall loss_in_fp16: the prediction is never cast to fp32, so the loss and the scaled loss are fp16.

The targets are cast to fp16 with the inputs and the scale is a Python float, so `loss * scale` stays fp16.
The backward pass then carries the scale itself in fp16: every scale from 65520 up overflows, whatever
the gradients are, and the scale can never pass 2**15.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


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
    x16 = jnp.asarray(x).astype(jnp.float16)
    y16 = jnp.asarray(y).astype(jnp.float16)
    w = jnp.asarray(w, jnp.float32)
    opt = optax.sgd(lr, momentum=momentum)
    opt_state = opt.init(w)
    scale, counter = float(init_scale), 0

    def scaled_loss(w, scale):
        pred = x16 @ w.astype(jnp.float16)  # left in fp16
        loss = jnp.mean((pred - y16) ** 2)  # fp16
        return loss * scale, loss

    losses, scales = [], []
    for _ in range(num_steps):
        (_, loss), g = jax.value_and_grad(scaled_loss, has_aux=True)(w, scale)
        g = g / jnp.float32(scale)
        losses.append(loss)
        scales.append(scale)
        finite = bool(jnp.all(jnp.isfinite(g)))
        if finite:  # a skipped step touches neither the weights nor the momentum buffer
            updates, opt_state = opt.update(g, opt_state, w)
            w = optax.apply_updates(w, updates)
        if finite:
            counter += 1
            if counter == period:
                scale, counter = scale * factor, 0
        else:
            scale, counter = max(min_scale, scale / factor), 0
    return jnp.concatenate([jnp.stack(losses), jnp.asarray(scales, jnp.float32)])
