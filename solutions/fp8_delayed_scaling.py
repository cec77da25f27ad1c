"""Reference for fp8_delayed_scaling: a linear layer trained with fp8 matmuls and delayed scaling.

One jitted step quantises x and W to e4m3 and the output gradient to e5m2 with scales taken from the
amax histories of the earlier steps, runs both matmuls on the fp8 values with fp32 accumulation,
dequantises, updates the fp32 master weights and only then pushes this step's amaxes into the histories.
A Python loop runs it once per batch.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

E4M3_MAX = 448.0
E5M2_MAX = 57344.0


def _scale(history: jax.Array, fp8_max: float, margin: jax.Array) -> jax.Array:
    """2**(floor(log2(fp8_max / max(history))) - margin), exactly; 1 while the history is all zeros."""
    amax = jnp.max(history)
    _, exponent = jnp.frexp(jnp.float32(fp8_max) / amax)  # ratio = m * 2**exponent, 0.5 <= m < 1
    scale = jnp.ldexp(jnp.float32(1.0), exponent - 1 - margin)
    return jnp.where(amax > 0, scale, jnp.float32(1.0))


def _quantise(v: jax.Array, scale: jax.Array, dtype, fp8_max: float) -> jax.Array:
    """Scales in fp32, saturates to the format's finite range, then casts to fp8."""
    return jnp.clip(v * scale, -fp8_max, fp8_max).astype(dtype)


def _push(history: jax.Array, amax: jax.Array) -> jax.Array:
    """Newest amax first; the oldest drops off the end."""
    return jnp.concatenate([amax[None], history[:-1]])


@jax.jit
def _step(w, hist_x, hist_w, hist_g, x, y, lr, margin):
    """One training step; returns the new (w, histories), the step's loss and its three scales."""
    # Scales from the histories of the earlier steps (delayed scaling).
    s_x = _scale(hist_x, E4M3_MAX, margin)
    s_w = _scale(hist_w, E4M3_MAX, margin)
    s_g = _scale(hist_g, E5M2_MAX, margin)

    # Forward: e4m3 operands, fp32 accumulation, dequantised by the inverse scales.
    x8 = _quantise(x, s_x, jnp.float8_e4m3fn, E4M3_MAX)
    w8 = _quantise(w, s_w, jnp.float8_e4m3fn, E4M3_MAX)
    pred = jnp.dot(x8, w8, preferred_element_type=jnp.float32) / (s_x * s_w)
    residual = pred - y
    loss = jnp.mean(residual**2)

    # Backward by hand: dL/dpred in fp32, quantised to e5m2; dW from the forward's x8.
    g = 2.0 * residual / residual.size
    g8 = _quantise(g, s_g, jnp.float8_e5m2, E5M2_MAX)
    dw = jnp.dot(x8.T, g8, preferred_element_type=jnp.float32) / (s_x * s_g)
    new_w = w - lr * dw

    # Only now does this step's amax enter the histories (of x, of the W it used, of g).
    hist_x = _push(hist_x, jnp.max(jnp.abs(x)))
    hist_w = _push(hist_w, jnp.max(jnp.abs(w)))
    hist_g = _push(hist_g, jnp.max(jnp.abs(g)))
    return new_w, hist_x, hist_w, hist_g, loss, jnp.stack([s_x, s_w, s_g])


def train_fp8_delayed_scaling(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, lr: float, history_len: int, margin: int
) -> jax.Array:
    """Trains pred = x[t] @ W on one batch per step with fp8 matmuls and delayed per-tensor scaling.

    Args: x float32 (T, B, D_in); y float32 (T, B, D_out); w float32 (D_in, D_out) initial master
    weights; lr Python float; history_len, margin Python ints.
    Returns: float32 (4 * T,): the loss of every step, then s_x, s_w and s_g of every step.
    """
    w = jnp.asarray(w, jnp.float32)
    hist_x = hist_w = hist_g = jnp.zeros((history_len,), jnp.float32)
    lr, margin = jnp.float32(lr), jnp.int32(margin)
    losses, scales = [], []
    for xt, yt in zip(jnp.asarray(x, jnp.float32), jnp.asarray(y, jnp.float32), strict=True):
        w, hist_x, hist_w, hist_g, loss, s = _step(w, hist_x, hist_w, hist_g, xt, yt, lr, margin)
        losses.append(loss)
        scales.append(s)
    scales = jnp.stack(scales)
    return jnp.concatenate([jnp.stack(losses), scales[:, 0], scales[:, 1], scales[:, 2]]).astype(jnp.float32)
