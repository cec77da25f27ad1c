"""Pitfall decay_swapped (form residual): the residual form with the decay on the wrong side:
ema = ema + d * (w - ema), the new weights weighted by d."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax


def _loss(w, x16, y, scale):
    pred = (x16 @ w.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - y) ** 2)
    return loss * scale, loss


@jax.jit
def _train_step(w, opt_state, x, y, lr, momentum, scale):
    (_, loss), grads = jax.value_and_grad(_loss, has_aux=True)(w, x.astype(jnp.float16), y, scale)
    grads = grads / scale
    finite = jnp.all(jnp.isfinite(grads))
    updates, new_state = optax.sgd(lr, momentum=momentum).update(grads, opt_state, w)
    new_w = jnp.where(finite, optax.apply_updates(w, updates), w)
    new_state = jax.tree.map(lambda a, b: jnp.where(finite, a, b), new_state, opt_state)
    return new_w, new_state, loss, finite


def train_with_weight_ema(x, y, w, x_eval, y_eval, lr, momentum, loss_scale, decay):
    """Same signature as the reference; returns float32 (2 * T,)."""
    f32 = jnp.float32
    w = jnp.asarray(w, f32)
    x_eval = jnp.asarray(x_eval, f32)
    y_eval = jnp.asarray(y_eval, f32)
    opt_state = optax.sgd(lr, momentum=momentum).init(w)
    ema = w
    losses, evals = [], []
    for k in range(x.shape[0]):
        w, opt_state, loss, finite = _train_step(
            w,
            opt_state,
            jnp.asarray(x[k], f32),
            jnp.asarray(y[k], f32),
            f32(lr),
            f32(momentum),
            f32(loss_scale),
        )
        if finite:
            ema = ema + decay * (w - ema)
        losses.append(loss)
        evals.append(jnp.mean((x_eval @ ema - y_eval) ** 2))
    return jnp.concatenate([jnp.stack(losses), jnp.stack(evals)]).astype(f32)
