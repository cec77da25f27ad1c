"""loss_scaling: static loss scaling with fp16 compute and fp32 master weights.

Read problems/loss_scaling/README.md for the exact recipe, the inputs and the tolerance.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax  # optional: clip_by_global_norm and sgd fit this recipe
from jax.typing import ArrayLike


def train_with_loss_scaling(
    x: ArrayLike,
    y: ArrayLike,
    w: ArrayLike,
    lr: float,
    loss_scale: float,
    max_norm: float,
    num_steps: int,
) -> jax.Array:
    """Trains pred = x @ w (no bias) for num_steps loss-scaled SGD steps.

    Args:
        x: float32 (N, D) features, exactly representable in fp16.
        y: float32 (N,) targets (stay in fp32).
        w: float32 (D,) initial fp32 master weights.
        lr: Python float, SGD learning rate.
        loss_scale: Python float S, a power of two (2^16 to 2^18 in the hidden cases).
        max_norm: Python float, global-norm clipping threshold (applied to unscaled grads).
        num_steps: Python int K.

    Returns:
        float32 array of shape (K,): losses[k] is the unscaled fp32 MSE of step k's
        forward pass, before step k's update.
    """
    # TODO: keep the master weights in float32 and S as a float32 scalar (2^16 is inf in fp16).
    # TODO: for each step, inside the function you differentiate:
    #   - cast x and the weights to float16 and take pred16 = x16 @ w16 (fp16 result);
    #   - cast pred16 to float32 and take the MSE against y in float32 (record it);
    #   - return MSE * S (and the MSE as aux, if you like).
    # TODO: take the gradient, cast it to float32, divide by S (before anything else).
    # TODO: clip the global norm: if norm >= max_norm, g = g / norm * max_norm.
    # TODO: SGD in float32: master = master - lr * g.
    # TODO: return the recorded losses as a float32 array of shape (K,).
    raise NotImplementedError("loss_scaling: fill in train_with_loss_scaling")
