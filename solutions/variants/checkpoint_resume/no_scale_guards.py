"""Accepted form (not graded): the scale halved on an overflow without the floor at 1, S = S / 2, and doubled
on growth without checking that 2 * S is finite; everything else as the recipe."""

import os

import jax
import jax.numpy as jnp
import optax
import orbax.checkpoint as ocp


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
    scale, counter = state["scale"], int(state["counter"])

    def scaled_loss(p, s):
        pred = (x16 @ p.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - y) ** 2)
        return loss * s, loss

    grad_fn = jax.grad(scaled_loss, has_aux=True)
    losses, scales = [], []
    for k in range(start_step, stop_step):
        lr_k = lr * 0.5 ** (k // decay_every)
        scales.append(scale)
        grad, loss = grad_fn(params, scale)
        losses.append(loss)
        g = grad / scale
        if bool(jnp.all(jnp.isfinite(g))):
            tx = optax.sgd(lr_k, momentum=momentum)
            updates, opt_state = tx.update(g, opt_state, params)
            params = optax.apply_updates(params, updates)
            counter += 1
            if counter == period:
                scale = scale * 2
                counter = 0
        else:
            scale = scale / 2
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
    return jnp.concatenate([jnp.stack(losses), jnp.stack(scales)]).astype(jnp.float32)
