"""Mistake: optax.apply_if_finite with max_consecutive_errors=1 gives up on the second of two overflowing
steps in a row and applies its inf/NaN update (every `skipped_steps` case has such a pair); otherwise the
`apply_if_finite` variant: the EMA is updated where the optimizer state says the step was finite."""

from __future__ import annotations

from functools import partial

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

_MODEL = nn.Dense(1, use_bias=False, dtype=jnp.float16, param_dtype=jnp.float32)


def _optimizer(lr, momentum, steps):
    return optax.apply_if_finite(optax.sgd(lr, momentum=momentum), max_consecutive_errors=1)


@partial(jax.jit, static_argnames="steps")
def _step(params, opt_state, ema, xb, yb, lr, momentum, scale, decay, *, steps):
    def loss_fn(p):
        pred = _MODEL.apply(p, xb)[:, 0].astype(jnp.float32)
        loss = jnp.mean((pred - yb) ** 2)
        return loss * scale, loss

    (_, loss), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / scale, grads)
    updates, opt_state = _optimizer(lr, momentum, steps).update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    ok = opt_state.last_finite
    ema = jax.tree.map(lambda e, p: jnp.where(ok, decay * e + (1 - decay) * p, e), ema, params)
    return params, opt_state, ema, loss


def train_with_weight_ema(x, y, w, x_eval, y_eval, lr, momentum, loss_scale, decay):
    """Same signature as the reference; returns float32 (2 * T,)."""
    steps = x.shape[0]
    params = {"params": {"kernel": jnp.asarray(w, jnp.float32)[:, None]}}
    opt_state = _optimizer(lr, momentum, steps).init(params)
    ema = params
    f32 = jnp.float32
    xe = jnp.asarray(x_eval, f32)
    ye = jnp.asarray(y_eval, f32)
    losses, evals = [], []
    for k in range(steps):
        params, opt_state, ema, loss = _step(
            params,
            opt_state,
            ema,
            jnp.asarray(x[k]),
            jnp.asarray(y[k]),
            f32(lr),
            f32(momentum),
            f32(loss_scale),
            f32(decay),
            steps=steps,
        )
        losses.append(loss)
        evals.append(jnp.mean((xe @ ema["params"]["kernel"][:, 0] - ye) ** 2))
    return jnp.concatenate([jnp.stack(losses), jnp.stack(evals)]).astype(jnp.float32)
