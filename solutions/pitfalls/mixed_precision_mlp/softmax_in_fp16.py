"""Pitfall softmax_in_fp16: the softmax is written out by hand on the fp16 logits.

exp(logits16) / sum(exp(logits16)) runs in fp16; only the picked probability is cast to fp32 before the
log. fp16 exp overflows to inf above about 11.09, inf / inf is NaN, and NaN spreads to every later step.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def scaled_loss(params, scale, x16, labels):
    p16 = jax.tree.map(lambda a: a.astype(jnp.float16), params)
    hidden = jax.nn.relu(x16 @ p16["w1"] + p16["b1"])
    logits16 = hidden @ p16["w2"] + p16["b2"]
    e = jnp.exp(logits16)
    probs = e / jnp.sum(e, axis=1, keepdims=True)
    picked = jnp.take_along_axis(probs, labels[:, None], axis=1)[:, 0].astype(jnp.float32)
    loss = -jnp.mean(jnp.log(picked))
    return loss * scale, loss


@jax.jit
def step(params, lr, scale, x16, labels):
    grads, loss = jax.grad(scaled_loss, has_aux=True)(params, scale, x16, labels)
    return jax.tree.map(lambda p, g: p - lr * (g / scale), params, grads), loss


def train_mlp(
    pixels: np.ndarray,
    labels: np.ndarray,
    w1: np.ndarray,
    b1: np.ndarray,
    w2: np.ndarray,
    b2: np.ndarray,
    lr: float,
    loss_scale: float,
    num_steps: int,
) -> jax.Array:
    """Same signature as the reference; returns float32 (num_steps,)."""
    x16 = jnp.asarray(pixels, jnp.float32).astype(jnp.float16)
    labels = jnp.asarray(labels, jnp.int32)
    params = {k: jnp.asarray(v, jnp.float32) for k, v in {"w1": w1, "b1": b1, "w2": w2, "b2": b2}.items()}
    scale = jnp.float32(loss_scale)

    losses = []
    for _ in range(num_steps):
        params, loss = step(params, lr, scale, x16, labels)
        losses.append(loss)
    return jnp.stack(losses)
