"""Mistake: I used the 1/2 * mean squared error convention for the loss (and recorded it), so the loss and its gradient are half the prescribed ones."""

import jax
import jax.numpy as jnp
import numpy as np
import optax


def scaled_loss(p, xb, yb, S):
    pred = (xb.astype(jnp.float16) @ p.astype(jnp.float16)).astype(jnp.float32)
    loss = 0.5 * jnp.mean((pred - yb) ** 2)
    return loss * S, loss


grad_fn = jax.jit(jax.value_and_grad(scaled_loss, has_aux=True))


def train_with_grad_accumulation(x, y, w, lr, momentum, loss_scale, max_norm, accum_steps):
    S = jnp.float32(loss_scale)
    params = jnp.asarray(w, jnp.float32)
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))
    opt_state = tx.init(params)

    acc = jnp.zeros_like(params)
    losses = []
    for i in range(x.shape[0]):
        (_, loss), grad = grad_fn(params, x[i], y[i], S)
        losses.append(loss)
        acc = acc + grad
        if (i + 1) % accum_steps == 0:
            updates, opt_state = tx.update(acc / (accum_steps * S), opt_state, params)
            params = optax.apply_updates(params, updates)
            acc = jnp.zeros_like(params)
    return jnp.stack(losses).astype(jnp.float32)
