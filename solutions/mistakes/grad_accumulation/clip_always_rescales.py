"""Mistake: my clip always rescales the gradient to length max_norm, g = g / n * max_norm, even when its norm is below max_norm."""

import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def micro(w, xb, yb, S):
    def f(w):
        pred = (xb.astype(jnp.float16) @ w.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - yb) ** 2)
        return loss * S, loss

    return jax.grad(f, has_aux=True)(w)


def train_with_grad_accumulation(x, y, w, lr, momentum, loss_scale, max_norm, accum_steps):
    S = jnp.float32(loss_scale)
    w = jnp.asarray(w, jnp.float32)
    m = jnp.zeros_like(w)

    acc = jnp.zeros_like(w)
    losses = []
    for i in range(x.shape[0]):
        grad, loss = micro(w, x[i], y[i], S)
        losses.append(loss)
        acc = acc + grad
        if (i + 1) % accum_steps == 0:
            g = acc / (accum_steps * S)
            g = g / jnp.linalg.norm(g) * max_norm
            m = g + momentum * m
            w = w - lr * m
            acc = jnp.zeros_like(w)
    return jnp.stack(losses)
