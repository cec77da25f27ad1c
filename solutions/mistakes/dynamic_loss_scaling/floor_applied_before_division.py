"""Mistake: I write the back-off as max(min_scale, scale) / factor, applying the floor before dividing, so the scale can drop below min_scale."""

import jax
import jax.numpy as jnp
import numpy as np
import optax


def train_with_dynamic_loss_scaling(x, y, w, lr, momentum, init_scale, period, factor, min_scale, num_steps):
    x16 = jnp.asarray(x).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    w = jnp.asarray(w, jnp.float32)

    def make_tx(lr, momentum):
        return optax.apply_if_finite(optax.sgd(lr, momentum=momentum), max_consecutive_errors=num_steps)

    state = make_tx(lr, momentum).init(w)

    @jax.jit
    def step(w, state, s, lr, momentum):
        def f(w):
            pred = (x16 @ w.astype(jnp.float16)).astype(jnp.float32)
            loss = jnp.mean((pred - y) ** 2)
            return loss * s, loss

        grad, loss = jax.grad(f, has_aux=True)(w)
        updates, state = make_tx(lr, momentum).update(grad / s, state, w)
        return optax.apply_updates(w, updates), state, loss

    scale, counter = float(init_scale), 0
    losses, scales = [], []
    for _ in range(num_steps):
        scales.append(scale)
        w, state, loss = step(w, state, jnp.float32(scale), lr, momentum)
        losses.append(loss)
        if state.last_finite:
            counter += 1
            if counter == period:
                scale, counter = scale * factor, 0
        else:
            scale, counter = max(min_scale, scale) / factor, 0
    return jnp.concatenate([jnp.stack(losses), jnp.asarray(scales, jnp.float32)]).astype(jnp.float32)
