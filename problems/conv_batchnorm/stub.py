"""conv_batchnorm: a conv + batch-norm block with fp16 compute and fp32 statistics. The recipe is in
README.md."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax  # optional: optax.softmax_cross_entropy_with_integer_labels, optax.sgd


def train_conv_bn(
    images: np.ndarray,
    labels: np.ndarray,
    eval_images: np.ndarray,
    eval_labels: np.ndarray,
    kernel: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    dense_w: np.ndarray,
    dense_b: np.ndarray,
    running_mean: np.ndarray,
    running_var: np.ndarray,
    lr: float,
    momentum: float,
    epsilon: float,
    loss_scale: float,
) -> jax.Array:
    """Trains conv -> batch norm -> ReLU -> mean over positions -> dense for T loss-scaled SGD steps.

    Args:
        images: float32 (T, B, H, W, C_in), NHWC; step k trains on images[k].
        labels: int32 (T, B), classes 0..K-1.
        eval_images: float32 (E, H, W, C_in); eval_labels: int32 (E,): scored once, after the run.
        kernel: float32 (3, 3, C_in, C), HWIO, no conv bias. gamma, beta: float32 (C,), the batch-norm scale
            and offset. dense_w: float32 (C, K), dense_b: float32 (K,). All are the initial fp32 master
            params.
        running_mean, running_var: float32 (C,), the running statistics to start from.
        lr: SGD learning rate. momentum: running = momentum * running + (1 - momentum) * batch.
        epsilon: added to the variance inside the square root. loss_scale: static loss scale S.

    Returns:
        float32 (T + 2 C + E,): the fp32 mean cross-entropy of every step (before its update), the running
        mean and the running variance after the run, and the cross-entropy of each evaluation image with the
        running statistics.
    """
    # TODO 1: fp32 master params; fp32 running statistics; the images cast to float16.
    # TODO 2: a loss function of the fp32 params: the 3x3 VALID conv of the fp16 images with the kernel cast
    #         to fp16 (fp16 result); the batch mean and biased variance per channel in float32, computed from
    #         that fp16 output cast to float32; normalize in fp32, scale by gamma, add beta, cast to fp16;
    #         ReLU, mean over the positions, dense in fp16; logits to fp32; mean cross-entropy; times S.
    # TODO 3: each step: fp32 gradients divided by S, SGD on the fp32 params, the running statistics
    #         updated in fp32 with the batch statistics of this step.
    # TODO 4: after the run, the per-image cross-entropy of eval_images normalized with the running
    # statistics.
    raise NotImplementedError("conv_batchnorm: fill in train_conv_bn")
