"""Mistake: I multiply the loss by the loss scale but forget to divide the gradients by it again, so the updates are loss_scale times too large."""

import functools

import jax
import jax.numpy as jnp
import optax


@functools.partial(jax.jit, static_argnames=("decay_steps", "num_steps"))
def run(pixels, labels, w, b, step, lr, loss_scale, decay_steps, num_steps):
    p = pixels.astype(jnp.float32)
    d = p.shape[1]
    mu = p.sum(axis=1, keepdims=True) / d
    var = ((p - mu) ** 2).sum(axis=1, keepdims=True) / d
    x16 = ((p - mu) / jnp.sqrt(var)).astype(jnp.float16)

    def loss_fn(params):
        logits = (x16 @ params["w"].astype(jnp.float16) + params["b"].astype(jnp.float16)).astype(jnp.float32)
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
        return loss * loss_scale, loss

    def body(state, _):
        lr_t = lr / jnp.sqrt(1.0 + state["step"] / decay_steps)
        grads, loss = jax.grad(loss_fn, has_aux=True)({"w": state["w"], "b": state["b"]})
        new = {
            "w": state["w"] - lr_t * grads["w"],
            "b": state["b"] - lr_t * grads["b"],
            "step": state["step"] + 1,
        }
        return new, loss

    final, losses = jax.lax.scan(body, {"w": w, "b": b, "step": step}, None, length=num_steps)
    moved = jnp.sqrt(jnp.sum((final["w"] - w) ** 2) + jnp.sum((final["b"] - b) ** 2))
    return jnp.concatenate([losses, moved[None]])


def train_fp16(pixels, labels, w, b, step, lr, decay_steps, loss_scale, num_steps):
    return run(
        jnp.asarray(pixels, jnp.float32),
        jnp.asarray(labels, jnp.int32),
        jnp.asarray(w, jnp.float32),
        jnp.asarray(b, jnp.float32),
        jnp.asarray(step, jnp.int32),
        lr,
        loss_scale,
        decay_steps,
        num_steps,
    )
