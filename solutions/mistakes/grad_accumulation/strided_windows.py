"""Mistake: I reshaped the micro-batches to (K, M // K, ...) and took column t as window t, so a window holds micro-batches t, t + M/K, ... instead of K consecutive ones."""

import functools

import jax
import jax.numpy as jnp
import numpy as np


@functools.partial(jax.jit, static_argnames="k")
def _train(x, y, w, lr, momentum, S, max_norm, k):
    m_total, b, d = x.shape
    xs = x.reshape(k, m_total // k, b, d).swapaxes(0, 1)
    ys = y.reshape(k, m_total // k, b).swapaxes(0, 1)

    def loss_fn(w, xb, yb):
        pred = (xb.astype(jnp.float16) @ w.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - yb) ** 2)
        return loss * S, loss

    def window(carry, batch):
        w, m = carry
        grads, losses = jax.vmap(jax.grad(loss_fn, has_aux=True), in_axes=(None, 0, 0))(w, *batch)
        g = jnp.sum(grads, axis=0) / (k * S)
        n = jnp.sqrt(jnp.sum(g**2))
        g = jnp.where(n < max_norm, g, g / n * max_norm)
        m = g + momentum * m
        return (w - lr * m, m), losses

    _, losses = jax.lax.scan(window, (w, jnp.zeros_like(w)), (xs, ys))
    return losses.swapaxes(0, 1).reshape(m_total)


def train_with_grad_accumulation(x, y, w, lr, momentum, loss_scale, max_norm, accum_steps):
    return _train(
        jnp.asarray(x, jnp.float32),
        jnp.asarray(y, jnp.float32),
        jnp.asarray(w, jnp.float32),
        jnp.float32(lr),
        jnp.float32(momentum),
        jnp.float32(loss_scale),
        jnp.float32(max_norm),
        int(accum_steps),
    )
