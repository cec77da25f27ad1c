"""Mistake: I made the fp16 copy of the weights once per step, outside the function I differentiate, so jax.grad sees no dependence on the fp32 weights."""

import jax
import jax.numpy as jnp
import numpy as np
import optax


def train_with_grad_accumulation(x, y, w, lr, momentum, loss_scale, max_norm, accum_steps):
    S = jnp.float32(loss_scale)
    w = jnp.asarray(w, jnp.float32)
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))
    opt_state = tx.init(w)
    acc = jnp.zeros_like(w)
    losses = []
    w16 = w.astype(jnp.float16)
    for i in range(x.shape[0]):
        x16 = jnp.asarray(x[i]).astype(jnp.float16)

        def scaled_loss(w_master):
            pred = (x16 @ w16).astype(jnp.float32)
            loss = jnp.mean((pred - y[i]) ** 2)
            return loss * S, loss

        (_, loss), grad = jax.value_and_grad(scaled_loss, has_aux=True)(w)
        losses.append(loss)
        acc = acc + grad
        if (i + 1) % accum_steps == 0:
            g = acc / (accum_steps * S)
            updates, opt_state = tx.update(g, opt_state, w)
            w = optax.apply_updates(w, updates)
            w16 = w.astype(jnp.float16)
            acc = jnp.zeros_like(w)
    return jnp.stack(losses)
