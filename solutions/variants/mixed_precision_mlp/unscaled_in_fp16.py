"""Accepted form (not graded): the gradients taken with respect to the fp16 copies of the params and divided
by the loss scale in fp16 (g16 / S), then cast to fp32 for the update; everything else as the recipe."""

import jax
import jax.numpy as jnp


def train_mlp(pixels, labels, w1, b1, w2, b2, lr, loss_scale, num_steps):
    params = [jnp.asarray(p, jnp.float32) for p in (w1, b1, w2, b2)]
    x16 = jnp.asarray(pixels, jnp.float16)
    labels = jnp.asarray(labels)
    S = jnp.float32(loss_scale)

    def scaled_loss(params16):
        w1_16, b1_16, w2_16, b2_16 = params16
        hidden = jax.nn.relu(x16 @ w1_16 + b1_16)
        z = (hidden @ w2_16 + b2_16).astype(jnp.float32)
        loss = jnp.mean(jax.nn.logsumexp(z, axis=1) - z[jnp.arange(z.shape[0]), labels])
        return loss * S, loss

    grad_fn = jax.jit(jax.grad(scaled_loss, has_aux=True))
    losses = []
    for _ in range(num_steps):
        grads16, loss = grad_fn([p.astype(jnp.float16) for p in params])
        grads = [(g16 / S.astype(jnp.float16)).astype(jnp.float32) for g16 in grads16]
        params = [p - lr * g for p, g in zip(params, grads, strict=True)]
        losses.append(loss)
    return jnp.asarray(losses, jnp.float32)
