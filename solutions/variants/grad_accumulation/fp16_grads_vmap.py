"""Correct variant: gradients taken with respect to the fp16 copy of the weights (fp16 results), cast to fp32
before anything else; one jitted function per accumulation window that takes the K micro-batch gradients at
once with jax.vmap and sums them with jnp.sum; the division by K * S done as two divisions."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax


def _loss16(w16, xb, yb, scale):
    pred = jnp.matmul(xb, w16).astype(jnp.float32)
    loss = jnp.mean(jnp.square(pred - yb))
    return loss * scale, loss


@partial(jax.jit, static_argnames=("k",))
def _window(master, opt_state, xw, yw, scale, lr, momentum, max_norm, *, k):
    w16 = master.astype(jnp.float16)
    per_batch = jax.vmap(jax.grad(_loss16, has_aux=True), in_axes=(None, 0, 0, None))
    g16, losses = per_batch(w16, xw, yw, scale)  # (K, D) fp16 gradients, (K,) losses
    acc = jnp.sum(g16.astype(jnp.float32), axis=0)
    g = acc / k / scale
    g, _ = optax.clip_by_global_norm(max_norm).update(g, optax.EmptyState())
    updates, opt_state = optax.sgd(lr, momentum=momentum).update(g, opt_state, master)
    return optax.apply_updates(master, updates), opt_state, losses


def train_with_grad_accumulation(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    lr: float,
    momentum: float,
    loss_scale: float,
    max_norm: float,
    accum_steps: int,
) -> jax.Array:
    """Same signature as the reference; returns float32 (M,)."""
    k = int(accum_steps)
    f32 = jnp.float32
    x16 = jnp.asarray(x).astype(jnp.float16)
    y32 = jnp.asarray(y, f32)
    master = jnp.asarray(w, f32)
    opt_state = optax.sgd(lr, momentum=momentum).init(master)
    hyper = (f32(loss_scale), f32(lr), f32(momentum), f32(max_norm))
    out = []
    for start in range(0, x16.shape[0], k):
        master, opt_state, losses = _window(
            master, opt_state, x16[start : start + k], y32[start : start + k], *hyper, k=k
        )
        out.append(losses)
    return jnp.concatenate(out)
