"""Correct variant (accepted by the statement): the fp32 update lr * g is rounded to fp16 before it is
subtracted from the fp32 master; eager gradients with jax.value_and_grad of the fp32 masters, a list of
params and jax.tree_util.

The statement's recipe subtracts the fp32 update; rounding it to fp16 changes each update by at most 2^-11
of itself, which the grader cannot tell apart and accepts.
"""

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
    labels = jnp.asarray(labels, jnp.int32)
    master = [jnp.asarray(p, jnp.float32) for p in (w1, b1, w2, b2)]
    scale = jnp.float32(loss_scale)

    def scaled_loss(master):
        q1, c1, q2, c2 = (p.astype(jnp.float16) for p in master)
        hidden = jax.nn.relu(x16 @ q1 + c1)
        logits = (hidden @ q2 + c2).astype(jnp.float32)
        loss = optax_free_cross_entropy(logits, labels)
        return loss * scale

    grad_fn = jax.jit(jax.value_and_grad(scaled_loss))
    losses = []
    for _ in range(int(num_steps)):
        scaled, grads = grad_fn(master)
        updates = [(jnp.float32(lr) * (g / scale)).astype(jnp.float16) for g in grads]
        master = jax.tree_util.tree_map(lambda p, u: p - u.astype(jnp.float32), master, updates)
        losses.append(scaled / scale)
    return jnp.stack(losses).astype(jnp.float32)


def optax_free_cross_entropy(logits: jax.Array, labels: jax.Array) -> jax.Array:
    """Mean softmax cross-entropy in fp32 with jax.nn.logsumexp (which holds its max constant)."""
    picked = jnp.take_along_axis(logits, labels[:, None], axis=1)[:, 0]
    return jnp.mean(jax.nn.logsumexp(logits, axis=1) - picked)
