"""Mistake: I clipped with optax.clip(max_norm), which clips each gradient entry to [-max_norm, max_norm], instead of optax.clip_by_global_norm."""

import jax
import jax.numpy as jnp
import numpy as np
import optax


def train_with_grad_accumulation(x, y, w, lr, momentum, loss_scale, max_norm, accum_steps):
    S = jnp.float32(loss_scale)
    params = jnp.asarray(w, jnp.float32)

    def make_tx(lr, momentum, max_norm):
        return optax.MultiSteps(
            optax.chain(optax.clip(max_norm), optax.sgd(lr, momentum=momentum)),
            every_k_schedule=accum_steps,
        )

    state = make_tx(lr, momentum, max_norm).init(params)

    def scaled_loss(p, xb, yb, S):
        pred = (xb.astype(jnp.float16) @ p.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean((pred - yb) ** 2)
        return loss * S, loss

    @jax.jit
    def step(p, state, xb, yb, lr, momentum, max_norm, S):
        (_, loss), grad = jax.value_and_grad(scaled_loss, has_aux=True)(p, xb, yb, S)
        updates, state = make_tx(lr, momentum, max_norm).update(grad / S, state, p)
        return optax.apply_updates(p, updates), state, loss

    losses = []
    for i in range(x.shape[0]):
        params, state, loss = step(params, state, x[i], y[i], lr, momentum, max_norm, S)
        losses.append(loss)
    return jnp.asarray(losses, jnp.float32)
