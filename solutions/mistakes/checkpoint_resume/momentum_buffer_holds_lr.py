"""Mistake: I fold the learning rate into the momentum buffer, m = momentum * m + lr_k * g and w = w - m, so after a decay the buffer still carries the old learning rate."""

import os

import jax
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp


def loss_fn(p, s, x, y):
    pred16 = jnp.dot(x.astype(jnp.float16), p.astype(jnp.float16))
    loss = jnp.mean(jnp.square(pred16.astype(jnp.float32) - y))
    return loss * s, loss


@jax.jit
def step(state, k, lr, momentum, decay_every, period, x, y):
    lr_k = lr * jnp.float32(0.5) ** (k // decay_every)
    s = state["scale"]
    (_, loss), grad = jax.value_and_grad(loss_fn, has_aux=True)(state["params"], s, x, y)
    g = grad / s
    finite = jnp.all(jnp.isfinite(g))
    m_old = state["opt_state"]["trace"]
    m_new = momentum * m_old + lr_k * g
    w_new = state["params"] - m_new
    c_new = state["counter"] + 1
    grow = c_new == period
    s_grow = jnp.where(grow, jnp.where(jnp.isfinite(2 * s), 2 * s, s), s)
    c_grow = jnp.where(grow, 0, c_new)
    new = {
        "params": jnp.where(finite, w_new, state["params"]),
        "opt_state": {"trace": jnp.where(finite, m_new, m_old)},
        "scale": jnp.where(finite, s_grow, jnp.maximum(1.0, s / 2)).astype(jnp.float32),
        "counter": jnp.where(finite, c_grow, 0).astype(jnp.int32),
        "step": state["step"] + 1,
    }
    return new, loss, s


def train_segment(x, y, w, lr, momentum, decay_every, init_scale, period, start_step, stop_step, ckpt_dir):
    x = jnp.asarray(x, jnp.float32)
    y = jnp.asarray(y, jnp.float32)
    w = jnp.asarray(w, jnp.float32)
    fresh = {
        "params": w,
        "opt_state": {"trace": jnp.zeros_like(w)},
        "scale": jnp.float32(init_scale),
        "counter": jnp.int32(0),
        "step": jnp.int32(0),
    }
    path = os.path.join(ckpt_dir, "state")
    ckpt = ocp.PyTreeCheckpointer()
    if start_step == 0:
        state = fresh
    else:
        target = jax.tree.map(ocp.utils.to_shape_dtype_struct, fresh)
        state = ckpt.restore(path, item=target)

    losses, scales = [], []
    for k in range(start_step, stop_step):
        state, loss, s = step(state, jnp.int32(k), lr, momentum, decay_every, period, x, y)
        losses.append(loss)
        scales.append(s)
    state = dict(state, step=jnp.int32(stop_step))
    ckpt.save(path, state, force=True)
    return jnp.concatenate([jnp.stack(losses), jnp.stack(scales)]).astype(jnp.float32)
