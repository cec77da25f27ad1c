"""Pitfall unscaled_in_fp16, written eagerly: the gradient with respect to the fp16 copy of the weights is
divided by the scale as a Python float, which JAX's weak typing keeps in fp16, and only then cast to fp32.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


def scaled_loss(w16, scale, x16, y):
    pred = (x16 @ w16).astype(jnp.float32)
    loss = jnp.mean((pred - y) ** 2)
    return loss * scale, loss


grad_fn = jax.jit(jax.grad(scaled_loss, has_aux=True))


def train_with_dynamic_loss_scaling(x, y, w, lr, momentum, init_scale, period, factor, min_scale, num_steps):
    """Same signature as the reference; returns float32 (2 * num_steps,)."""
    x16 = jnp.asarray(x, jnp.float32).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    w = jnp.asarray(w, jnp.float32)
    opt = optax.sgd(lr, momentum=momentum)
    opt_state = opt.init(w)

    scale, counter = float(init_scale), 0
    losses, scales = [], []
    for _ in range(num_steps):
        scales.append(scale)
        g16, loss = grad_fn(w.astype(jnp.float16), jnp.float32(scale), x16, y)
        losses.append(loss)
        g = (g16 / scale).astype(jnp.float32)  # a Python float: the division stays fp16
        if bool(jnp.all(jnp.isfinite(g))):
            updates, opt_state = opt.update(g, opt_state, w)
            w = optax.apply_updates(w, updates)
            counter += 1
            if counter == period:
                grown = scale * factor
                scale = grown if np.isfinite(np.float32(grown)) else scale
                counter = 0
        else:
            scale, counter = max(min_scale, scale / factor), 0
    return jnp.concatenate([jnp.stack(losses), jnp.asarray(scales, jnp.float32)])
