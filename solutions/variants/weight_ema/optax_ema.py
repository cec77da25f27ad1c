"""Correct variant: optax.ema(decay, debias=False) started from the initial weights; eager Python loop that
skips both optax updates with a Python `if` when the gradients are not finite."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax


@jax.jit
def _grads_and_loss(params, xb, yb, scale):
    def scaled(p):
        pred = jnp.matmul(xb.astype(jnp.float16), p.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean(jnp.square(pred - yb))
        return loss * scale, loss

    (_, loss), g = jax.value_and_grad(scaled, has_aux=True)(params)
    return g / scale, loss


def train_with_weight_ema(x, y, w, x_eval, y_eval, lr, momentum, loss_scale, decay):
    """Same signature as the reference; returns float32 (2 * T,)."""
    params = jnp.asarray(w, jnp.float32)
    scale = jnp.float32(loss_scale)
    opt = optax.sgd(lr, momentum=momentum)
    opt_state = opt.init(params)
    averager = optax.ema(decay, debias=False)
    # optax.ema's own init starts at zero: start its average from a copy of the initial weights instead.
    ema_state = optax.EmaState(count=jnp.zeros([], jnp.int32), ema=params)

    x_eval = jnp.asarray(x_eval, jnp.float32)
    y_eval = jnp.asarray(y_eval, jnp.float32)
    losses, evals = [], []
    for k in range(len(x)):
        g, loss = _grads_and_loss(params, jnp.asarray(x[k]), jnp.asarray(y[k]), scale)
        if bool(jnp.all(jnp.isfinite(g))):
            updates, opt_state = opt.update(g, opt_state, params)
            params = optax.apply_updates(params, updates)
            _, ema_state = averager.update(params, ema_state)
        losses.append(loss)
        evals.append(jnp.mean(jnp.square(x_eval @ ema_state.ema - y_eval)))
    return jnp.asarray(jnp.stack(losses + evals), jnp.float32)
