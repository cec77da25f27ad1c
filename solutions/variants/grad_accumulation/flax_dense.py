"""Correct variant: flax Dense(use_bias=False, dtype=float16) with fp32 params and a jitted gradient
function; each micro-batch's gradient is unscaled in fp32 before it is added (jax.tree.map, eager), the sum is
divided by K at the end, and optax clip_by_global_norm and sgd run as two separate transformations."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

_MODEL = nn.Dense(1, use_bias=False, dtype=jnp.float16, param_dtype=jnp.float32)


@jax.jit
def _grads(params, xb, yb, scale):
    def scaled_loss(params):
        pred = _MODEL.apply(params, xb.astype(jnp.float16))[:, 0].astype(jnp.float32)
        loss = jnp.mean((pred - yb) ** 2)
        return loss * scale, loss

    (_, loss), grads = jax.value_and_grad(scaled_loss, has_aux=True)(params)
    return loss, grads


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
    params = {"params": {"kernel": jnp.asarray(w, jnp.float32).reshape(-1, 1)}}
    clip = optax.clip_by_global_norm(max_norm)
    sgd = optax.sgd(lr, momentum=momentum)
    clip_state, sgd_state = clip.init(params), sgd.init(params)
    scale = jnp.float32(loss_scale)
    total = jax.tree.map(jnp.zeros_like, params)
    losses = []
    for i in range(len(x)):
        loss, grads = _grads(params, jnp.asarray(x[i], jnp.float32), jnp.asarray(y[i], jnp.float32), scale)
        losses.append(loss)
        total = jax.tree.map(lambda t, g: t + g.astype(jnp.float32) / scale, total, grads)
        if (i + 1) % accum_steps == 0:
            mean = jax.tree.map(lambda t: t / accum_steps, total)
            clipped, clip_state = clip.update(mean, clip_state)
            updates, sgd_state = sgd.update(clipped, sgd_state, params)
            params = optax.apply_updates(params, updates)
            total = jax.tree.map(jnp.zeros_like, params)
    return jnp.stack(losses).astype(jnp.float32)
