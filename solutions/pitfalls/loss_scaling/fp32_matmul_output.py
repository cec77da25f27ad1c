"""Pitfall: the fp16 product is asked for an fp32 result (preferred_element_type=float32).

The operands are fp16, but the prediction is never rounded to fp16.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def scaled_loss(w32, x16, y32, scale):
    pred = jnp.dot(x16, w32.astype(jnp.float16), preferred_element_type=jnp.float32)
    loss = jnp.mean((pred - y32) ** 2)
    return loss * scale, loss


grad_fn = jax.jit(jax.grad(scaled_loss, has_aux=True))


def train_with_loss_scaling(x, y, w, lr, loss_scale, max_norm, num_steps):
    x16 = jnp.asarray(x, jnp.float32).astype(jnp.float16)
    y32 = jnp.asarray(y, jnp.float32)
    master = jnp.asarray(w, jnp.float32)
    scale = jnp.float32(loss_scale)

    losses = []
    for _ in range(int(num_steps)):
        grad, loss = grad_fn(master, x16, y32, scale)
        grad = grad / scale
        norm = jnp.sqrt(jnp.sum(grad * grad))
        grad = jnp.where(norm < max_norm, grad, grad / norm * max_norm)
        master = master - lr * grad
        losses.append(loss)
    return jnp.stack(losses)
