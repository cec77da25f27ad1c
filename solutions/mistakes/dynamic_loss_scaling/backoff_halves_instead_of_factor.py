"""Mistake: on an overflow I halve the scale (the usual backoff of 0.5) instead of dividing it by factor."""

import jax
import jax.numpy as jnp
import numpy as np
import optax


def scaled_loss(w, s, x16, y):
    pred = (x16 @ w.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - y) ** 2)
    return loss * s, loss


grad_fn = jax.jit(jax.grad(scaled_loss, has_aux=True))


def train_with_dynamic_loss_scaling(x, y, w, lr, momentum, init_scale, period, factor, min_scale, num_steps):
    x16 = jnp.asarray(x).astype(jnp.float16)
    y = jnp.asarray(y, jnp.float32)
    w = jnp.asarray(w, jnp.float32)
    opt = optax.sgd(lr, momentum=momentum)
    opt_state = opt.init(w)
    scale = float(init_scale)
    counter = 0
    backoff = 0.5

    losses, scales = [], []
    for _ in range(num_steps):
        scales.append(scale)
        grad, loss = grad_fn(w, jnp.float32(scale), x16, y)
        losses.append(loss)
        g = grad / jnp.float32(scale)
        if jnp.all(jnp.isfinite(g)):
            updates, opt_state = opt.update(g, opt_state, w)
            w = optax.apply_updates(w, updates)
            counter += 1
            if counter == period:
                scale = scale * factor
                counter = 0
        else:
            scale = max(min_scale, scale * backoff)
            counter = 0
    return jnp.concatenate([jnp.stack(losses), jnp.asarray(scales, jnp.float32)]).astype(jnp.float32)
