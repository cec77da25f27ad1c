"""Pitfall inputs_left_fp32: the policy casts the params to fp16 but the pixels stay fp32.

x @ w1_16 promotes the fp16 weights to fp32, so the whole forward and backward pass runs in fp32 with
fp16-rounded weights: nothing is rounded to fp16 on the way, neither the pixels nor the logits.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


def scaled_loss(params, scale, x, labels):
    p16 = jax.tree.map(lambda a: a.astype(jnp.float16), params)
    hidden = jax.nn.relu(x @ p16["w1"] + p16["b1"])
    logits = (hidden @ p16["w2"] + p16["b2"]).astype(jnp.float32)
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
    return loss * scale, loss


@jax.jit
def step(params, lr, scale, x, labels):
    grads, loss = jax.grad(scaled_loss, has_aux=True)(params, scale, x, labels)
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
    x = jnp.asarray(pixels, jnp.float32)
    labels = jnp.asarray(labels, jnp.int32)
    params = {k: jnp.asarray(v, jnp.float32) for k, v in {"w1": w1, "b1": b1, "w2": w2, "b2": b2}.items()}
    scale = jnp.float32(loss_scale)

    losses = []
    for _ in range(num_steps):
        params, loss = step(params, lr, scale, x, labels)
        losses.append(loss)
    return jnp.stack(losses)
