"""Correct variant: flax.linen Dense layers (dtype=float16, param_dtype=float32), optax.sgd, a jitted step."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax


class MLP(nn.Module):
    hidden: int

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(self.hidden, dtype=jnp.float16, param_dtype=jnp.float32, name="hidden")(x))
        return nn.Dense(10, dtype=jnp.float16, param_dtype=jnp.float32, name="out")(x)


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
    model = MLP(hidden=w1.shape[1])
    params = {
        "hidden": {"kernel": jnp.asarray(w1), "bias": jnp.asarray(b1)},
        "out": {"kernel": jnp.asarray(w2), "bias": jnp.asarray(b2)},
    }
    x16 = jnp.asarray(pixels).astype(jnp.float16)
    labels = jnp.asarray(labels)
    tx = optax.sgd(lr)
    opt_state = tx.init(params)

    def loss_fn(params):
        logits = model.apply({"params": params}, x16).astype(jnp.float32)
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
        return loss * loss_scale, loss

    @jax.jit
    def train_step(params, opt_state):
        (_, loss), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        grads = jax.tree.map(lambda g: g / loss_scale, grads)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    losses = []
    for _ in range(num_steps):
        params, opt_state, loss = train_step(params, opt_state)
        losses.append(loss)
    return jnp.stack(losses)
