"""Correct variant: standardize by multiplying with rsqrt(var), optax.softmax_cross_entropy against one-hot
labels in fp32, value_and_grad, and the loss read back from the scaled value."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax


def train_fp16(pixels, labels, w, b, step, lr, decay_steps, loss_scale, num_steps):
    f16, f32 = jnp.float16, jnp.float32
    pix = jnp.asarray(pixels, f32)
    mu = jnp.mean(pix, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(pix - mu), axis=-1, keepdims=True)
    x16 = ((pix - mu) * jax.lax.rsqrt(var)).astype(f16)
    targets = jax.nn.one_hot(labels, w.shape[1], dtype=f32)

    master = (jnp.asarray(w, f32), jnp.asarray(b, f32))
    counter = jnp.int32(step)

    def scaled(wb16):
        w16, b16 = wb16
        logits = jnp.matmul(x16, w16) + b16
        return optax.softmax_cross_entropy(logits.astype(f32), targets).mean() * loss_scale

    out = []
    for _ in range(num_steps):
        wb16 = tuple(p.astype(f16) for p in master)
        value, g16 = jax.value_and_grad(scaled)(wb16)
        lr_now = lr / jnp.sqrt(1.0 + counter / decay_steps)
        master = tuple(p - lr_now * (g.astype(f32) / loss_scale) for p, g in zip(master, g16, strict=True))
        counter = counter + 1
        out.append(value / loss_scale)

    change = jnp.concatenate([(master[0] - w).reshape(-1), (master[1] - b).reshape(-1)])
    out.append(jnp.sqrt(jnp.vdot(change, change)))
    return jnp.stack(out).astype(f32)
