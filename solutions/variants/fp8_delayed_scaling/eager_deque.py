"""Correct variant: eager Python loop, histories as deques of Python floats, numpy for the scales,
operands dequantised before a plain fp32 matmul."""

from __future__ import annotations

from collections import deque

import jax
import jax.numpy as jnp
import numpy as np


def train_fp8_delayed_scaling(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, lr: float, history_len: int, margin: int
) -> jax.Array:
    """Same signature as the reference; returns float32 (4 * T,)."""
    e4, e5 = jnp.float8_e4m3fn, jnp.float8_e5m2
    e4_max, e5_max = float(jnp.finfo(e4).max), float(jnp.finfo(e5).max)

    def scale(history, fp8_max):
        amax = np.float32(max(history))
        if amax == 0:
            return 1.0
        ratio = np.float32(fp8_max) / amax  # the ratio in float32
        return 2.0 ** (int(np.floor(np.log2(ratio))) - margin)

    def to_fp8(v, s, dtype, fp8_max):
        return jnp.clip(v * s, -fp8_max, fp8_max).astype(dtype)

    w = jnp.asarray(w, jnp.float32)
    hx, hw, hg = (deque([0.0] * history_len, maxlen=history_len) for _ in range(3))
    losses, sxs, sws, sgs = [], [], [], []
    for xt, yt in zip(x, y, strict=True):
        xt, yt = jnp.asarray(xt, jnp.float32), jnp.asarray(yt, jnp.float32)
        s_x, s_w, s_g = scale(hx, e4_max), scale(hw, e4_max), scale(hg, e5_max)
        x8 = to_fp8(xt, s_x, e4, e4_max)
        w8 = to_fp8(w, s_w, e4, e4_max)
        pred = (x8.astype(jnp.float32) / s_x) @ (w8.astype(jnp.float32) / s_w)
        r = pred - yt
        losses.append(jnp.mean(r * r))
        g = r * (2.0 / r.size)
        g8 = to_fp8(g, s_g, e5, e5_max)
        dw = (x8.astype(jnp.float32) / s_x).T @ (g8.astype(jnp.float32) / s_g)
        # appendleft on a full deque drops the oldest amax from the other end
        hx.appendleft(float(jnp.max(jnp.abs(xt))))
        hw.appendleft(float(jnp.max(jnp.abs(w))))
        hg.appendleft(float(jnp.max(jnp.abs(g))))
        w = w - lr * dw
        sxs.append(s_x)
        sws.append(s_w)
        sgs.append(s_g)
    scales = np.array(sxs + sws + sgs, np.float32)
    return jnp.concatenate([jnp.stack(losses), jnp.asarray(scales)])
