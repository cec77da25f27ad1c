"""Mistake: I record each step's loss by re-evaluating the model after the SGD update, so losses[k] is the loss of the updated weights."""

import jax
import jax.numpy as jnp
import numpy as np


def loss_fn(params, x16, labels):
    w1_16, b1_16, w2_16, b2_16 = [p.astype(jnp.float16) for p in params]
    hidden = jax.nn.relu(x16 @ w1_16 + b1_16)
    z = (hidden @ w2_16 + b2_16).astype(jnp.float32)
    return jnp.mean(jax.nn.logsumexp(z, axis=1) - z[jnp.arange(z.shape[0]), labels])


grad_fn = jax.jit(jax.grad(lambda p, S, x16, labels: loss_fn(p, x16, labels) * S))
eval_fn = jax.jit(loss_fn)


def train_mlp(pixels, labels, w1, b1, w2, b2, lr, loss_scale, num_steps):
    params = [jnp.asarray(p, jnp.float32) for p in (w1, b1, w2, b2)]
    x16 = jnp.asarray(pixels).astype(jnp.float16)
    labels = jnp.asarray(labels)
    S = jnp.float32(loss_scale)

    losses = []
    for _ in range(num_steps):
        grads = grad_fn(params, S, x16, labels)
        params = [p - lr * (g / S) for p, g in zip(params, grads)]
        losses.append(eval_fn(params, x16, labels))
    return jnp.asarray(losses, jnp.float32)
