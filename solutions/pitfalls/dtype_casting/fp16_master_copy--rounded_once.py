"""Pitfall fp16_master_copy, another form: the master copy is rounded to fp16 once, before training.

The params are cast to fp16 and straight back to fp32 ("half the model", then fp32 for the optimizer),
so every later update is applied in fp32 as it should be, but the bits of w and b below fp16 resolution
are gone from the start, and the change the grader measures includes that rounding.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax


def train_fp16(pixels, labels, w, b, step, lr, decay_steps, loss_scale, num_steps):
    p = jnp.asarray(pixels, jnp.float32)
    mean = jnp.sum(p, axis=1, keepdims=True) / p.shape[1]
    var = jnp.sum((p - mean) ** 2, axis=1, keepdims=True) / p.shape[1]
    x = ((p - mean) / jnp.sqrt(var)).astype(jnp.float16)
    labels = jnp.asarray(labels, jnp.int32)

    # "half the model" up front, then back to fp32 for the optimizer: the fp32 master starts rounded
    params = {
        name: jnp.asarray(a).astype(jnp.float16).astype(jnp.float32) for name, a in (("w", w), ("b", b))
    }
    count = jnp.asarray(step, jnp.int32)

    def loss_fn(params):
        z = (x @ params["w"].astype(jnp.float16) + params["b"].astype(jnp.float16)).astype(jnp.float32)
        m = jax.lax.stop_gradient(z.max(axis=1))
        lse = m + jnp.log(jnp.exp(z - m[:, None]).sum(axis=1))
        loss = jnp.mean(lse - jnp.take_along_axis(z, labels[:, None], axis=1)[:, 0])
        return loss * loss_scale, loss

    losses = []
    for _ in range(int(num_steps)):
        lr_t = lr / jnp.sqrt(1.0 + count / decay_steps)
        grads, loss = jax.grad(loss_fn, has_aux=True)(params)
        grads = jax.tree.map(lambda g: g.astype(jnp.float32) / loss_scale, grads)
        updates = {name: -lr_t * g for name, g in grads.items()}
        params = optax.apply_updates(params, updates)
        count = count + 1
        losses.append(loss)

    dw = params["w"].astype(jnp.float32) - jnp.asarray(w, jnp.float32)
    db = params["b"].astype(jnp.float32) - jnp.asarray(b, jnp.float32)
    moved = jnp.sqrt(jnp.sum(dw**2) + jnp.sum(db**2))
    return jnp.concatenate([jnp.stack(losses), moved[None]]).astype(jnp.float32)
