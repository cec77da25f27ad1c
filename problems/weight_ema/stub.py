"""weight_ema: fp16 training with an fp32 EMA of the weights. The recipe is in README.md."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax  # optional: sgd, ema (read the statement on how optax.ema lines up)


def train_with_weight_ema(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    x_eval: np.ndarray,
    y_eval: np.ndarray,
    lr: float,
    momentum: float,
    loss_scale: float,
    decay: float,
) -> jax.Array:
    """Trains pred = x[k] @ w (no bias) with fp16 compute, fp32 master weights and a static loss scale, and
    keeps an exponential moving average (EMA) of the weights.

    Args:
        x: float32 (T, B, D) features of the T mini-batches, one per step (exact in fp16).
        y: float32 (T, B) targets.
        w: float32 (D,) initial fp32 master weights.
        x_eval: float32 (E, D) eval features.
        y_eval: float32 (E,) eval targets.
        lr: learning rate of optax.sgd (a power of two).
        momentum: momentum of optax.sgd (m = g + momentum * m; w = w - lr * m).
        loss_scale: the static loss scale S, a power of two (keep it fp32).
        decay: the EMA decay d (1 - 2^-10 or 1 - 2^-13).

    Returns:
        float32 (2 * T,): losses[k], the unscaled fp32 training loss of step k (before its update), then
        eval_losses[k], the fp32 eval loss of the EMA weights after step k.
    """
    # TODO 1: master w in fp32; optax.sgd(lr, momentum=momentum) and its state; ema = a copy of the fp32 w.
    # TODO 2: each step: the scaled fp16 forward and backward pass; record the loss; g = grad / S.
    # TODO 3: if every entry of g is finite: the optimizer update, then ema = d * ema + (1 - d) * w (fp32).
    #         Otherwise: w, the optimizer state and ema all stay as they were.
    # TODO 4: record mean((x_eval @ ema - y_eval) ** 2) in fp32.
    # TODO 5: return jnp.concatenate([losses, eval_losses]) as float32.
    raise NotImplementedError("weight_ema: fill in train_with_weight_ema")
