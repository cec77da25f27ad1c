"""Pitfall (another form of inputs_left_fp32): nothing is cast to fp16, so the whole model runs in fp32.

The loss is still scaled and unscaled, but the prediction is never rounded to fp16.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def scaled_loss(p, x, y, loss_scale):
    loss = jnp.mean((x @ p - y) ** 2)
    return loss * loss_scale, loss


value_and_grad_fn = jax.jit(jax.value_and_grad(scaled_loss, has_aux=True), static_argnames="loss_scale")


def train_with_loss_scaling(x, y, w, lr, loss_scale, max_norm, num_steps):
    x = jnp.asarray(x, jnp.float32)
    y = jnp.asarray(y, jnp.float32)
    params = jnp.asarray(w, jnp.float32)

    losses = []
    for _ in range(int(num_steps)):
        (_, loss), grad = value_and_grad_fn(params, x, y, loss_scale=loss_scale)
        grad = grad / loss_scale
        norm = jnp.sqrt(jnp.sum(grad**2))
        grad = jnp.where(norm < max_norm, grad, grad * (max_norm / norm))
        params = params - lr * grad
        losses.append(loss)
    return jnp.stack(losses)
