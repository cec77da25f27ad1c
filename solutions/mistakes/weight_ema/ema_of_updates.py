"""Mistake: optax.ema chained after optax.sgd averages the updates (a second momentum) instead of keeping an
average of the weights, and the trained weights are evaluated."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


def _scaled_loss(p, xb, yb, scale):
    pred = (xb.astype(jnp.float16) @ p.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - yb) ** 2)
    return loss * scale, loss


_grad_fn = jax.jit(jax.value_and_grad(_scaled_loss, has_aux=True))


def train_with_weight_ema(x, y, w, x_eval, y_eval, lr, momentum, loss_scale, decay):
    """Same signature as the reference; returns float32 (2 * T,)."""
    f32 = jnp.float32
    params = jnp.asarray(w, f32)
    scale = f32(loss_scale)

    def make_tx(lr, momentum, decay):
        return optax.chain(optax.sgd(lr, momentum=momentum), optax.ema(decay))

    state = make_tx(lr, momentum, decay).init(params)

    @jax.jit
    def update(grads, state, params, lr, momentum, decay):
        return make_tx(lr, momentum, decay).update(grads, state, params)

    losses, evals = [], []
    for k in range(x.shape[0]):
        (_, loss), grads = _grad_fn(params, jnp.asarray(x[k], f32), jnp.asarray(y[k], f32), scale)
        grads = grads / scale
        if bool(jnp.all(jnp.isfinite(grads))):
            updates, state = update(grads, state, params, lr, momentum, decay)
            params = optax.apply_updates(params, updates)
        losses.append(loss)
        evals.append(jnp.mean((jnp.asarray(x_eval, f32) @ params - jnp.asarray(y_eval, f32)) ** 2))
    return jnp.concatenate([jnp.stack(losses), jnp.stack(evals)]).astype(f32)
