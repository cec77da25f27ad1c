"""Correct variant: eager loop, Python `if` on finiteness, Python float scale and int counter, optax.sgd
rebuilt at each step's learning rate, jax.grad plus a separate forward pass, a concrete restore target,
the checkpointer used as a context manager (closing it waits for the save)."""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np
import optax
import orbax.checkpoint as ocp


def train_segment(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    lr: float,
    momentum: float,
    decay_every: int,
    init_scale: float,
    period: int,
    start_step: int,
    stop_step: int,
    ckpt_dir: str,
) -> jax.Array:
    """Same signature as the reference; returns float32 (2 * (stop_step - start_step),)."""
    x16 = jnp.asarray(x).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    path = os.path.join(ckpt_dir, "state")

    def loss(w):
        pred = jnp.matmul(x16, w.astype(jnp.float16)).astype(jnp.float32)
        return jnp.mean(jnp.square(pred - y))

    w = jnp.asarray(w, jnp.float32)
    opt_state = optax.sgd(lr, momentum=momentum).init(w)
    scale, counter = float(init_scale), 0
    if start_step > 0:
        template = {
            "params": w,
            "opt_state": opt_state,
            "scale": jnp.float32(scale),
            "counter": jnp.int32(counter),
            "step": jnp.int32(0),
        }
        with ocp.StandardCheckpointer() as checkpointer:
            saved = checkpointer.restore(path, template)
        w, opt_state = saved["params"], saved["opt_state"]
        scale, counter = float(saved["scale"]), int(saved["counter"])

    losses, scales = [], []
    for k in range(start_step, stop_step):
        scales.append(scale)
        losses.append(loss(w))
        s = jnp.float32(scale)
        g = jax.grad(lambda v, s: loss(v) * s)(w, s) / s
        if bool(jnp.isfinite(g).all()):
            opt = optax.sgd(lr * 0.5 ** (k // decay_every), momentum=momentum)
            updates, opt_state = opt.update(g, opt_state, w)
            w = optax.apply_updates(w, updates)
            counter += 1
            if counter == period:
                scale, counter = scale * 2.0, 0
        else:
            scale, counter = max(1.0, scale / 2.0), 0

    state = {
        "params": w,
        "opt_state": opt_state,
        "scale": jnp.float32(scale),
        "counter": jnp.int32(counter),
        "step": jnp.int32(stop_step),
    }
    with ocp.StandardCheckpointer() as checkpointer:
        checkpointer.save(path, state, force=True)
    return jnp.concatenate([jnp.stack(losses), jnp.asarray(scales, jnp.float32)])
