"""Pitfall: the weights are cast to fp16 once and kept in fp16 between steps.

optax.apply_updates returns parameters in their own dtype, so every update is rounded to fp16.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax


def scaled_loss(p16, x16, y32, scale):
    pred = (x16 @ p16).astype(jnp.float32)
    loss = jnp.mean((pred - y32) ** 2)
    return loss * scale, loss


grad_fn = jax.jit(jax.grad(scaled_loss, has_aux=True))


def train_with_loss_scaling(x, y, w, lr, loss_scale, max_norm, num_steps):
    x16 = jnp.asarray(x, jnp.float32).astype(jnp.float16)
    y32 = jnp.asarray(y, jnp.float32)
    params = jnp.asarray(w, jnp.float32).astype(jnp.float16)
    scale = jnp.float32(loss_scale)
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr))
    opt_state = tx.init(params)

    losses = []
    for _ in range(int(num_steps)):
        grad16, loss = grad_fn(params, x16, y32, scale)
        grad = grad16.astype(jnp.float32) / scale
        updates, opt_state = tx.update(grad, opt_state, params)
        params = optax.apply_updates(params, updates)
        losses.append(loss)
    return jnp.stack(losses)
