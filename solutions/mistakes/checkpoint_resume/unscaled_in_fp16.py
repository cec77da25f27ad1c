"""Mistake: I take the gradient of the fp16 copy and divide it by the scale (as a Python float) while it is still fp16, then cast to fp32."""

import os

import jax
import jax.numpy as jnp
import numpy as np
import optax
import orbax.checkpoint as ocp


def scaled_loss(w16, s, x16, y):
    pred = (x16 @ w16).astype(jnp.float32)
    loss = jnp.mean((pred - y) ** 2)
    return loss * s, loss


grad_fn = jax.jit(jax.grad(scaled_loss, has_aux=True))


def train_segment(x, y, w, lr, momentum, decay_every, init_scale, period, start_step, stop_step, ckpt_dir):
    x16 = jnp.asarray(x).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    w = jnp.asarray(w, jnp.float32)
    fresh = {
        "params": w,
        "opt_state": optax.sgd(lr, momentum=momentum).init(w),
        "scale": jnp.float32(init_scale),
        "counter": jnp.int32(0),
        "step": jnp.int32(0),
    }
    path = os.path.join(ckpt_dir, "state")
    checkpointer = ocp.StandardCheckpointer()
    if start_step == 0:
        state = fresh
    else:
        state = checkpointer.restore(path, jax.tree.map(ocp.utils.to_shape_dtype_struct, fresh))
    params, opt_state = state["params"], state["opt_state"]
    scale, counter = float(state["scale"]), int(state["counter"])

    losses, scales = [], []
    for k in range(start_step, stop_step):
        lr_k = lr * 0.5 ** (k // decay_every)
        scales.append(scale)
        g16, loss = grad_fn(params.astype(jnp.float16), jnp.float32(scale), x16, y)
        losses.append(loss)
        g = (g16 / scale).astype(jnp.float32)
        if jnp.all(jnp.isfinite(g)):
            updates, opt_state = optax.sgd(lr_k, momentum=momentum).update(g, opt_state, params)
            params = optax.apply_updates(params, updates)
            counter += 1
            if counter == period:
                scale = scale * 2 if np.isfinite(scale * 2) else scale
                counter = 0
        else:
            scale = max(1.0, scale / 2)
            counter = 0
    state = {
        "params": params,
        "opt_state": opt_state,
        "scale": jnp.float32(scale),
        "counter": jnp.int32(counter),
        "step": jnp.int32(stop_step),
    }
    checkpointer.save(path, state, force=True)
    checkpointer.wait_until_finished()
    return jnp.concatenate([jnp.asarray(losses, jnp.float32), jnp.asarray(scales, jnp.float32)])
