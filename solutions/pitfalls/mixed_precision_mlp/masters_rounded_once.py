"""Pitfall masters_rounded_once: the params are loaded as fp16 and fp32 masters are kept of those values.

Everything after the loading follows the recipe (a fresh fp16 copy at every step, fp32 cross-entropy, loss
scale, gradients unscaled and applied in fp32), but the masters start from `w.astype(float16)` cast back to
float32 instead of the given fp32 `w`: the bits of every initial param below fp16 resolution are gone, so
an fp16 copy changes at the step where the rounded master, not the given one, crosses a rounding midpoint.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


def scaled_loss(master, scale, x16, labels):
    p16 = jax.tree.map(lambda p: p.astype(jnp.float16), master)
    hidden = jax.nn.relu(x16 @ p16["w1"] + p16["b1"])
    logits = (hidden @ p16["w2"] + p16["b2"]).astype(jnp.float32)
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
    return loss * scale, loss


@jax.jit
def step(master, opt_state, lr, scale, x16, labels):
    grads, loss = jax.grad(scaled_loss, has_aux=True)(master, scale, x16, labels)
    grads = jax.tree.map(lambda g: g / scale, grads)
    updates, opt_state = optax.sgd(lr).update(grads, opt_state, master)
    return optax.apply_updates(master, updates), opt_state, loss


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
    # the model "loaded in half precision", then fp32 masters made of it for the optimizer
    params16 = {"w1": w1, "b1": b1, "w2": w2, "b2": b2}
    params16 = jax.tree.map(lambda p: jnp.asarray(p, jnp.float32).astype(jnp.float16), params16)
    master = jax.tree.map(lambda p: p.astype(jnp.float32), params16)
    opt_state = optax.sgd(lr).init(master)
    scale = jnp.float32(loss_scale)

    losses = []
    for _ in range(int(num_steps)):
        master, opt_state, loss = step(master, opt_state, lr, scale, x16, labels)
        losses.append(loss)
    return jnp.stack(losses)
