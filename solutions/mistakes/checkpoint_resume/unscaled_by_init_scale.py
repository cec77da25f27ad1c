"""Mistake: I unscale the gradient by init_scale, the input, instead of by the current loss scale of the step."""

import os

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import orbax.checkpoint as ocp


def train_segment(x, y, w, lr, momentum, decay_every, init_scale, period, start_step, stop_step, ckpt_dir):
    model = nn.Dense(1, use_bias=False, dtype=jnp.float16)
    params = {"params": {"kernel": jnp.asarray(w, jnp.float32)[:, None]}}
    tx = optax.inject_hyperparams(optax.sgd)(learning_rate=lr, momentum=momentum)
    fresh = {
        "params": jnp.asarray(w, jnp.float32),
        "opt_state": tx.init(params),
        "scale": jnp.float32(init_scale),
        "counter": jnp.int32(0),
        "step": jnp.int32(0),
    }
    path = os.path.join(ckpt_dir, "state")
    if start_step == 0:
        state = fresh
    else:
        with ocp.StandardCheckpointer() as c:
            state = c.restore(path, jax.tree.map(ocp.utils.to_shape_dtype_struct, fresh))
    xj, yj = jnp.asarray(x, jnp.float32), jnp.asarray(y, jnp.float32)

    def loss_fn(p, s):
        pred = model.apply(p, xj)[:, 0].astype(jnp.float32)
        loss = jnp.mean((pred - yj) ** 2)
        return loss * s, loss

    @jax.jit
    def step(p, opt_state, s, c, lr_k, init_scale, period):
        grads, loss = jax.grad(loss_fn, has_aux=True)(p, s)
        g = jax.tree.map(lambda t: t / init_scale, grads)
        finite = jnp.all(jnp.isfinite(g["params"]["kernel"]))

        def good(_):
            st = opt_state
            st.hyperparams["learning_rate"] = lr_k
            updates, st = tx.update(g, st, p)
            c1 = c + 1
            grow = c1 == period
            s2 = jnp.where(grow & jnp.isfinite(2 * s), 2 * s, s)
            return optax.apply_updates(p, updates), st, s2, jnp.where(grow, 0, c1).astype(jnp.int32)

        def bad(_):
            return p, opt_state, jnp.maximum(jnp.float32(1), s / 2), jnp.int32(0)

        return jax.lax.cond(finite, good, bad, None) + (loss,)

    p = {"params": {"kernel": state["params"][:, None]}}
    opt_state, s, c = state["opt_state"], state["scale"], state["counter"]
    losses, scales = [], []
    for k in range(start_step, stop_step):
        scales.append(s)
        lr_k = jnp.float32(lr * 0.5 ** (k // decay_every))
        p, opt_state, s, c, loss = step(p, opt_state, s, c, lr_k, init_scale, period)
        losses.append(loss)
    out = {
        "params": p["params"]["kernel"][:, 0],
        "opt_state": opt_state,
        "scale": jnp.float32(s),
        "counter": jnp.int32(c),
        "step": jnp.int32(stop_step),
    }
    with ocp.StandardCheckpointer() as c:
        c.save(path, out, force=True)
    return jnp.concatenate([jnp.stack(losses), jnp.stack(scales)]).astype(jnp.float32)
