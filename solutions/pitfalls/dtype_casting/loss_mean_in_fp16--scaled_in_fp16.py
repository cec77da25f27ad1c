"""Pitfall loss_mean_in_fp16, another form: the loss is averaged in fp32 but scaled in fp16.

The learner casts the fp32 mean loss to the compute dtype and scales it there (`loss16 * loss_scale`),
casting the product to fp32 for the gradient. The Python float scale becomes fp16: 2^16 is inf there, so
the backward pass carries inf into the fp16 loss and NaN into the gradients.
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
        scaled = (loss.astype(jnp.float16) * loss_scale).astype(jnp.float32)  # scaled in the compute dtype
        return scaled, loss

    state = {
        "w": jnp.asarray(w, jnp.float32),
        "b": jnp.asarray(b, jnp.float32),
        "step": jnp.asarray(step, jnp.int32),
    }
    losses = []
    for _ in range(int(num_steps)):
        c = cast_compute(state)
        lr_t = lr / jnp.sqrt(1.0 + c["step"] / decay_steps)
        grads, loss = jax.grad(loss_fn, has_aux=True)({"w": c["w"], "b": c["b"]})
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
