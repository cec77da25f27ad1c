"""bf16_train_step: one mixed-precision SGD step. The statement is README.md in this folder."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


def mixed_precision_step(seed, x, y, lr, loss_scale):
    """Takes one loss-scaled SGD step with bf16 compute and fp32 master weights.

    Args:
      seed: float; `int(seed)` seeds `jax.random.PRNGKey` for `model.init`.
      x: float32 array of shape (N, D), the inputs.
      y: float32 array of shape (N,), the targets.
      lr: float, the SGD learning rate.
      loss_scale: float (a power of two), the static loss scale.

    Returns:
      float32 array of shape (1,): the bf16 MSE at the updated params, cast to fp32.
    """
    # TODO 1: model = nn.Dense(1); params = model.init(jax.random.PRNGKey(int(seed)), x)["params"] (fp32).
    # TODO 2: a TrainState with apply_fn=model.apply, those params and tx=optax.sgd(lr).
    # TODO 3: loss_fn(params): cast params, x and y to bf16 inside it, forward, reshape(-1), MSE in bf16,
    #         cast the loss to fp32, multiply by loss_scale.
    # TODO 4: grads = jax.grad(loss_fn)(state.params); cast them to fp32 and divide by loss_scale.
    # TODO 5: state = state.apply_gradients(grads=grads).
    # TODO 6: the bf16 MSE at the new params (params, x, y cast to bf16), cast to fp32, shape (1,).
    raise NotImplementedError("bf16_train_step: fill in mixed_precision_step")
