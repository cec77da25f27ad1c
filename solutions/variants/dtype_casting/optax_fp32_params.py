"""Correct variant: the cast sits inside the differentiated function of the fp32 params (grads come back
fp32, already equal to the fp16 grads cast up), optax's integer-label cross-entropy in fp32, and
optax.sgd with a schedule driven by optax's own int32 step count."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax


def train_fp16(pixels, labels, w, b, step, lr, decay_steps, loss_scale, num_steps):
    pix = jnp.asarray(pixels, dtype=jnp.float32)
    centered = pix - pix.sum(axis=1, keepdims=True) / pix.shape[1]
    std = jnp.sqrt((centered * centered).sum(axis=1, keepdims=True) / pix.shape[1])
    x = (centered / std).astype(jnp.float16)
    y = jnp.asarray(labels, dtype=jnp.int32)

    params = {"w": jnp.asarray(w, jnp.float32), "b": jnp.asarray(b, jnp.float32)}
    start = dict(params)

    def schedule(count):
        return lr / jnp.sqrt(1.0 + (step + count) / decay_steps)

    tx = optax.sgd(learning_rate=schedule)
    opt_state = tx.init(params)

    def loss_fn(p32):
        p16 = jax.tree.map(lambda a: a.astype(jnp.float16), p32)  # only float leaves live here
        logits = x @ p16["w"] + p16["b"]
        loss = optax.softmax_cross_entropy_with_integer_labels(logits.astype(jnp.float32), y).mean()
        return loss * loss_scale, loss

    losses = []
    for _ in range(num_steps):
        (_, loss), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        grads = jax.tree.map(lambda g: g.astype(jnp.float32) / loss_scale, grads)
        updates, opt_state = tx.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        losses.append(loss)

    sq = sum(jnp.sum((params[k] - start[k]) ** 2) for k in params)
    return jnp.concatenate([jnp.asarray(losses, jnp.float32), jnp.sqrt(sq).reshape(1)])
