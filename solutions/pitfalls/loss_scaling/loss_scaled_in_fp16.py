"""Pitfall: the fp32 loss is cast to fp16 before it is multiplied by loss_scale.

The Python float loss_scale then becomes an fp16 value too, and 2^16 or more is inf in fp16.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def scaled_loss(w32, x16, y32, loss_scale):
    pred = (x16 @ w32.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - y32) ** 2)
    return loss.astype(jnp.float16) * loss_scale, loss


value_and_grad_fn = jax.jit(jax.value_and_grad(scaled_loss, has_aux=True), static_argnames="loss_scale")


def train_with_loss_scaling(x, y, w, lr, loss_scale, max_norm, num_steps):
    x16 = jnp.asarray(x, jnp.float32).astype(jnp.float16)
    y32 = jnp.asarray(y, jnp.float32)
    master = jnp.asarray(w, jnp.float32)

    losses = []
    for _ in range(int(num_steps)):
        (_, loss), grad = value_and_grad_fn(master, x16, y32, loss_scale=loss_scale)
        grad = grad.astype(jnp.float32) / jnp.float32(loss_scale)
        norm = jnp.sqrt(jnp.sum(grad * grad))
        grad = jnp.where(norm < max_norm, grad, grad / norm * max_norm)
        master = master - lr * grad
        losses.append(loss)
    return jnp.stack(losses)
