"""Pitfall inputs_left_fp32, another form: the bias is added in fp32.

The pixels and w are cast to fp16, but the bias is taken from the fp32 master copy: fp16 + fp32 is fp32,
so the bias add runs in fp32 and the logits are never rounded to fp16 after it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def train_fp16(pixels, labels, w, b, step, lr, decay_steps, loss_scale, num_steps):
    p = jnp.asarray(pixels, jnp.float32)
    mean = jnp.sum(p, axis=1, keepdims=True) / p.shape[1]
    var = jnp.sum((p - mean) ** 2, axis=1, keepdims=True) / p.shape[1]
    x = ((p - mean) / jnp.sqrt(var)).astype(jnp.float16)
    labels = jnp.asarray(labels, jnp.int32)

    def cast_compute(tree):
        return jax.tree.map(
            lambda a: a.astype(jnp.float16) if jnp.issubdtype(a.dtype, jnp.floating) else a, tree
        )

    def loss_fn(params):
        z = (x @ params["w"] + params["b"]).astype(jnp.float32)
        m = jax.lax.stop_gradient(z.max(axis=1))
        lse = m + jnp.log(jnp.exp(z - m[:, None]).sum(axis=1))
        loss = jnp.mean(lse - jnp.take_along_axis(z, labels[:, None], axis=1)[:, 0])
        return loss * loss_scale, loss

    state = {
        "w": jnp.asarray(w, jnp.float32),
        "b": jnp.asarray(b, jnp.float32),
        "step": jnp.asarray(step, jnp.int32),
    }
    losses = []
    for _ in range(int(num_steps)):
        c = cast_compute(state)
        lr_t = lr / jnp.sqrt(1.0 + c["step"] / decay_steps)
        grads, loss = jax.grad(loss_fn, has_aux=True)({"w": c["w"], "b": state["b"]})  # fp32 bias
        grads = jax.tree.map(lambda g: g.astype(jnp.float32) / loss_scale, grads)
        state = {
            "w": state["w"] - lr_t * grads["w"],
            "b": state["b"] - lr_t * grads["b"],
            "step": state["step"] + 1,
        }
        losses.append(loss)

    dw = state["w"] - jnp.asarray(w, jnp.float32)
    db = state["b"] - jnp.asarray(b, jnp.float32)
    moved = jnp.sqrt(jnp.sum(dw**2) + jnp.sum(db**2))
    return jnp.concatenate([jnp.stack(losses), moved[None]]).astype(jnp.float32)
