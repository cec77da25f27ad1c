"""Mistake: I compute all three scales with E4M3_MAX = 448 (the gradient is still clipped to 57344 and cast to e5m2)."""

import jax
import jax.numpy as jnp
import numpy as np

E4M3_MAX = 448.0
E5M2_MAX = 57344.0


def train_fp8_delayed_scaling(x, y, w, lr, history_len, margin):
    W = jnp.asarray(w, jnp.float32)
    hist_x = jnp.zeros(history_len, jnp.float32)
    hist_w = jnp.zeros(history_len, jnp.float32)
    hist_g = jnp.zeros(history_len, jnp.float32)

    def scale(h):
        amax = jnp.max(h)
        k = jnp.floor(jnp.log2(E4M3_MAX / amax))
        return jnp.where(amax > 0, 2.0 ** (k - margin), 1.0).astype(jnp.float32)

    losses, sxs, sws, sgs = [], [], [], []
    for t in range(x.shape[0]):
        xt, yt = jnp.asarray(x[t]), jnp.asarray(y[t])
        s_x, s_w, s_g = scale(hist_x), scale(hist_w), scale(hist_g)
        x8 = jnp.clip(xt * s_x, -E4M3_MAX, E4M3_MAX).astype(jnp.float8_e4m3fn)
        w8 = jnp.clip(W * s_w, -E4M3_MAX, E4M3_MAX).astype(jnp.float8_e4m3fn)
        pred = jnp.dot(x8, w8, preferred_element_type=jnp.float32) / (s_x * s_w)
        loss = jnp.mean((pred - yt) ** 2)
        g = 2 * (pred - yt) / pred.size
        g8 = jnp.clip(g * s_g, -E5M2_MAX, E5M2_MAX).astype(jnp.float8_e5m2)
        dW = jnp.dot(x8.T, g8, preferred_element_type=jnp.float32) / (s_x * s_g)
        hist_x = jnp.roll(hist_x, 1).at[0].set(jnp.max(jnp.abs(xt)))
        hist_w = jnp.roll(hist_w, 1).at[0].set(jnp.max(jnp.abs(W)))
        hist_g = jnp.roll(hist_g, 1).at[0].set(jnp.max(jnp.abs(g)))
        W = W - lr * dW
        losses.append(loss)
        sxs.append(s_x)
        sws.append(s_w)
        sgs.append(s_g)
    return jnp.concatenate([jnp.stack(losses), jnp.stack(sxs), jnp.stack(sws), jnp.stack(sgs)]).astype(
        jnp.float32
    )
