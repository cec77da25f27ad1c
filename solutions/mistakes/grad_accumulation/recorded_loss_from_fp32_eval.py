"""Mistake: I train with the fp16 forward pass but record each loss from a separate fp32 evaluation x @ w, without the fp16 rounding of pred."""

import jax
import jax.numpy as jnp
import numpy as np
import optax


def scaled_loss(p, xb, yb, S):
    pred = (xb.astype(jnp.float16) @ p.astype(jnp.float16)).astype(jnp.float32)
    return jnp.mean((pred - yb) ** 2) * S


grad_fn = jax.jit(jax.grad(scaled_loss))


def train_with_grad_accumulation(x, y, w, lr, momentum, loss_scale, max_norm, accum_steps):
    S = jnp.float32(loss_scale)
    params = jnp.asarray(w, jnp.float32)
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))
    opt_state = tx.init(params)

    acc = jnp.zeros_like(params)
    losses = []
    for i in range(x.shape[0]):
        losses.append(jnp.mean((jnp.asarray(x[i]) @ params - y[i]) ** 2))
        acc = acc + grad_fn(params, x[i], y[i], S)
        if (i + 1) % accum_steps == 0:
            updates, opt_state = tx.update(acc / (accum_steps * S), opt_state, params)
            params = optax.apply_updates(params, updates)
            acc = jnp.zeros_like(params)
    return jnp.stack(losses).astype(jnp.float32)
