"""Mistake: I standardize each pixel position over the batch (mean and variance along axis 0) instead of each image over its own pixels."""

import jax
import jax.numpy as jnp
import optax


def scaled(w16, b16, loss_scale, x16, labels):
    z = (x16 @ w16 + b16).astype(jnp.float32)
    loss = optax.softmax_cross_entropy_with_integer_labels(z, labels).mean()
    return loss * loss_scale, loss


grad = jax.jit(jax.grad(scaled, argnums=(0, 1), has_aux=True))


def train_fp16(pixels, labels, w, b, step, lr, decay_steps, loss_scale, num_steps):
    p = jnp.asarray(pixels, jnp.float32)
    mean = p.mean(axis=0)
    var = ((p - mean) ** 2).mean(axis=0)
    x16 = ((p - mean) / jnp.sqrt(var)).astype(jnp.float16)
    labels = jnp.asarray(labels, jnp.int32)
    w_m, b_m, t = jnp.asarray(w, jnp.float32), jnp.asarray(b, jnp.float32), jnp.int32(step)

    losses = []
    for _ in range(num_steps):
        lr_t = lr / jnp.sqrt(1.0 + t / decay_steps)
        (gw, gb), loss = grad(w_m.astype(jnp.float16), b_m.astype(jnp.float16), loss_scale, x16, labels)
        w_m = w_m - lr_t * (gw.astype(jnp.float32) / loss_scale)
        b_m = b_m - lr_t * (gb.astype(jnp.float32) / loss_scale)
        t = t + 1
        losses.append(loss)
    moved = jnp.sqrt(jnp.sum((w_m - w) ** 2) + jnp.sum((b_m - b) ** 2))
    return jnp.concatenate([jnp.stack(losses), moved[None]]).astype(jnp.float32)
