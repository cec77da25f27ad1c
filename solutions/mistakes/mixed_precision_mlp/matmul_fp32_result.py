"""Mistake: I ask both fp16 matmuls for an fp32 result (preferred_element_type=jnp.float32), as the guides do for accumulation, so the products, the hidden layer and the logits come out fp32 instead of fp16."""

import jax
import jax.numpy as jnp
import numpy as np


def scaled_loss(params, S, x16, labels):
    w1_16, b1_16, w2_16, b2_16 = [p.astype(jnp.float16) for p in params]
    hidden = jax.nn.relu(jnp.dot(x16, w1_16, preferred_element_type=jnp.float32) + b1_16)
    z = (jnp.dot(hidden, w2_16, preferred_element_type=jnp.float32) + b2_16).astype(jnp.float32)
    loss = jnp.mean(jax.nn.logsumexp(z, axis=1) - z[jnp.arange(z.shape[0]), labels])
    return loss * S, loss


grad_fn = jax.jit(jax.grad(scaled_loss, has_aux=True))


def train_mlp(pixels, labels, w1, b1, w2, b2, lr, loss_scale, num_steps):
    params = [jnp.asarray(p, jnp.float32) for p in (w1, b1, w2, b2)]
    x16 = jnp.asarray(pixels, jnp.float16)
    labels = jnp.asarray(labels)
    S = jnp.float32(loss_scale)

    losses = []
    for _ in range(num_steps):
        grads, loss = grad_fn(params, S, x16, labels)
        params = [p - lr * (g / S) for p, g in zip(params, grads)]
        losses.append(loss)
    return jnp.asarray(losses, jnp.float32)
