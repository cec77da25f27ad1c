"""Variant: gradients w.r.t. fp16 copies of the weights (the PyTorch/Flux flow), unscaled after the
cast to fp32, a hand-written clip as a multiplier, and a numpy-side loss history."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def train_with_loss_scaling(x, y, w, lr, loss_scale, max_norm, num_steps):
    xh = jnp.asarray(x, jnp.float16)
    y32 = jnp.asarray(y, jnp.float32)
    master = jnp.asarray(w, jnp.float32)

    def scaled_mse(w_half):
        residual = jnp.matmul(xh, w_half).astype(jnp.float32) - y32
        mse = jnp.sum(residual * residual) / residual.shape[0]
        return jnp.float32(loss_scale) * mse, mse

    step_grad = jax.grad(scaled_mse, has_aux=True)
    out = np.zeros(int(num_steps), np.float32)
    for k in range(int(num_steps)):
        g_half, mse = step_grad(master.astype(jnp.float16))
        g = g_half.astype(jnp.float32) / jnp.float32(loss_scale)
        gnorm = jnp.linalg.norm(g)
        g = g * jnp.minimum(1.0, max_norm / gnorm)
        master = master - lr * g
        out[k] = mse
    return out
