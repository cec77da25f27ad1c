"""Correct variant: the whole run is one jitted lax.scan; histories rolled with jnp.roll; scales from
floor(log2(.)) and 2.0 ** k; lax.dot_general on the fp8 operands; inverse scales multiplied in."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

E4 = jnp.float8_e4m3fn
E5 = jnp.float8_e5m2


def _scale(history, fp8_max, margin):
    amax = history.max()
    k = jnp.floor(jnp.log2(fp8_max / amax))
    return jnp.where(amax > 0, 2.0 ** (k - margin), 1.0).astype(jnp.float32)


def _cast(v, s, dtype):
    top = float(jnp.finfo(dtype).max)
    return jnp.clip(v * s, -top, top).astype(dtype)


def _matmul_f32(a, b, contract):
    return lax.dot_general(a, b, ((contract, (0,)), ((), ())), preferred_element_type=jnp.float32)


@partial(jax.jit, static_argnames=("history_len",))
def _run(x, y, w, lr, margin, *, history_len):
    def body(carry, batch):
        w, hx, hw, hg = carry
        xt, yt = batch
        s_x = _scale(hx, 448.0, margin)
        s_w = _scale(hw, 448.0, margin)
        s_g = _scale(hg, 57344.0, margin)
        x8, w8 = _cast(xt, s_x, E4), _cast(w, s_w, E4)
        pred = _matmul_f32(x8, w8, (1,)) * (1.0 / s_x) * (1.0 / s_w)
        err = pred - yt
        g = 2.0 * err / err.size
        g8 = _cast(g, s_g, E5)
        dw = _matmul_f32(x8, g8, (0,)) * (1.0 / s_x) * (1.0 / s_g)
        roll = lambda h, v: jnp.roll(h, 1).at[0].set(v)  # noqa: E731
        carry = (
            w - lr * dw,
            roll(hx, jnp.abs(xt).max()),
            roll(hw, jnp.abs(w).max()),
            roll(hg, jnp.abs(g).max()),
        )
        return carry, (jnp.mean(jnp.square(err)), jnp.stack([s_x, s_w, s_g]))

    zeros = jnp.zeros((history_len,), jnp.float32)
    _, (losses, scales) = lax.scan(body, (w, zeros, zeros, zeros), (x, y))
    return jnp.concatenate([losses, scales.T.reshape(-1)])


def train_fp8_delayed_scaling(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, lr: float, history_len: int, margin: int
) -> jax.Array:
    """Same signature as the reference; returns float32 (4 * T,)."""
    f32 = jnp.float32
    return _run(
        jnp.asarray(x, f32),
        jnp.asarray(y, f32),
        jnp.asarray(w, f32),
        f32(lr),
        f32(margin),
        history_len=int(history_len),
    )
