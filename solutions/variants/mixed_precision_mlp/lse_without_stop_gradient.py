"""Accepted form (not graded): the log-sum-exp written out as m + log(sum(exp(z - m))) with the max m not held
constant (no jax.lax.stop_gradient), so the gradient also flows through m; everything else as the recipe."""

import jax
import jax.numpy as jnp


def train_mlp(pixels, labels, w1, b1, w2, b2, lr, loss_scale, num_steps):
    params = [jnp.asarray(p, jnp.float32) for p in (w1, b1, w2, b2)]
    x16 = jnp.asarray(pixels, jnp.float16)
    labels = jnp.asarray(labels)
    S = jnp.float32(loss_scale)

    def scaled_loss(params):
        w1_16, b1_16, w2_16, b2_16 = [p.astype(jnp.float16) for p in params]
        hidden = jax.nn.relu(x16 @ w1_16 + b1_16)
        z = (hidden @ w2_16 + b2_16).astype(jnp.float32)
        m = jnp.max(z, axis=1)
        lse = m + jnp.log(jnp.sum(jnp.exp(z - m[:, None]), axis=1))
        loss = jnp.mean(lse - z[jnp.arange(z.shape[0]), labels])
        return loss * S, loss

    grad_fn = jax.jit(jax.grad(scaled_loss, has_aux=True))
    losses = []
    for _ in range(num_steps):
        grads, loss = grad_fn(params)
        params = [p - lr * (g / S) for p, g in zip(params, grads, strict=True)]
        losses.append(loss)
    return jnp.asarray(losses, jnp.float32)
