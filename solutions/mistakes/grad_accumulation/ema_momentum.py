"""Mistake: I kept the momentum buffer as an exponential moving average, m = momentum * m + (1 - momentum) * g."""

import jax
import jax.numpy as jnp
import numpy as np


def scaled_loss(w, xb, yb, S):
    pred = (xb.astype(jnp.float16) @ w.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - yb) ** 2)
    return loss * S, loss


grad_fn = jax.jit(jax.value_and_grad(scaled_loss, has_aux=True))


def train_with_grad_accumulation(x, y, w, lr, momentum, loss_scale, max_norm, accum_steps):
    S = jnp.float32(loss_scale)
    w = jnp.asarray(w, jnp.float32)
    m = jnp.zeros_like(w)
    acc = jnp.zeros_like(w)

    losses = []
    for i in range(x.shape[0]):
        (_, loss), grad = grad_fn(w, x[i], y[i], S)
        losses.append(loss)
        acc = acc + grad
        if (i + 1) % accum_steps == 0:
            g = acc / (accum_steps * S)
            n = jnp.sqrt(jnp.sum(g**2))
            g = jnp.where(n < max_norm, g, g / n * max_norm)
            m = momentum * m + (1 - momentum) * g
            w = w - lr * m
            acc = jnp.zeros_like(w)
    return jnp.array(losses, dtype=jnp.float32)
