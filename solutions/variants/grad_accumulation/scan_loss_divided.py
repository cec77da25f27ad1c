"""Correct variant: the whole run in one jitted lax.scan over optimizer steps, an inner scan over the K
micro-batches; the loss is divided by K before scaling (so only S is left to divide by); clipping and
momentum written by hand."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


@partial(jax.jit, static_argnames=("k",))
def _run(x, y, w, lr, momentum, scale, max_norm, *, k):
    steps = x.shape[0] // k
    xs = x.astype(jnp.float16).reshape(steps, k, *x.shape[1:])
    ys = y.reshape(steps, k, y.shape[1])

    def loss_over_k(w, xb, yb):
        pred = jnp.einsum("bd,d->b", xb, w.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - yb) ** 2)
        return loss / k * scale, loss

    grad_fn = jax.grad(loss_over_k, has_aux=True)

    def window(carry, batch):
        w, m = carry

        def micro(acc, xy):
            g, loss = grad_fn(w, *xy)
            return acc + g, loss

        acc, losses = jax.lax.scan(micro, jnp.zeros_like(w), batch)
        g = acc / scale
        norm = jnp.sqrt(jnp.sum(g * g))
        g = jnp.where(norm < max_norm, g, g / norm * max_norm)
        m = g + momentum * m
        return (w - lr * m, m), losses

    _, losses = jax.lax.scan(window, (w, jnp.zeros_like(w)), (xs, ys))
    return losses.reshape(-1)


def train_with_grad_accumulation(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    lr: float,
    momentum: float,
    loss_scale: float,
    max_norm: float,
    accum_steps: int,
) -> jax.Array:
    """Same signature as the reference; returns float32 (M,)."""
    f32 = jnp.float32
    return _run(
        jnp.asarray(x, f32),
        jnp.asarray(y, f32),
        jnp.asarray(w, f32),
        f32(lr),
        f32(momentum),
        f32(loss_scale),
        f32(max_norm),
        k=int(accum_steps),
    )
