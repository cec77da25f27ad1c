"""grad_accumulation: fp16 micro-batches, a static loss scale, gradients accumulated in fp32.

Read problems/grad_accumulation/README.md for the exact recipe, the inputs and the tolerance.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax  # optional: clip_by_global_norm, sgd and MultiSteps fit this recipe


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
    """Trains pred = x @ w (no bias) over M micro-batches, one optimizer step per accum_steps of them.

    Args:
        x: float32 (M, B, D) features of the micro-batches, in order (exactly representable in fp16).
        y: float32 (M, B) targets (stay in fp32).
        w: float32 (D,) initial fp32 master weights.
        lr: Python float, learning rate of optax.sgd (a power of two).
        momentum: Python float, momentum of optax.sgd (m = g + momentum * m; w = w - lr * m).
        loss_scale: Python float S, a power of two (keep it as float32: 2^16 is inf in fp16).
        max_norm: Python float, global-norm clipping threshold for the unscaled, averaged gradient.
        accum_steps: Python int K; M is a multiple of K.

    Returns:
        float32 (M,): losses[i], the unscaled fp32 loss (mean over the B rows) of micro-batch i, computed
        with the weights in force when micro-batch i is processed.
    """
    # TODO 1: S = float32(loss_scale); master w in float32; the optimizer and its state; an fp32 accumulator.
    # TODO 2: a loss function of the fp32 w: cast x[i] and w to float16, pred = (x16 @ w16) cast to float32,
    #         loss = mean((pred - y[i]) ** 2) in float32; return loss * S (and loss, e.g. as aux).
    # TODO 3: for each micro-batch: record the loss, add the fp32 gradient of the scaled loss to the
    #         accumulator.
    # TODO 4: after every K-th micro-batch: g = acc / (K * S) in float32; clip g by its global norm
    #         (g / n * max_norm when n >= max_norm); one SGD-momentum update; reset the accumulator.
    # TODO 5: return the recorded losses as a float32 array of shape (M,).
    raise NotImplementedError("grad_accumulation: fill in train_with_grad_accumulation")
