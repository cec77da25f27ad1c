"""Mistake: I follow flax's fp8 convention, where the scale is the inverse one (values are divided by it when quantised), and return those inverse scales instead of s."""

import functools

import jax
import jax.numpy as jnp
from flax.linen import fp8_ops

E4M3_MAX = 448.0
E5M2_MAX = 57344.0


def inverse_scale(history, fp8_max, margin):
    amax = jnp.max(history)
    k = jnp.floor(jnp.log2(jnp.float32(fp8_max) / amax))
    return jnp.where(amax > 0, 2.0 ** (margin - k), 1.0).astype(jnp.float32)


def quantise(v, inv_s, dtype, fp8_max):
    return jnp.clip(v / inv_s, -fp8_max, fp8_max).astype(dtype)


@functools.partial(jax.jit, static_argnames=("margin",))
def _train(x, y, w, lr, hist0, margin):
    def step(state, batch):
        W, hist_x, hist_w, hist_g = state
        xt, yt = batch
        i_x = inverse_scale(hist_x, E4M3_MAX, margin)
        i_w = inverse_scale(hist_w, E4M3_MAX, margin)
        i_g = inverse_scale(hist_g, E5M2_MAX, margin)
        x8 = quantise(xt, i_x, jnp.float8_e4m3fn, E4M3_MAX)
        w8 = quantise(W, i_w, jnp.float8_e4m3fn, E4M3_MAX)
        pred = jnp.dot(x8, w8, preferred_element_type=jnp.float32) * (i_x * i_w)
        loss = jnp.mean((pred - yt) ** 2)
        g = 2.0 * (pred - yt) / pred.size
        g8 = quantise(g, i_g, jnp.float8_e5m2, E5M2_MAX)
        dW = jnp.dot(x8.T, g8, preferred_element_type=jnp.float32) * (i_x * i_g)
        hist_x = fp8_ops.compute_amax_history(xt, hist_x)
        hist_w = fp8_ops.compute_amax_history(W, hist_w)
        hist_g = fp8_ops.compute_amax_history(g, hist_g)
        return (W - lr * dW, hist_x, hist_w, hist_g), jnp.stack([loss, i_x, i_w, i_g])

    _, out = jax.lax.scan(step, (w, hist0, hist0, hist0), (x, y))
    return out.T.reshape(-1)


def train_fp8_delayed_scaling(x, y, w, lr, history_len, margin):
    hist0 = jnp.zeros((history_len,), jnp.float32)
    return _train(
        jnp.asarray(x, jnp.float32),
        jnp.asarray(y, jnp.float32),
        jnp.asarray(w, jnp.float32),
        jnp.float32(lr),
        hist0,
        int(margin),
    ).astype(jnp.float32)
