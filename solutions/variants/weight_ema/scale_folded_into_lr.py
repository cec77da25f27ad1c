"""Accepted form (not graded): the gradient is never divided by `S`; the scale is folded into the learning
rate (`optax.sgd(lr / S)`) and the finiteness test runs on the scaled gradient. With `S`, `lr` and the
momentum powers of two, the numbers are the recipe's."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax


def train_with_weight_ema(x, y, w, x_eval, y_eval, lr, momentum, loss_scale, decay):
    S = jnp.float32(loss_scale)
    w = jnp.asarray(w, jnp.float32)
    opt = optax.sgd(lr / loss_scale, momentum=momentum)
    state = opt.init(w)
    ema = w

    def loss_fn(w, xk, yk):
        pred = (xk.astype(jnp.float16) @ w.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - yk) ** 2)
        return loss * S, loss

    gfn = jax.jit(jax.grad(loss_fn, has_aux=True))
    L, E = [], []
    for k in range(x.shape[0]):
        scaled_grad, loss = gfn(w, x[k], y[k])
        L.append(loss)
        if jnp.all(jnp.isfinite(scaled_grad)):
            upd, state = opt.update(scaled_grad, state, w)
            w = optax.apply_updates(w, upd)
            ema = decay * ema + (1 - decay) * w
        E.append(jnp.mean((x_eval @ ema - y_eval) ** 2))
    return jnp.concatenate([jnp.stack(L), jnp.stack(E)]).astype(jnp.float32)
