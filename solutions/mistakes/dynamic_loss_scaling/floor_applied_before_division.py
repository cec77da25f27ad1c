"""Mistake: I write the back-off as max(min_scale, scale) / factor, applying the floor before dividing, so the scale can drop below min_scale."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax


def make_tx(lr, momentum, num_steps):
    return optax.apply_if_finite(optax.sgd(lr, momentum=momentum), max_consecutive_errors=num_steps)


@functools.partial(jax.jit, static_argnames="num_steps")
def step(w, state, s, lr, momentum, x16, y, num_steps):
    def f(w):
        pred = (x16 @ w.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - y) ** 2)
        return loss * s, loss

    grad, loss = jax.grad(f, has_aux=True)(w)
    updates, state = make_tx(lr, momentum, num_steps).update(grad / s, state, w)
    return optax.apply_updates(w, updates), state, loss


def train_with_dynamic_loss_scaling(x, y, w, lr, momentum, init_scale, period, factor, min_scale, num_steps):
    x16 = jnp.asarray(x).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    w = jnp.asarray(w, jnp.float32)

    state = make_tx(lr, momentum, num_steps).init(w)

    scale, counter = float(init_scale), 0
    losses, scales = [], []
    for _ in range(num_steps):
        scales.append(scale)
        w, state, loss = step(w, state, jnp.float32(scale), lr, momentum, x16, y, num_steps)
        losses.append(loss)
        if state.last_finite:
            counter += 1
            if counter == period:
                scale, counter = scale * factor, 0
        else:
            scale, counter = max(min_scale, scale) / factor, 0
    return jnp.concatenate([jnp.stack(losses), jnp.asarray(scales, jnp.float32)]).astype(jnp.float32)
