"""checkpoint_resume: train a mixed-precision run in two calls, saving and restoring its whole state with
Orbax. The recipe is in README.md; harness.py (next to this file) shows how the grader calls you."""

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
    """Trains steps start_step .. stop_step - 1 of pred = x @ w (no bias) with fp16 compute, fp32 master
    weights, SGD with momentum, a step-decay learning rate and a dynamic loss scale, then saves the state.

    Args:
        x: float32 (N, D) features.
        y: float32 (N,) targets.
        w: float32 (D,) initial fp32 master weights: the run's state when start_step == 0; when
            start_step > 0, only the template of the restore target (never the resumed weights).
        lr: learning rate at step 0; step k uses lr * 0.5 ** (k // decay_every), k the global step.
        momentum: momentum of SGD (m = g + momentum * m; w = w - lr_k * m).
        decay_every: the learning rate halves every decay_every steps.
        init_scale: initial loss scale: the run's scale when start_step == 0; when start_step > 0, only
            part of the restore target's template (the scale comes from the checkpoint).
        period: finite steps in a row after which the scale doubles.
        start_step: the first step of this call: 0, or the step the checkpoint in ckpt_dir is at.
        stop_step: one past the last step of this call.
        ckpt_dir: absolute path of the folder that holds the checkpoint, at ckpt_dir/state.

    Returns:
        float32 (2 * (stop_step - start_step),): the losses of this call's steps (unscaled fp32 loss of
        each step's forward pass, before its update), then the scale each step used.
    """
    # TODO 1: x16 = x cast to float16, y in float32. The state: if start_step == 0, build it from the
    #         inputs: {"params": w (float32), "opt_state": optax.sgd(lr, momentum=momentum).init(w),
    #         "scale": jnp.float32(init_scale), "counter": jnp.int32(0), "step": jnp.int32(0)}; otherwise
    #         restore it from os.path.join(ckpt_dir, "state") with ocp.StandardCheckpointer().restore(path,
    #         target), target = jax.tree.map(ocp.utils.to_shape_dtype_struct, <that fresh state>).
    # TODO 2: for k in range(start_step, stop_step): lr_k = lr * 0.5 ** (k // decay_every); record the
    #         scale; forward in fp16 (w cast inside the differentiated function; pred16 = x16 @ w16, one
    #         fp16 dot product, not a sum of fp16 products), loss in fp32, scaled by the scale; record the
    #         loss; unscale the gradient in fp32 and test it with jnp.isfinite.
    # TODO 3: finite: update with optax.sgd(lr_k, momentum=momentum) and optax.apply_updates; count the
    #         step and double the scale on the period-th finite step in a row (then reset the counter).
    #         Not finite: keep params and optimizer state; scale = max(1, scale / 2); counter = 0 (always).
    # TODO 4: save {"params", "opt_state", "scale", "counter", "step": jnp.int32(stop_step)} with
    #         checkpointer.save(os.path.join(ckpt_dir, "state"), state, force=True), then
    #         checkpointer.wait_until_finished().
    # TODO 5: return jnp.concatenate([losses, scales]) as float32.
    raise NotImplementedError("checkpoint_resume: fill in train_segment")
