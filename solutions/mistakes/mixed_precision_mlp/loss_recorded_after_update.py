"""Mistake: I record each step's loss by re-evaluating the model after the SGD update, so losses[k] is the loss of the updated weights."""

import jax
import jax.numpy as jnp
import numpy as np


def train_mlp(pixels, labels, w1, b1, w2, b2, lr, loss_scale, num_steps):
    params = [jnp.asarray(p, jnp.float32) for p in (w1, b1, w2, b2)]
    x16 = jnp.asarray(pixels).astype(jnp.float16)
    labels = jnp.asarray(labels)
    S = jnp.float32(loss_scale)

    def loss_fn(params):
        w1_16, b1_16, w2_16, b2_16 = [p.astype(jnp.float16) for p in params]
        hidden = jax.nn.relu(x16 @ w1_16 + b1_16)
        z = (hidden @ w2_16 + b2_16).astype(jnp.float32)
        return jnp.mean(jax.nn.logsumexp(z, axis=1) - z[jnp.arange(z.shape[0]), labels])

    grad_fn = jax.jit(jax.grad(lambda p, S: loss_fn(p) * S))
    eval_fn = jax.jit(loss_fn)
    losses = []
    for _ in range(num_steps):
        grads = grad_fn(params, S)
        params = [p - lr * (g / S) for p, g in zip(params, grads)]
        losses.append(eval_fn(params))
    return jnp.asarray(losses, jnp.float32)
