"""Pitfall pure_fp16: everything in fp16 (params, inputs, logits, cross-entropy, gradients and update).

The params are cast to fp16 once and trained as fp16 arrays, the cross-entropy runs on the fp16 logits,
there is no loss scale, and the SGD update is applied to the fp16 params. Updates below half an fp16
spacing of a weight are lost and the loss itself is rounded to fp16.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


def loss_fn(params, x, labels):
    hidden = jax.nn.relu(x @ params["w1"] + params["b1"])
    logits = hidden @ params["w2"] + params["b2"]
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


@jax.jit
def step(params, opt_state, lr, x, labels):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, labels)
    updates, opt_state = optax.sgd(lr).update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


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
    x = jnp.asarray(pixels).astype(jnp.float16)
    labels = jnp.asarray(labels)
    params = {"w1": w1, "b1": b1, "w2": w2, "b2": b2}
    params = jax.tree.map(lambda p: jnp.asarray(p).astype(jnp.float16), params)
    opt_state = optax.sgd(lr).init(params)

    losses = []
    for _ in range(num_steps):
        params, opt_state, loss = step(params, opt_state, lr, x, labels)
        losses.append(loss)
    return jnp.stack(losses).astype(jnp.float32)
