"""Reference for dtype_casting: fp16 softmax-classifier SGD steps, every cast where the statement puts it."""

from __future__ import annotations

import jax
import jax.numpy as jnp

F16 = jnp.float16
F32 = jnp.float32


def cast_compute(tree):
    """Casts the floating leaves of a pytree to float16; integer leaves (the step counter) pass unchanged."""
    return jax.tree.map(lambda a: a.astype(F16) if jnp.issubdtype(a.dtype, jnp.floating) else a, tree)


def standardize(pixels: jax.Array) -> jax.Array:
    """Per-image standardization of raw 0-255 pixels, every sum in fp32. float32 (N, D) -> float32 (N, D)."""
    p = jnp.asarray(pixels, F32)
    d = p.shape[1]
    mean = jnp.sum(p, axis=1, keepdims=True) / d
    var = jnp.sum((p - mean) ** 2, axis=1, keepdims=True) / d
    return (p - mean) / jnp.sqrt(var)


def cross_entropy(logits: jax.Array, labels: jax.Array) -> jax.Array:
    """Mean softmax cross-entropy in fp32 through a max-shifted log-sum-exp. Returns a float32 scalar."""
    z = logits.astype(F32)
    m = jax.lax.stop_gradient(jnp.max(z, axis=1))
    lse = m + jnp.log(jnp.sum(jnp.exp(z - m[:, None]), axis=1))
    picked = jnp.take_along_axis(z, labels[:, None], axis=1)[:, 0]
    return jnp.mean(lse - picked)


def train_fp16(pixels, labels, w, b, step, lr, decay_steps, loss_scale, num_steps):
    """Runs `num_steps` loss-scaled SGD steps with fp16 compute and an fp32 master copy.

    Args:
        pixels: float32 (N, D), raw pixel values 0..255.
        labels: int32 (N,), classes in [0, K).
        w: float32 (D, K) and b: float32 (K,), the fp32 master weights.
        step: int, the step counter at the start.
        lr: float, peak learning rate; decay_steps: float, the schedule's decay length.
        loss_scale: float, a power of two.
        num_steps: int, how many steps to run.

    Returns:
        float32 (num_steps + 1,): the mean cross-entropy of each step, then the L2 norm of the total
        change of the master weights (w and b together).
    """
    x16 = standardize(pixels).astype(F16)  # scale in fp32, cast afterwards
    labels = jnp.asarray(labels, jnp.int32)
    state = {"w": jnp.asarray(w, F32), "b": jnp.asarray(b, F32), "step": jnp.asarray(step, jnp.int32)}

    def scaled_loss(params16):
        logits = x16 @ params16["w"] + params16["b"]  # fp16 matmul and bias add
        loss = cross_entropy(logits, labels)
        return loss * loss_scale, loss

    losses = []
    for _ in range(int(num_steps)):
        c = cast_compute(state)  # fp16 working copy; c["step"] stays int32
        lr_t = lr / jnp.sqrt(1.0 + c["step"] / decay_steps)
        grads16, loss = jax.grad(scaled_loss, has_aux=True)({"w": c["w"], "b": c["b"]})
        grads = jax.tree.map(lambda g: g.astype(F32) / loss_scale, grads16)  # unscale in fp32
        state = {
            "w": state["w"] - lr_t * grads["w"],
            "b": state["b"] - lr_t * grads["b"],
            "step": state["step"] + 1,
        }
        losses.append(loss)

    dw = state["w"] - jnp.asarray(w, F32)
    db = state["b"] - jnp.asarray(b, F32)
    moved = jnp.sqrt(jnp.sum(dw * dw) + jnp.sum(db * db))
    return jnp.concatenate([jnp.stack(losses), moved[None]]).astype(F32)
