"""Mistake: inside my lax.scan I skip an overflowing step by blending, new * finite + old * (1 - finite), instead of selecting with jnp.where."""

import functools

import jax
import jax.numpy as jnp
import numpy as np


def loss_fn(w, s, x16, y):
    pred = (x16 @ w.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - y) ** 2)
    return loss * s, loss


@functools.partial(jax.jit, static_argnames="num_steps")
def run(init, lr, momentum, period, factor, min_scale, x16, y, num_steps):
    def step(carry, _):
        w, m, s, c = carry
        grad, loss = jax.grad(loss_fn, has_aux=True)(w, s, x16, y)
        g = grad / s
        ok = jnp.all(jnp.isfinite(g)).astype(jnp.float32)
        m_new = g + momentum * m
        w_new = w - lr * m_new
        w = ok * w_new + (1.0 - ok) * w
        m = ok * m_new + (1.0 - ok) * m
        c = c + 1
        grow = (ok > 0) & (c == period)
        s_next = jnp.where(ok > 0, jnp.where(grow, s * factor, s), jnp.maximum(min_scale, s / factor))
        c = jnp.where((ok > 0) & ~grow, c, 0)
        return (w, m, s_next.astype(jnp.float32), c), (loss, s)

    return jax.lax.scan(step, init, None, length=num_steps)


def train_with_dynamic_loss_scaling(x, y, w, lr, momentum, init_scale, period, factor, min_scale, num_steps):
    x16 = jnp.asarray(x).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)

    init = (
        jnp.asarray(w, jnp.float32),
        jnp.zeros(np.shape(w), jnp.float32),
        jnp.float32(init_scale),
        jnp.int32(0),
    )
    _, (losses, scales) = run(init, lr, momentum, period, factor, min_scale, x16, y, num_steps)
    return jnp.concatenate([losses, scales]).astype(jnp.float32)
