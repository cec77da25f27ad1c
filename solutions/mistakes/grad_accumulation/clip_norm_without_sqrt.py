"""Mistake: my hand-written clip compares and divides by the sum of squares of the gradient, forgetting the square root."""

import functools

import jax
import jax.numpy as jnp
import numpy as np


@functools.partial(jax.jit, static_argnames="k")
def _run(x, y, w, lr, momentum, S, max_norm, k):
    m_batches, b, d = x.shape

    def loss_fn(w, xb, yb):
        pred = (xb.astype(jnp.float16) @ w.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - yb) ** 2)
        return loss * S, loss

    def body(carry, inp):
        w, m, acc = carry
        i, xb, yb = inp
        grad, loss = jax.grad(loss_fn, has_aux=True)(w, xb, yb)
        acc = acc + grad
        g = acc / (k * S)
        n = jnp.sum(g**2)
        g = jnp.where(n < max_norm, g, g / n * max_norm)
        new_m = g + momentum * m
        new_w = w - lr * new_m
        last = (i + 1) % k == 0
        w = jnp.where(last, new_w, w)
        m = jnp.where(last, new_m, m)
        acc = jnp.where(last, jnp.zeros_like(acc), acc)
        return (w, m, acc), loss

    init = (w, jnp.zeros_like(w), jnp.zeros_like(w))
    _, losses = jax.lax.scan(body, init, (jnp.arange(m_batches), x, y))
    return losses


def train_with_grad_accumulation(x, y, w, lr, momentum, loss_scale, max_norm, accum_steps):
    return _run(
        jnp.asarray(x, jnp.float32),
        jnp.asarray(y, jnp.float32),
        jnp.asarray(w, jnp.float32),
        jnp.float32(lr),
        jnp.float32(momentum),
        jnp.float32(loss_scale),
        jnp.float32(max_norm),
        int(accum_steps),
    )
