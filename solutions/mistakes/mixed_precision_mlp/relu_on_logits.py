"""Mistake: I apply the ReLU after both layers, so the logits are clipped at zero too."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        for name, features in (("hidden", 32), ("out", 10)):
            x = nn.Dense(features, dtype=jnp.float16, param_dtype=jnp.float32, name=name)(x)
            x = nn.relu(x)
        return x


model = MLP()


def scaled_loss(p, scale, x16, labels):
    logits = model.apply(p, x16).astype(jnp.float32)
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
    return loss * scale, loss


@jax.jit
def train_step(p, s, lr, scale, x16, labels):
    grads, loss = jax.grad(scaled_loss, has_aux=True)(p, scale, x16, labels)
    grads = jax.tree.map(lambda g: g / scale, grads)
    updates, s = optax.sgd(lr).update(grads, s, p)
    return optax.apply_updates(p, updates), s, loss


def train_mlp(pixels, labels, w1, b1, w2, b2, lr, loss_scale, num_steps):
    params = {
        "params": {
            "hidden": {"kernel": jnp.asarray(w1), "bias": jnp.asarray(b1)},
            "out": {"kernel": jnp.asarray(w2), "bias": jnp.asarray(b2)},
        }
    }
    x16 = jnp.asarray(pixels, jnp.float16)
    labels = jnp.asarray(labels)
    scale = jnp.float32(loss_scale)
    opt_state = optax.sgd(lr).init(params)

    losses = []
    for _ in range(num_steps):
        params, opt_state, loss = train_step(params, opt_state, lr, scale, x16, labels)
        losses.append(loss)
    return jnp.asarray(losses, dtype=jnp.float32)
