"""fp8_delayed_scaling: a linear layer trained with fp8 matmuls and delayed scaling (recipe: README.md)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def train_fp8_delayed_scaling(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, lr: float, history_len: int, margin: int
) -> jax.Array:
    """Trains pred = x[t] @ W, one batch per step, with e4m3/e5m2 matmuls and delayed per-tensor scaling.

    Args:
        x: float32 (T, B, D_in): the features of step t are x[t].
        y: float32 (T, B, D_out): the targets of step t are y[t].
        w: float32 (D_in, D_out): the initial fp32 master weights.
        lr: SGD learning rate (W = W - lr * dW, in fp32).
        history_len: H, the number of earlier amaxes each history keeps.
        margin: the scales computed from a nonzero history are divided by 2 ** margin (the step-0
            scale 1 is not).

    Returns:
        float32 (4 * T,): losses[t] for every step, then s_x[t], then s_w[t], then s_g[t] (the scales
        step t used).
    """
    # TODO 1: W in float32 (and kept so); three float32 histories of length history_len (x, W, g), all zeros.
    # TODO 2: a scale from a history: amax = max(history); 1.0 if amax == 0 (no margin there), else
    #         2 ** (floor(log2(fp8_max / amax)) - margin), an exact power of two (not jnp.exp2).
    # TODO 3: quantise: clip(v * s, -fp8_max, fp8_max), then cast (float8_e4m3fn: 448, float8_e5m2: 57344).
    # TODO 4: each step: the three scales from the histories as they are; x8, w8 in e4m3; pred = (x8 @ w8
    #         accumulated in float32) / (s_x * s_w); loss = mean((pred - y[t]) ** 2).
    # TODO 5: g = 2 * (pred - y[t]) / pred.size; g8 in e5m2; dW = (x8^T @ g8 in float32) / (s_x * s_g);
    #         W = W - lr * dW.
    # TODO 6: only now push max|x[t]|, max|W used this step| and max|g| into the front of their histories.
    # TODO 7: return jnp.concatenate([losses, s_x, s_w, s_g]) as float32.
    raise NotImplementedError("fp8_delayed_scaling: fill in train_fp8_delayed_scaling")
