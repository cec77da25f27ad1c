"""Mistake: after each optimizer step I reset the optimizer state together with the accumulator, so the momentum buffer starts from zero every step."""

import jax
import jax.numpy as jnp
import numpy as np
import optax


def scaled_loss(p, xb, yb, S):
    pred = (xb.astype(jnp.float16) @ p.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - yb) ** 2)
    return loss * S, loss


grad_fn = jax.jit(jax.value_and_grad(scaled_loss, has_aux=True))


def train_with_grad_accumulation(x, y, w, lr, momentum, loss_scale, max_norm, accum_steps):
    S = jnp.float32(loss_scale)
    params = jnp.asarray(w, jnp.float32)
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))

    acc, opt_state = jnp.zeros_like(params), tx.init(params)
    losses = []
    for i in range(x.shape[0]):
        (_, loss), grad = grad_fn(params, x[i], y[i], S)
        losses.append(loss)
        acc = acc + grad
        if (i + 1) % accum_steps == 0:
            updates, opt_state = tx.update(acc / (accum_steps * S), opt_state, params)
            params = optax.apply_updates(params, updates)
            acc, opt_state = jnp.zeros_like(params), tx.init(params)
    return jnp.stack(losses).astype(jnp.float32)
