"""Pitfall ema_in_16bit (form start_rounded_fp16): the EMA starts as the weights rounded through float16,
then every update runs in fp32: off by the rounding of the start."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax


def loss_fn(w, xk, yk, S):
    pred16 = xk.astype(jnp.float16) @ w.astype(jnp.float16)
    loss = jnp.mean((pred16.astype(jnp.float32) - yk) ** 2)
    return loss * S, loss


grad_fn = jax.jit(jax.grad(loss_fn, has_aux=True))


def train_with_weight_ema(x, y, w, x_eval, y_eval, lr, momentum, loss_scale, decay):
    w = jnp.asarray(w, jnp.float32)
    opt = optax.sgd(lr, momentum=momentum)
    state = opt.init(w)
    S = jnp.float32(loss_scale)
    ema = w.astype(jnp.float16).astype(jnp.float32)

    losses, evals = [], []
    for k in range(x.shape[0]):
        grad, loss = grad_fn(w, jnp.asarray(x[k]), jnp.asarray(y[k]), S)
        losses.append(loss)
        g = grad / S
        if bool(jnp.all(jnp.isfinite(g))):
            updates, state = opt.update(g, state, w)
            w = optax.apply_updates(w, updates)
            ema = decay * ema + (1 - decay) * w
        pass
        evals.append(jnp.mean((x_eval @ ema - y_eval) ** 2))
    return jnp.concatenate([jnp.stack(losses), jnp.stack(evals)]).astype(jnp.float32)
