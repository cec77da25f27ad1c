"""Pitfall no_loss_scaling, another form: each micro-batch loss is divided by K, as PyTorch recipes do, but
never multiplied by S.

The fp16 backward pass then carries values K * S times smaller than the recipe's (the cotangent of every row
is 2 (pred - y) / (B * K)); the K gradients are summed and used as they are.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


def loss_over_k(p, xb, yb, k):
    pred = jnp.dot(xb, p.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean(jnp.square(pred - yb))
    return loss / k, loss  # no loss scale


grad_fn = jax.jit(jax.grad(loss_over_k, has_aux=True), static_argnames="k")


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
    k = int(accum_steps)
    params = jnp.asarray(w, jnp.float32)
    x16 = jnp.asarray(x).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)

    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))
    opt_state = tx.init(params)
    total = jnp.zeros_like(params)
    losses = []
    for i in range(x16.shape[0]):
        grad, loss = grad_fn(params, x16[i], y[i], k=k)
        losses.append(loss)
        total = total + grad
        if (i + 1) % k == 0:
            updates, opt_state = tx.update(total, opt_state, params)
            params = optax.apply_updates(params, updates)
            total = jnp.zeros_like(params)
    return jnp.stack(losses)
