"""Correct variant: the whole run is one jitted lax.scan; jmp-style counter (counter + 1) % period."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax


@partial(jax.jit, static_argnames=("period", "num_steps"))
def _run(x, y, w, lr, momentum, init_scale, factor, min_scale, *, period, num_steps):
    x16 = x.astype(jnp.float16)
    opt = optax.sgd(lr, momentum=momentum)

    def loss_fn(w, scale):
        pred = jnp.dot(x16, w.astype(jnp.float16)).astype(jnp.float32)
        loss = jnp.mean(jnp.square(pred - y))
        return scale * loss, loss

    def body(carry, _):
        w, opt_state, scale, counter = carry
        (_, loss), g = jax.value_and_grad(loss_fn, has_aux=True)(w, scale)
        g = g / scale
        ok = jnp.isfinite(g).all()
        updates, new_state = opt.update(g, opt_state, w)
        w = jnp.where(ok, optax.apply_updates(w, updates), w)
        opt_state = jax.tree_util.tree_map(lambda a, b: jnp.where(ok, a, b), new_state, opt_state)
        grown = jnp.where(counter == period - 1, scale * factor, scale)
        grown = jnp.where(jnp.isfinite(grown), grown, scale)
        new_scale = jnp.where(ok, grown, jnp.maximum(min_scale, scale / factor))
        counter = jnp.where(ok, (counter + 1) % period, 0)
        return (w, opt_state, new_scale, counter), (loss, scale)

    carry = (w, opt.init(w), init_scale, jnp.int32(0))
    _, (losses, scales) = jax.lax.scan(body, carry, None, length=num_steps)
    return jnp.concatenate([losses, scales])


def train_with_dynamic_loss_scaling(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    lr: float,
    momentum: float,
    init_scale: float,
    period: int,
    factor: float,
    min_scale: float,
    num_steps: int,
) -> jax.Array:
    """Same signature as the reference; returns float32 (2 * num_steps,)."""
    f32 = jnp.float32
    return _run(
        jnp.asarray(x, f32),
        jnp.asarray(y, f32),
        jnp.asarray(w, f32),
        f32(lr),
        f32(momentum),
        f32(init_scale),
        f32(factor),
        f32(min_scale),
        period=int(period),
        num_steps=int(num_steps),
    )
