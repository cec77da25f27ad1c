"""Mistake: I record the value returned by the differentiated function, which is the loss already multiplied by the loss scale."""

import jax
import jax.numpy as jnp
import numpy as np


def scaled_loss(params, S, x16, labels):
    w1_16, b1_16, w2_16, b2_16 = [p.astype(jnp.float16) for p in params]
    hidden = jax.nn.relu(x16 @ w1_16 + b1_16)
    z = (hidden @ w2_16 + b2_16).astype(jnp.float32)
    loss = jnp.mean(jax.nn.logsumexp(z, axis=1) - z[jnp.arange(z.shape[0]), labels])
    return loss * S


value_and_grad = jax.jit(jax.value_and_grad(scaled_loss))


def train_mlp(pixels, labels, w1, b1, w2, b2, lr, loss_scale, num_steps):
    params = [jnp.asarray(p, jnp.float32) for p in (w1, b1, w2, b2)]
    x16 = jnp.asarray(pixels, jnp.float16)
    labels = jnp.asarray(labels)
    S = jnp.float32(loss_scale)

    losses = []
    for _ in range(num_steps):
        value, grads = value_and_grad(params, S, x16, labels)
        params = [p - lr * (g / S) for p, g in zip(params, grads)]
        losses.append(value)
    return jnp.asarray(losses, jnp.float32)
