"""Mistake: I standardize each image with jnp.std(..., ddof=1), the sample standard deviation, instead of the population one."""

import functools

import jax
import jax.numpy as jnp
import optax


@functools.partial(jax.jit, static_argnames="decay_steps")
def train_step(state, lr, loss_scale, x16, labels, decay_steps):
    c = {k: (v.astype(jnp.float16) if jnp.issubdtype(v.dtype, jnp.floating) else v) for k, v in state.items()}
    lr_t = lr / jnp.sqrt(1.0 + c["step"] / decay_steps)

    def f(w16, b16):
        z = (x16 @ w16 + b16).astype(jnp.float32)
        loss = optax.softmax_cross_entropy_with_integer_labels(z, labels).mean()
        return loss * loss_scale, loss

    (gw, gb), loss = jax.grad(f, argnums=(0, 1), has_aux=True)(c["w"], c["b"])
    gw = gw.astype(jnp.float32) / loss_scale
    gb = gb.astype(jnp.float32) / loss_scale
    return {"w": state["w"] - lr_t * gw, "b": state["b"] - lr_t * gb, "step": state["step"] + 1}, loss


def train_fp16(pixels, labels, w, b, step, lr, decay_steps, loss_scale, num_steps):
    p = jnp.asarray(pixels, jnp.float32)
    x = (p - p.mean(axis=1, keepdims=True)) / p.std(axis=1, ddof=1, keepdims=True)
    x16 = x.astype(jnp.float16)
    labels = jnp.asarray(labels, jnp.int32)
    state = {"w": jnp.asarray(w, jnp.float32), "b": jnp.asarray(b, jnp.float32), "step": jnp.int32(step)}

    losses = []
    for _ in range(num_steps):
        state, loss = train_step(state, lr, loss_scale, x16, labels, decay_steps)
        losses.append(loss)
    moved = jnp.sqrt(jnp.sum((state["w"] - w) ** 2) + jnp.sum((state["b"] - b) ** 2))
    return jnp.concatenate([jnp.stack(losses), moved[None]]).astype(jnp.float32)
