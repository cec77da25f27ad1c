"""Pitfall logits_left_fp16: the fp16 logits go into the cross-entropy without the cast to fp32.

optax's cross-entropy then runs in fp16 (log-sum-exp, per-example losses and their mean), the loss it
returns is fp16; multiplied by `S = float32(loss_scale)` as step 3.7 says, the scaled loss is fp32.
Everything else follows the recipe.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


def scaled_loss(params, scale, x16, labels):
    p16 = jax.tree.map(lambda a: a.astype(jnp.float16), params)
    hidden = jax.nn.relu(x16 @ p16["w1"] + p16["b1"])
    logits16 = hidden @ p16["w2"] + p16["b2"]
    loss = optax.softmax_cross_entropy_with_integer_labels(logits16, labels).mean()
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
    return jnp.stack(losses).astype(jnp.float32)
