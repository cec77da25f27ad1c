"""Mistake: I divide every scale by 2**margin, including the scale 1 that an all-zero history gives at step 0."""

import functools

import jax
import jax.numpy as jnp

E4M3_MAX = 448.0
E5M2_MAX = 57344.0


def scale_from(history, fp8_max, margin):
    amax = jnp.max(history)
    k = jnp.floor(jnp.log2(fp8_max / amax))
    scale = jnp.where(amax > 0, 2.0**k, 1.0)
    return (scale / 2.0**margin).astype(jnp.float32)


def quantise(v, s, dtype, fp8_max):
    return jnp.clip(v * s, -fp8_max, fp8_max).astype(dtype)


@functools.partial(jax.jit, static_argnames=("history_len", "margin"))
def _train(x, y, w, lr, history_len, margin):
    zeros = jnp.zeros((history_len,), jnp.float32)

    def step(state, batch):
        W, hist_x, hist_w, hist_g = state
        xt, yt = batch
        s_x = scale_from(hist_x, E4M3_MAX, margin)
        s_w = scale_from(hist_w, E4M3_MAX, margin)
        s_g = scale_from(hist_g, E5M2_MAX, margin)
        x8 = quantise(xt, s_x, jnp.float8_e4m3fn, E4M3_MAX)
        w8 = quantise(W, s_w, jnp.float8_e4m3fn, E4M3_MAX)
        pred = jnp.dot(x8, w8, preferred_element_type=jnp.float32) / (s_x * s_w)
        loss = jnp.mean((pred - yt) ** 2)
        g = 2.0 * (pred - yt) / pred.size
        g8 = quantise(g, s_g, jnp.float8_e5m2, E5M2_MAX)
        dW = jax.lax.dot_general(x8, g8, (((0,), (0,)), ((), ())), preferred_element_type=jnp.float32) / (
            s_x * s_g
        )
        hist_x = jnp.roll(hist_x, 1).at[0].set(jnp.max(jnp.abs(xt)))
        hist_w = jnp.roll(hist_w, 1).at[0].set(jnp.max(jnp.abs(W)))
        hist_g = jnp.roll(hist_g, 1).at[0].set(jnp.max(jnp.abs(g)))
        return (W - lr * dW, hist_x, hist_w, hist_g), jnp.stack([loss, s_x, s_w, s_g])

    _, out = jax.lax.scan(step, (w, zeros, zeros, zeros), (x, y))
    return out.T.reshape(-1)


def train_fp8_delayed_scaling(x, y, w, lr, history_len, margin):
    return _train(
        jnp.asarray(x, jnp.float32),
        jnp.asarray(y, jnp.float32),
        jnp.asarray(w, jnp.float32),
        jnp.float32(lr),
        int(history_len),
        int(margin),
    ).astype(jnp.float32)
