"""Mistake: I clipped with optax.clip(max_norm), which clips each gradient entry to [-max_norm, max_norm], instead of optax.clip_by_global_norm."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax


def make_tx(lr, momentum, max_norm, accum_steps):
    return optax.MultiSteps(
        optax.chain(optax.clip(max_norm), optax.sgd(lr, momentum=momentum)),
        every_k_schedule=accum_steps,
    )


def scaled_loss(p, xb, yb, S):
    pred = (xb.astype(jnp.float16) @ p.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - yb) ** 2)
    return loss * S, loss


@functools.partial(jax.jit, static_argnames="accum_steps")
def step(p, state, xb, yb, lr, momentum, max_norm, S, accum_steps):
    (_, loss), grad = jax.value_and_grad(scaled_loss, has_aux=True)(p, xb, yb, S)
    updates, state = make_tx(lr, momentum, max_norm, accum_steps).update(grad / S, state, p)
    return optax.apply_updates(p, updates), state, loss


def train_with_grad_accumulation(x, y, w, lr, momentum, loss_scale, max_norm, accum_steps):
    S = jnp.float32(loss_scale)
    params = jnp.asarray(w, jnp.float32)
    state = make_tx(lr, momentum, max_norm, accum_steps).init(params)

    losses = []
    for i in range(x.shape[0]):
        params, state, loss = step(params, state, x[i], y[i], lr, momentum, max_norm, S, accum_steps)
        losses.append(loss)
    return jnp.asarray(losses, jnp.float32)
