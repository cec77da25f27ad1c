"""Mistake: I cast the targets to fp16 along with the features, so the residual is taken against fp16-rounded targets."""

import jax
import jax.numpy as jnp
import numpy as np
import optax


def scaled_loss(p, xb, yb, S):
    pred = (xb @ p.astype(jnp.float16)).astype(jnp.float32)
    loss = jnp.mean((pred - yb.astype(jnp.float32)) ** 2)
    return loss * S, loss


grad_fn = jax.jit(jax.value_and_grad(scaled_loss, has_aux=True))


def train_with_grad_accumulation(x, y, w, lr, momentum, loss_scale, max_norm, accum_steps):
    S = jnp.float32(loss_scale)
    x16 = jnp.asarray(x).astype(jnp.float16)
    y16 = jnp.asarray(y).astype(jnp.float16)
    params = jnp.asarray(w, jnp.float32)
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.sgd(lr, momentum=momentum))
    opt_state = tx.init(params)

    acc = jnp.zeros_like(params)
    losses = []
    for i in range(x16.shape[0]):
        (_, loss), grad = grad_fn(params, x16[i], y16[i], S)
        losses.append(loss)
        acc = acc + grad
        if (i + 1) % accum_steps == 0:
            updates, opt_state = tx.update(acc / (accum_steps * S), opt_state, params)
            params = optax.apply_updates(params, updates)
            acc = jnp.zeros_like(params)
    return jnp.stack(losses).astype(jnp.float32)
