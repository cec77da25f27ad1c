"""Correct variant: flax Dense(use_bias=False, dtype=float16) with an fp32 (D, 1) kernel;
optax.inject_hyperparams(optax.sgd) with the learning rate set from the global step at every step; a
jitted step that selects with jnp.where; the kernel reshaped to (D,) in the checkpoint; an abstract
restore target from jax.eval_shape."""

from __future__ import annotations

from pathlib import Path

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import orbax.checkpoint as ocp

MODEL = nn.Dense(1, use_bias=False, dtype=jnp.float16, param_dtype=jnp.float32)
SGD = optax.inject_hyperparams(optax.sgd)


def _loss_fn(params, x, y, scale):
    pred = MODEL.apply(params, x.astype(jnp.float16))[:, 0].astype(jnp.float32)
    loss = jnp.mean((pred - y) ** 2)
    return loss * scale, loss


@jax.jit
def _step(params, opt_state, scale, count, x, y, lr_k, period):
    (_, loss), grads = jax.value_and_grad(_loss_fn, has_aux=True)(params, x, y, scale)
    grads = jax.tree.map(lambda g: g / scale, grads)
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    opt_state.hyperparams["learning_rate"] = lr_k
    tx = SGD(learning_rate=lr_k, momentum=opt_state.hyperparams["momentum"])
    updates, new_opt_state = tx.update(grads, opt_state, params)
    new_params = optax.apply_updates(params, updates)
    keep = lambda new, old: jnp.where(ok, new, old)  # noqa: E731
    params = jax.tree.map(keep, new_params, params)
    opt_state = jax.tree.map(keep, new_opt_state, opt_state)
    count = jnp.where(ok, count + 1, 0)
    grow = count == period
    scale = jnp.where(ok, jnp.where(grow, scale * 2, scale), jnp.maximum(jnp.float32(1), scale / 2))
    count = jnp.where(grow, 0, count)
    return params, opt_state, scale, count, loss


def _to_checkpoint(params, opt_state, scale, count, step):
    return {
        "params": params["params"]["kernel"][:, 0],
        "opt_state": opt_state,
        "scale": scale,
        "counter": count,
        "step": jnp.int32(step),
    }


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
    x = jnp.asarray(x, jnp.float32)
    y = jnp.asarray(y, jnp.float32)
    params = {"params": {"kernel": jnp.asarray(w, jnp.float32).reshape(-1, 1)}}
    opt_state = SGD(learning_rate=lr, momentum=momentum).init(params)
    scale, count = jnp.float32(init_scale), jnp.int32(0)
    path = Path(ckpt_dir) / "state"
    checkpointer = ocp.StandardCheckpointer()
    if start_step > 0:
        target = jax.eval_shape(_to_checkpoint, params, opt_state, scale, count, 0)
        saved = checkpointer.restore(path, target)
        params = {"params": {"kernel": saved["params"].reshape(-1, 1)}}
        opt_state, scale, count = saved["opt_state"], saved["scale"], saved["counter"]

    losses, scales = [], []
    for k in range(start_step, stop_step):
        scales.append(scale)
        lr_k = jnp.float32(lr / 2 ** (k // decay_every))
        params, opt_state, scale, count, loss = _step(params, opt_state, scale, count, x, y, lr_k, period)
        losses.append(loss)

    checkpointer.save(path, _to_checkpoint(params, opt_state, scale, count, stop_step), force=True)
    checkpointer.wait_until_finished()
    return jnp.concatenate([jnp.stack(losses), jnp.stack(scales)])
