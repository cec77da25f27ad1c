"""Correct variant: the whole loop is a jitted lax.scan; jax.nn.logsumexp in fp32; tree_util casts."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import tree_util


def _to_compute(tree):
    def cast(leaf):
        return leaf.astype(jnp.float16) if jnp.issubdtype(leaf.dtype, jnp.floating) else leaf

    return tree_util.tree_map(cast, tree)


def train_fp16(pixels, labels, w, b, step, lr, decay_steps, loss_scale, num_steps):
    pixels = jnp.asarray(pixels, jnp.float32)
    d = pixels.shape[1]
    total = jnp.einsum("nd->n", pixels)[:, None]
    mean = total / d
    sq = jnp.einsum("nd,nd->n", pixels - mean, pixels - mean)[:, None]
    x16 = ((pixels - mean) / jnp.sqrt(sq / d)).astype(jnp.float16)
    onehot = jax.nn.one_hot(jnp.asarray(labels), jnp.shape(w)[1], dtype=jnp.float32)
    init = {
        "w": jnp.asarray(w, jnp.float32),
        "b": jnp.asarray(b, jnp.float32),
        "step": jnp.asarray(step, jnp.int32),
    }

    def loss_fn(p16):
        z = (jnp.dot(x16, p16["w"]) + p16["b"]).astype(jnp.float32)
        per_example = jax.nn.logsumexp(z, axis=1) - jnp.sum(z * onehot, axis=1)
        loss = jnp.mean(per_example)
        return loss_scale * loss, loss

    def body(state, _):
        c = _to_compute(state)
        lr_t = lr / jnp.sqrt(1.0 + c["step"] / decay_steps)
        g, loss = jax.grad(loss_fn, has_aux=True)({"w": c["w"], "b": c["b"]})
        g = tree_util.tree_map(lambda t: jnp.asarray(t, jnp.float32) / loss_scale, g)
        new = {"w": state["w"] - lr_t * g["w"], "b": state["b"] - lr_t * g["b"], "step": state["step"] + 1}
        return new, loss

    @jax.jit
    def run(state):
        return jax.lax.scan(body, state, None, length=int(num_steps))

    final, losses = run(init)
    delta = jnp.concatenate([(final["w"] - init["w"]).ravel(), (final["b"] - init["b"]).ravel()])
    return jnp.concatenate([losses, jnp.sqrt(jnp.sum(delta * delta))[None]])
