"""dynamic_loss_scaling: fp16 training with a dynamic loss scale. The recipe is in README.md."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


def train_with_dynamic_loss_scaling(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    lr: float,
    momentum: float,
    init_scale: float,
    period: int,
    factor: float,
    min_scale: float,
    num_steps: int,
) -> jax.Array:
    """Trains pred = x @ w (no bias) with fp16 compute, fp32 master weights and dynamic loss scaling.

    Args:
        x: float32 (N, D) features.
        y: float32 (N,) targets.
        w: float32 (D,) initial fp32 master weights.
        lr: learning rate of optax.sgd.
        momentum: momentum of optax.sgd (m = g + momentum * m; w = w - lr * m).
        init_scale: initial loss scale (kept as float32).
        period: number of consecutive finite steps after which the scale grows.
        factor: the scale is multiplied by it on growth and divided by it on overflow.
        min_scale: the back-off never goes below this.
        num_steps: number of training steps.

    Returns:
        float32 (2 * num_steps,): losses[k] (unscaled fp32 loss of step k's forward pass, before its
        update), then scales[k] (the scale step k used, before the adjustment).
    """
    # TODO 1: x16 = x cast to float16; master w in float32; opt = optax.sgd(lr, momentum=momentum) and
    #         its state; scale = float32(init_scale); counter = 0.
    # TODO 2: a loss function of the fp32 w: cast w to float16, pred = (x16 @ w16) cast to float32,
    #         loss = mean((pred - y) ** 2) in float32, return loss * scale (and loss, e.g. as aux).
    # TODO 3: each step: record the scale, take the gradient of the scaled loss, record the unscaled loss,
    #         unscale the gradient in float32 and check that every entry is finite.
    # TODO 4: finite: apply the optimizer update; counter += 1; on the period-th finite step in a row
    #         multiply the scale by factor (keep it if the product is not finite) and reset the counter.
    # TODO 5: not finite: leave w and the optimizer state untouched; scale = max(min_scale, scale / factor);
    #         reset the counter.
    # TODO 6: return jnp.concatenate([losses, scales]) as float32.
    raise NotImplementedError("dynamic_loss_scaling: fill in train_with_dynamic_loss_scaling")
