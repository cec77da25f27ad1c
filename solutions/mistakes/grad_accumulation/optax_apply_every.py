"""Mistake: I used optax.apply_every(K) at the end of the chain for the accumulation, which runs clip and sgd on every micro-batch and sums their updates."""

import jax
import jax.numpy as jnp
import numpy as np
import optax


def train_with_grad_accumulation(x, y, w, lr, momentum, loss_scale, max_norm, accum_steps):
    S = jnp.float32(loss_scale)
    params = jnp.asarray(w, jnp.float32)

    def make_tx(lr, momentum, max_norm):
        return optax.chain(
            optax.clip_by_global_norm(max_norm),
            optax.sgd(lr, momentum=momentum),
            optax.apply_every(accum_steps),
        )

    state = make_tx(lr, momentum, max_norm).init(params)

    def scaled_loss(p, xb, yb, S):
        pred = (xb.astype(jnp.float16) @ p.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - yb) ** 2)
        return loss / accum_steps * S, loss

    @jax.jit
    def step(p, state, xb, yb, lr, momentum, max_norm, S):
        grad, loss = jax.grad(scaled_loss, has_aux=True)(p, xb, yb, S)
        updates, state = make_tx(lr, momentum, max_norm).update(grad / S, state, p)
        return optax.apply_updates(p, updates), state, loss

    losses = []
    for i in range(x.shape[0]):
        params, state, loss = step(params, state, x[i], y[i], lr, momentum, max_norm, S)
        losses.append(loss)
    return jnp.stack(losses)
