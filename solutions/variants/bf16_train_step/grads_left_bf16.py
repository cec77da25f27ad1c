"""Accepted form (not graded): the gradients taken with respect to a bf16 copy of the params come back
bf16 and are divided by loss_scale and handed to the optimizer without a cast to float32; the float32
params are still the ones updated. The reference's gradients are bf16 values too (the backward pass runs
in bf16 up to the cast), and dividing by a power-of-two scale is exact in bf16, so only `lr * g` is
rounded to bf16 before it is subtracted from the float32 params: a change far below the tolerance here."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


def mixed_precision_step(seed, x, y, lr, loss_scale):
    """Returns the bf16 MSE after one SGD step, as float32 of shape (1,)."""
    model = nn.Dense(1)
    params = model.init(jax.random.PRNGKey(int(seed)), x)["params"]
    state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.sgd(lr))

    def bf16_mse(params_bf16):
        preds = state.apply_fn({"params": params_bf16}, x.astype(jnp.bfloat16)).reshape(-1)
        return jnp.mean((preds - y.astype(jnp.bfloat16)) ** 2)

    def loss_fn(params_bf16):
        return bf16_mse(params_bf16).astype(jnp.float32) * loss_scale

    params_bf16 = jax.tree.map(lambda p: p.astype(jnp.bfloat16), state.params)
    grads = jax.grad(loss_fn)(params_bf16)  # bf16 gradients
    grads = jax.tree.map(lambda g: g / loss_scale, grads)  # still bf16
    state = state.apply_gradients(grads=grads)
    new_bf16 = jax.tree.map(lambda p: p.astype(jnp.bfloat16), state.params)
    return bf16_mse(new_bf16).astype(jnp.float32).reshape(1)
