"""Variant: optax clip_by_global_norm + sgd, value_and_grad, fp32 params updated by apply_updates."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax


def train_with_loss_scaling(x, y, w, lr, loss_scale, max_norm, num_steps):
    x16 = jnp.asarray(x).astype(jnp.float16)
    y32 = jnp.asarray(y, dtype=jnp.float32)
    params = {"w": jnp.asarray(w, dtype=jnp.float32)}
    scale = jnp.asarray(loss_scale, dtype=jnp.float32)
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(learning_rate=lr))
    opt_state = tx.init(params)

    def objective(p):
        p16 = jax.tree.map(lambda a: a.astype(jnp.float16), p)
        out = jnp.dot(x16, p16["w"])
        mse = jnp.mean(jnp.square(out.astype(jnp.float32) - y32))
        return mse * scale, mse

    history = []
    for _ in range(num_steps):
        (_, mse), grads = jax.value_and_grad(objective, has_aux=True)(params)
        grads = jax.tree.map(lambda g: g.astype(jnp.float32) / scale, grads)
        updates, opt_state = tx.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        history.append(mse)
    return jnp.array(history, dtype=jnp.float32)
