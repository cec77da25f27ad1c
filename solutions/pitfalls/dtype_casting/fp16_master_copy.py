"""Pitfall: the params are cast to fp16 once, before training, so the master copy itself is fp16.

The gradients are unscaled in fp32 as they should be, but optax.apply_updates casts each updated
param back to its own dtype (fp16), so every update smaller than half an fp16 ulp of a weight is lost.
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

    # "half the model" up front: these fp16 arrays are the only copy of the weights from now on
    params = {"w": jnp.asarray(w).astype(jnp.float16), "b": jnp.asarray(b).astype(jnp.float16)}
    count = jnp.asarray(step, jnp.int32)

    def loss_fn(params):
        z = (x @ params["w"] + params["b"]).astype(jnp.float32)
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
