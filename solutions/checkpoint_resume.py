"""Reference for checkpoint_resume: fp16 linear regression with fp32 master weights, SGD with momentum,
a step-decay learning rate and a dynamic loss scale, trained in segments saved and restored with Orbax.

One jitted step does the forward/backward pass, the skip-or-apply decision and the scale adjustment; a
Python loop runs it over the segment's steps. The whole training state goes into one Orbax checkpoint.
"""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np
import optax
import orbax.checkpoint as ocp


def _scaled_loss(w: jax.Array, x16: jax.Array, y: jax.Array, scale: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Returns (scale * loss, loss): fp16 matvec, fp32 MSE, scaled in fp32."""
    pred = (x16 @ w.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - y) ** 2)
    return loss * scale, loss


@jax.jit
def _step(w, opt_state, scale, counter, x16, y, lr_k, momentum, period):
    """One training step at learning rate lr_k; returns (w, opt_state, scale, counter, loss) after it."""
    (_, loss), grads = jax.value_and_grad(_scaled_loss, has_aux=True)(w, x16, y, scale)
    grads = grads / scale  # unscale in fp32
    finite = jnp.all(jnp.isfinite(grads))

    updates, stepped_state = optax.sgd(lr_k, momentum=momentum).update(grads, opt_state, w)
    stepped_w = optax.apply_updates(w, updates)
    # A non-finite step keeps the params and the momentum buffer exactly as they were.
    w = jnp.where(finite, stepped_w, w)
    opt_state = jax.tree.map(lambda new, old: jnp.where(finite, new, old), stepped_state, opt_state)

    grow = counter == period - 1
    grown = scale * 2.0
    grown = jnp.where(jnp.isfinite(grown), grown, scale)
    new_scale = jnp.where(finite, jnp.where(grow, grown, scale), jnp.maximum(1.0, scale / 2.0))
    new_counter = jnp.where(finite & ~grow, counter + 1, 0)
    return w, opt_state, new_scale, new_counter, loss


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
    """Trains steps start_step .. stop_step - 1, from the inputs (start_step == 0) or from the checkpoint
    in ckpt_dir, then saves the training state there.

    Returns: float32 (2 * (stop_step - start_step),): the loss of each step, then the scale it used.
    """
    x16 = jnp.asarray(x, jnp.float32).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    w0 = jnp.asarray(w, jnp.float32)
    fresh = {
        "params": w0,
        "opt_state": optax.sgd(lr, momentum=momentum).init(w0),
        "scale": jnp.float32(init_scale),
        "counter": jnp.int32(0),
        "step": jnp.int32(0),
    }
    path = os.path.join(ckpt_dir, "state")
    checkpointer = ocp.StandardCheckpointer()
    if start_step == 0:
        state = fresh
    else:
        state = checkpointer.restore(path, jax.tree.map(ocp.utils.to_shape_dtype_struct, fresh))
        assert int(state["step"]) == start_step, "the checkpoint is not at start_step"

    w, opt_state = state["params"], state["opt_state"]
    scale, counter = state["scale"], state["counter"]
    losses, scales = [], []
    for k in range(start_step, stop_step):
        lr_k = jnp.float32(lr * 0.5 ** (k // decay_every))  # the schedule counts every step
        scales.append(scale)
        w, opt_state, scale, counter, loss = _step(
            w, opt_state, scale, counter, x16, y, lr_k, jnp.float32(momentum), jnp.int32(period)
        )
        losses.append(loss)

    state = {
        "params": w,
        "opt_state": opt_state,
        "scale": scale,
        "counter": counter,
        "step": jnp.int32(stop_step),
    }
    checkpointer.save(path, state, force=True)
    checkpointer.wait_until_finished()
    return jnp.concatenate([jnp.stack(losses), jnp.stack(scales)]).astype(jnp.float32)
