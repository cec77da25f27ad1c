"""dtype_casting: fp16 softmax-classifier SGD steps with an fp32 master copy.

Read README.md in this folder for the exact recipe, the inputs and the output layout.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax  # optional: optax.softmax_cross_entropy_with_integer_labels, optax.sgd


def train_fp16(pixels, labels, w, b, step, lr, decay_steps, loss_scale, num_steps) -> jax.Array:
    """Runs `num_steps` loss-scaled SGD steps with float16 compute and a float32 master copy.

    Args:
        pixels: float32 (N, D), raw pixel values 0..255.
        labels: int32 (N,), classes in [0, K).
        w: float32 (D, K), initial master weights.
        b: float32 (K,), initial master bias.
        step: int, the step counter at the start (kept as an int32 leaf of the state).
        lr: float, peak learning rate of lr_t = lr / sqrt(1 + step / decay_steps).
        decay_steps: float, the schedule's decay length.
        loss_scale: float, a power of two.
        num_steps: int, the number of steps.

    Returns:
        float32 (num_steps + 1,): the fp32 mean cross-entropy of each step (before its update), then
        sqrt(sum((w_final - w)^2) + sum((b_final - b)^2)).
    """
    # TODO 1: standardize each image in float32 (mean and population variance over its D pixels,
    #         written as sums divided by D), then cast the result to float16.
    # TODO 2: state = {"w": float32, "b": float32, "step": int32 scalar}.
    # TODO 3: for each step:
    #   a. c = cast of the state to the compute dtype: floating leaves -> float16, integer leaves unchanged
    #   b. lr_t = lr / sqrt(1 + c["step"] / decay_steps), in float32
    #   c. logits16 = x16 @ w16 + b16 (float16)
    #   d. loss in float32: max-shifted log-sum-exp minus the true-class logit, mean over the batch
    #   e. gradients of loss * loss_scale with respect to the float16 working copy
    #   f. unscale: cast the gradients to float32, then divide by loss_scale
    #   g. update the float32 master (w, b) with lr_t; step + 1
    #   h. keep the float32 loss of this step
    # TODO 4: return the losses followed by the norm of the master weights' total change, as float32.
    raise NotImplementedError("dtype_casting: fill in train_fp16")
