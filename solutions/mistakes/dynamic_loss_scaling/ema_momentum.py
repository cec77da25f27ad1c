"""Mistake: I write the momentum by hand as an exponential moving average, m = momentum * m + (1 - momentum) * g, instead of m = g + momentum * m."""

import jax
import jax.numpy as jnp
import numpy as np


def scaled_loss(w, s, x16, y):
    pred = (x16 @ w.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - y) ** 2)
    return loss * s, loss


grad_fn = jax.jit(jax.grad(scaled_loss, has_aux=True))


def train_with_dynamic_loss_scaling(x, y, w, lr, momentum, init_scale, period, factor, min_scale, num_steps):
    x16 = jnp.asarray(x).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    w = jnp.asarray(w, jnp.float32)
    m = jnp.zeros_like(w)
    scale = jnp.float32(init_scale)
    count = 0

    losses, scales = [], []
    for _ in range(num_steps):
        scales.append(scale)
        grad, loss = grad_fn(w, scale, x16, y)
        losses.append(loss)
        g = grad / scale
        if bool(jnp.all(jnp.isfinite(g))):
            m = momentum * m + (1.0 - momentum) * g
            w = w - lr * m
            count += 1
            if count == period:
                scale = scale * jnp.float32(factor)
                count = 0
        else:
            scale = jnp.maximum(jnp.float32(min_scale), scale / jnp.float32(factor))
            count = 0
    return jnp.concatenate([jnp.stack(losses), jnp.stack(scales)]).astype(jnp.float32)
