"""Correct variant: one jitted training step called in a Python loop; jnp.mean / jnp.var to standardize."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def _cast_floating(tree, dtype):
    return jax.tree_util.tree_map(
        lambda a: a.astype(dtype) if jnp.issubdtype(a.dtype, jnp.floating) else a, tree
    )


@jax.jit
def _step(state, x16, labels, lr, decay_steps, loss_scale):
    c = _cast_floating(state, jnp.float16)

    def loss_fn(params):
        z = (x16 @ params["w"] + params["b"]).astype(jnp.float32)
        m = jax.lax.stop_gradient(jnp.max(z, axis=-1, keepdims=True))
        lse = m[:, 0] + jnp.log(jnp.sum(jnp.exp(z - m), axis=-1))
        loss = jnp.mean(lse - z[jnp.arange(z.shape[0]), labels])
        return loss * loss_scale, loss

    g16, loss = jax.grad(loss_fn, has_aux=True)({"w": c["w"], "b": c["b"]})
    lr_t = lr / jnp.sqrt(1.0 + c["step"].astype(jnp.float32) / decay_steps)
    new = {
        "w": state["w"] - lr_t * (g16["w"].astype(jnp.float32) / loss_scale),
        "b": state["b"] - lr_t * (g16["b"].astype(jnp.float32) / loss_scale),
        "step": state["step"] + 1,
    }
    return new, loss


def train_fp16(pixels, labels, w, b, step, lr, decay_steps, loss_scale, num_steps):
    p = jnp.asarray(pixels, jnp.float32)
    mu = jnp.mean(p, axis=1, keepdims=True)
    x16 = ((p - mu) / jnp.sqrt(jnp.var(p, axis=1, keepdims=True))).astype(jnp.float16)
    w0 = jnp.asarray(w, jnp.float32)
    b0 = jnp.asarray(b, jnp.float32)
    state = {"w": w0, "b": b0, "step": jnp.int32(step)}
    losses = []
    for _ in range(num_steps):
        state, loss = _step(
            state,
            x16,
            jnp.asarray(labels),
            jnp.float32(lr),
            jnp.float32(decay_steps),
            jnp.float32(loss_scale),
        )
        losses.append(loss)
    moved = jnp.sqrt(jnp.sum(jnp.square(state["w"] - w0)) + jnp.sum(jnp.square(state["b"] - b0)))
    return jnp.append(jnp.array(losses, jnp.float32), moved)
