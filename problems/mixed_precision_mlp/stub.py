"""mixed_precision_mlp: a small MLP with fp16 compute and an fp32 master copy. The recipe is in README.md."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax  # optional: optax.softmax_cross_entropy_with_integer_labels, optax.sgd


def train_mlp(
    pixels: np.ndarray,
    labels: np.ndarray,
    w1: np.ndarray,
    b1: np.ndarray,
    w2: np.ndarray,
    b2: np.ndarray,
    lr: float,
    loss_scale: float,
    num_steps: int,
) -> jax.Array:
    """Trains logits = relu(x @ w1 + b1) @ w2 + b2 for `num_steps` loss-scaled SGD steps.

    Args:
        pixels: float32 (N, 64), flattened 8x8 images with values in [0, 1].
        labels: int32 (N,), digit classes 0..9.
        w1: float32 (64, H), b1: float32 (H,), w2: float32 (H, 10), b2: float32 (10,): the initial fp32
            master params.
        lr: SGD learning rate (a power of two).
        loss_scale: static loss scale S (a power of two).
        num_steps: number of SGD steps.

    Returns:
        float32 (num_steps,): the unscaled fp32 mean cross-entropy of every step's forward pass, computed
        before that step's update.
    """
    # TODO 1: the fp32 master params (a dict or tuple of float32 arrays), x16 = pixels cast to float16.
    # TODO 2: a loss function of the fp32 master params: cast each param to float16; hidden = jax.nn.relu(
    #         x16 @ w1_16 + b1_16) and logits16 = hidden @ w2_16 + b2_16, all in float16; cast the logits
    #         to float32; the mean softmax cross-entropy in float32; return loss * S (and loss as aux).
    # TODO 3: each step: the gradient of the scaled loss with respect to the fp32 master params, divided
    #         by S in float32; master = master - lr * grad in float32; keep the unscaled loss.
    # TODO 4: return the losses as a float32 array of shape (num_steps,).
    raise NotImplementedError("mixed_precision_mlp: fill in train_mlp")
