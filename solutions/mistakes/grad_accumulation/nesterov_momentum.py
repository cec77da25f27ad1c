"""Mistake: I used optax.sgd with nesterov=True, thinking Nesterov is the usual momentum."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax


def make_tx(lr, momentum, max_norm):
    return optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum, nesterov=True))


def scaled_loss(p, xb, yb, S):
    pred = jnp.dot(xb.astype(jnp.float16), p.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - yb) ** 2)
    return loss * S, loss


grad_fn = jax.jit(jax.value_and_grad(scaled_loss, has_aux=True))


@functools.partial(jax.jit, static_argnames="accum_steps")
def apply(acc, opt_state, params, lr, momentum, max_norm, S, accum_steps):
    tx = make_tx(lr, momentum, max_norm)
    updates, opt_state = tx.update(acc / (accum_steps * S), opt_state, params)
    return optax.apply_updates(params, updates), opt_state


def train_with_grad_accumulation(x, y, w, lr, momentum, loss_scale, max_norm, accum_steps):
    S = jnp.float32(loss_scale)
    params = jnp.asarray(w, jnp.float32)
    opt_state = make_tx(lr, momentum, max_norm).init(params)

    acc = jnp.zeros_like(params)
    losses = []
    for i in range(x.shape[0]):
        (_, loss), grad = grad_fn(params, x[i], y[i], S)
        losses.append(loss)
        acc = acc + grad
        if (i + 1) % accum_steps == 0:
            params, opt_state = apply(acc, opt_state, params, lr, momentum, max_norm, S, accum_steps)
            acc = jnp.zeros_like(params)
    return jnp.stack(losses)
