"""Correct variant: flax.linen.Dense(dtype=float16) does the casts of inputs and params; a train state
with a named-leaf cast; jax.nn.log_softmax in fp32; jnp.std for standardizing."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp


def train_fp16(pixels, labels, w, b, step, lr, decay_steps, loss_scale, num_steps):
    pix = jnp.asarray(pixels, jnp.float32)
    x = (pix - pix.mean(axis=1, keepdims=True)) / pix.std(axis=1, keepdims=True)  # fp32; Dense casts it
    labels = jnp.asarray(labels, jnp.int32)
    k = jnp.shape(w)[1]
    model = nn.Dense(k, dtype=jnp.float16, param_dtype=jnp.float32)

    state = {
        "params": {"kernel": jnp.asarray(w, jnp.float32), "bias": jnp.asarray(b, jnp.float32)},
        "step": jnp.asarray(step, jnp.int32),
    }

    def loss_fn(params):
        logits = model.apply({"params": params}, x)  # fp16 out
        logp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
        loss = -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=-1))
        return loss * loss_scale, loss

    losses = []
    for _ in range(int(num_steps)):
        step_now = state["step"]  # an int32 leaf, never cast
        lr_t = lr * jax.lax.rsqrt(1.0 + step_now / decay_steps)
        grads, loss = jax.grad(loss_fn, has_aux=True)(state["params"])
        new_params = {
            name: state["params"][name] - lr_t * (grads[name].astype(jnp.float32) / loss_scale)
            for name in ("kernel", "bias")
        }
        state = {"params": new_params, "step": step_now + 1}
        losses.append(loss)

    d_kernel = state["params"]["kernel"] - w
    d_bias = state["params"]["bias"] - b
    moved = jnp.linalg.norm(jnp.concatenate([d_kernel.ravel(), d_bias.ravel()]))
    return jnp.concatenate([jnp.stack(losses), moved[None]]).astype(jnp.float32)
