"""Mistake: I compute the log-sum-exp in float32 as log(sum(exp(z))) without subtracting the row maximum first."""

import jax
import jax.numpy as jnp
import optax

f16, f32 = jnp.float16, jnp.float32


def train_fp16(pixels, labels, w, b, step, lr, decay_steps, loss_scale, num_steps):
    p = jnp.asarray(pixels, f32)
    D = p.shape[1]
    mean = jnp.sum(p, axis=1, keepdims=True) / D
    var = jnp.sum((p - mean) ** 2, axis=1, keepdims=True) / D
    x16 = ((p - mean) / jnp.sqrt(var)).astype(f16)
    labels = jnp.asarray(labels, jnp.int32)
    state = {"w": jnp.asarray(w, f32), "b": jnp.asarray(b, f32), "step": jnp.asarray(step, jnp.int32)}

    def cast_compute(tree):
        return jax.tree.map(lambda a: a.astype(f16) if jnp.issubdtype(a.dtype, jnp.floating) else a, tree)

    def scaled_loss(p16):
        logits16 = x16 @ p16["w"] + p16["b"]
        z = logits16.astype(f32)
        lse = jnp.log(jnp.sum(jnp.exp(z), axis=1))
        true = jnp.take_along_axis(z, labels[:, None], axis=1)[:, 0]
        loss = jnp.mean(lse - true)
        return loss * loss_scale, loss

    losses = []
    for _ in range(num_steps):
        c = cast_compute(state)
        lr_t = lr / jnp.sqrt(1.0 + c["step"] / decay_steps)
        g16, loss = jax.grad(scaled_loss, has_aux=True)({"w": c["w"], "b": c["b"]})
        g = jax.tree.map(lambda t: t.astype(f32) / loss_scale, g16)
        state = {"w": state["w"] - lr_t * g["w"], "b": state["b"] - lr_t * g["b"], "step": state["step"] + 1}
        losses.append(loss)
    moved = jnp.sqrt(
        jnp.sum((state["w"] - jnp.asarray(w, f32)) ** 2) + jnp.sum((state["b"] - jnp.asarray(b, f32)) ** 2)
    )
    return jnp.concatenate([jnp.stack(losses), moved[None]]).astype(f32)
