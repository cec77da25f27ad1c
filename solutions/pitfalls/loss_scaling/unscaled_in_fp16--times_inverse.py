"""Pitfall (another form of unscaled_in_fp16): the fp16 gradients are multiplied by 1 / loss_scale in fp16.

1 / S (2^-16 to 2^-18) is a Python float, so it becomes an fp16 subnormal and the product stays in
fp16: the unscaled gradient has to fit fp16 again before the cast to fp32.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def scaled_loss(w16, x16, y32, loss_scale):
    pred = (x16 @ w16).astype(jnp.float32)
    loss = jnp.mean((pred - y32) ** 2)
    return loss * jnp.float32(loss_scale), loss


grad_fn = jax.jit(jax.grad(scaled_loss, has_aux=True), static_argnames="loss_scale")


def train_with_loss_scaling(x, y, w, lr, loss_scale, max_norm, num_steps):
    x16 = jnp.asarray(x, jnp.float32).astype(jnp.float16)
    y32 = jnp.asarray(y, jnp.float32)
    master = jnp.asarray(w, jnp.float32)

    losses = []
    for _ in range(int(num_steps)):
        grad16, loss = grad_fn(master.astype(jnp.float16), x16, y32, loss_scale=loss_scale)
        grad = (grad16 * (1 / loss_scale)).astype(jnp.float32)
        norm = jnp.sqrt(jnp.sum(grad * grad))
        grad = jnp.where(norm < max_norm, grad, grad / norm * max_norm)
        master = master - lr * grad
        losses.append(loss)
    return jnp.stack(losses)
