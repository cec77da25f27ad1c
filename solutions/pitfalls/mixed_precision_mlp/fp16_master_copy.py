"""Pitfall fp16_master_copy: the params are cast to fp16 once, before training, and the fp16 copy is updated.

Everything else follows the recipe (fp16 forward pass, fp32 cross-entropy, loss scale, gradients unscaled
in fp32), but `optax.apply_updates` casts every updated param back to its own dtype, fp16: an update
smaller than half an fp16 spacing of the weight rounds away, so the weights stop moving.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


def scaled_loss(p16, scale, x16, labels):
    hidden = jax.nn.relu(x16 @ p16["w1"] + p16["b1"])
    logits = (hidden @ p16["w2"] + p16["b2"]).astype(jnp.float32)
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
    return loss * scale, loss


@jax.jit
def step(params16, opt_state, lr, scale, x16, labels):
    grads16, loss = jax.grad(scaled_loss, has_aux=True)(params16, scale, x16, labels)
    grads = jax.tree.map(lambda g: g.astype(jnp.float32) / scale, grads16)
    updates, opt_state = optax.sgd(lr).update(grads, opt_state, params16)
    return optax.apply_updates(params16, updates), opt_state, loss


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
    params = {"w1": w1, "b1": b1, "w2": w2, "b2": b2}
    params16 = jax.tree.map(lambda p: jnp.asarray(p, jnp.float32).astype(jnp.float16), params)
    opt_state = optax.sgd(lr).init(params16)
    scale = jnp.float32(loss_scale)

    losses = []
    for _ in range(num_steps):
        params16, opt_state, loss = step(params16, opt_state, lr, scale, x16, labels)
        losses.append(loss)
    return jnp.stack(losses)
