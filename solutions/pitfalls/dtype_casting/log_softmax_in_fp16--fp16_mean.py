"""Pitfall (form fp16_mean): jax.nn.log_softmax is applied to the fp16 logits and the batch mean is
taken in fp16 too; only the mean is cast to fp32.

As in the main form, a per-example loss near 1e-3 is rounded on fp16's grid just above 1. Taking the
mean in fp16 also puts an fp16 value between the scaled loss and the weights: with loss_scale 2^16 (more
than fp16's largest value, 65504) the cotangent of the mean is inf in fp16, and the gradients are NaN.
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
        logp = jax.nn.log_softmax(x @ params["w"] + params["b"], axis=1)  # fp16
        picked = jnp.take_along_axis(logp, labels[:, None], axis=1)[:, 0]
        loss = -jnp.mean(picked).astype(jnp.float32)
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
