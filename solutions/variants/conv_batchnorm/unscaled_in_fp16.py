"""Correct variant: the scaled gradient cast to fp16 and divided by `S` in fp16 (as mixed-precision
libraries unscale fp16 gradients), then cast back to fp32 for the update. `S` is a power of two and no
scaled gradient of the cases overflows fp16 or reaches its subnormal range, so the division is exact and
only the gradient's rounding to fp16 remains.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

F16 = jnp.float16
F32 = jnp.float32
AXES = (0, 1, 2)


def _conv16(x16, kernel):
    """The fp16 3x3 VALID convolution, NHWC input and HWIO kernel, fp16 result."""
    return jax.lax.conv_general_dilated(
        x16, kernel.astype(F16), (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )


def _head_losses(params, y16, labels):
    """ReLU, mean over the positions and the dense head in fp16; each image's cross-entropy in fp32."""
    pooled = jnp.mean(jax.nn.relu(y16), axis=(1, 2))  # fp16
    logits = (pooled @ params["dense_w"].astype(F16) + params["dense_b"].astype(F16)).astype(F32)
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels)


def _normalize(params, z, mean, var, epsilon):
    """The fp32 normalization of the fp32 conv output, cast back to fp16."""
    y = (z - mean) * (jax.lax.rsqrt(var + epsilon) * params["gamma"]) + params["beta"]
    return y.astype(F16)


def _scaled_loss(params, x16, labels, epsilon, loss_scale):
    z = _conv16(x16, params["kernel"]).astype(F32)
    mean = jnp.mean(z, axis=AXES)
    var = jnp.mean(jnp.square(z - mean), axis=AXES)  # biased, two passes, fp32
    loss = _head_losses(params, _normalize(params, z, mean, var, epsilon), labels).mean()
    return loss * loss_scale, (loss, mean, var)


@jax.jit
def _step(params, stats, x16, labels, lr, momentum, epsilon, loss_scale):
    grads, (loss, mean, var) = jax.grad(_scaled_loss, has_aux=True)(params, x16, labels, epsilon, loss_scale)
    s16 = loss_scale.astype(F16)
    params = jax.tree.map(lambda p, g: p - lr * (g.astype(F16) / s16).astype(F32), params, grads)
    stats = {
        "mean": momentum * stats["mean"] + (1 - momentum) * mean,
        "var": momentum * stats["var"] + (1 - momentum) * var,
    }
    return params, stats, loss


@jax.jit
def _eval_losses(params, stats, x16, labels, epsilon):
    z = _conv16(x16, params["kernel"]).astype(F32)
    return _head_losses(params, _normalize(params, z, stats["mean"], stats["var"], epsilon), labels)


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
    """Trains for T = images.shape[0] steps; returns float32 (T + 2 C + E,): the losses, the running mean
    and variance, the evaluation losses of the E eval images."""
    params = {
        name: jnp.asarray(p, F32)
        for name, p in {
            "kernel": kernel,
            "gamma": gamma,
            "beta": beta,
            "dense_w": dense_w,
            "dense_b": dense_b,
        }.items()
    }
    stats = {"mean": jnp.asarray(running_mean, F32), "var": jnp.asarray(running_var, F32)}
    lr, momentum, epsilon, loss_scale = F32(lr), F32(momentum), F32(epsilon), F32(loss_scale)
    x16 = jnp.asarray(images, F32).astype(F16)
    labels = jnp.asarray(labels, jnp.int32)
    losses = []
    for k in range(x16.shape[0]):
        params, stats, loss = _step(params, stats, x16[k], labels[k], lr, momentum, epsilon, loss_scale)
        losses.append(loss)
    eval_x16 = jnp.asarray(eval_images, F32).astype(F16)
    eval_losses = _eval_losses(params, stats, eval_x16, jnp.asarray(eval_labels, jnp.int32), epsilon)
    return jnp.concatenate([jnp.stack(losses), stats["mean"], stats["var"], eval_losses]).astype(F32)
