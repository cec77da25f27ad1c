"""Pitfall computed_in_fp32, another form: x is cast to fp16 but w is not, so the product is fp32.

x16 @ w with an fp32 w promotes x16 back to fp32: the product uses the unrounded fp32 master weights and its
result is never rounded to fp16. Since x holds fp16 values, these are the numbers of no casts at all.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


def scaled_loss(p, xb, yb, scale):
    pred = jnp.matmul(xb, p).astype(jnp.float32)  # float16 @ float32 is promoted to float32
    loss = jnp.mean(jnp.square(pred - yb))
    return scale * loss, loss


grad_fn = jax.jit(jax.grad(scaled_loss, has_aux=True))


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
    x16 = jnp.asarray(x).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    params = jnp.asarray(w, jnp.float32)
    scale = jnp.float32(loss_scale)
    k = int(accum_steps)

    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))
    opt_state = tx.init(params)
    total = jnp.zeros_like(params)
    losses = []
    for i in range(x16.shape[0]):
        grad, loss = grad_fn(params, x16[i], y[i], scale)
        losses.append(loss)
        total = total + grad
        if (i + 1) % k == 0:
            updates, opt_state = tx.update(total / k / scale, opt_state, params)
            params = optax.apply_updates(params, updates)
            total = jnp.zeros_like(params)
    return jnp.stack(losses)
