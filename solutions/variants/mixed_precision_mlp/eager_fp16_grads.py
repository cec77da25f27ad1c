"""Correct variant: eager loop (no jit), gradients taken with respect to the fp16 working copy and cast
back, jax.nn.log_softmax for the loss, a hand-written update with jax.tree_util."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


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
    x16 = jnp.asarray(pixels).astype(jnp.float16)
    labels = jnp.asarray(labels)
    master = [jnp.asarray(p, jnp.float32) for p in (w1, b1, w2, b2)]
    scale = jnp.float32(loss_scale)

    def loss_of_fp16_params(p16):
        a1 = jnp.matmul(x16, p16[0]) + p16[1]
        hidden = jax.nn.relu(a1)
        logits = (jnp.matmul(hidden, p16[2]) + p16[3]).astype(jnp.float32)
        log_probs = jax.nn.log_softmax(logits, axis=-1)
        loss = -jnp.mean(jnp.take_along_axis(log_probs, labels[:, None], axis=-1))
        return scale * loss, loss

    losses = []
    for _ in range(int(num_steps)):
        working = jax.tree_util.tree_map(lambda p: p.astype(jnp.float16), master)
        grads16, loss = jax.grad(loss_of_fp16_params, has_aux=True)(working)
        grads = jax.tree_util.tree_map(lambda g: g.astype(jnp.float32) / scale, grads16)
        master = jax.tree_util.tree_map(lambda p, g: p - jnp.float32(lr) * g, master, grads)
        losses.append(loss)
    return jnp.asarray(losses, dtype=jnp.float32)
